// Input errors that name what was wrong and where: the file, the document within it,
// the object and the field path. Every refusal a user sees goes through this shape.

export interface Where {
  /** File path as the user gave it. */
  file?: string;
  /** 1-based document index within a multi-document file (or item index in a List). */
  document?: number;
  /** 1-based line of the document or field, when known. */
  line?: number;
  /** `Kind/namespace/name` or `Kind/name`. */
  object?: string;
  /** Field path, e.g. `spec.levels[0].nodeLabel` or `metadata.annotations["kueue.x-k8s.io/podset-slice-size"]`. */
  field?: string;
}

export function formatWhere(w: Where): string {
  const parts: string[] = [];
  if (w.file !== undefined) parts.push(w.line !== undefined ? `${w.file}:${w.line}` : w.file);
  if (w.document !== undefined) parts.push(`document ${w.document}`);
  if (w.object !== undefined) parts.push(w.object);
  if (w.field !== undefined) parts.push(w.field);
  return parts.join(', ');
}

export class InputError extends Error {
  constructor(
    readonly where: Where,
    readonly detail: string,
  ) {
    const at = formatWhere(where);
    super(at ? `${at}: ${detail}` : detail);
    this.name = 'InputError';
  }
}

/** Collects errors instead of stopping at the first, so a user sees every problem at once. */
export class ErrorList {
  readonly errors: InputError[] = [];
  add(where: Where, detail: string): void {
    this.errors.push(new InputError(where, detail));
  }
  get ok(): boolean {
    return this.errors.length === 0;
  }
  toString(): string {
    return this.errors.map((e) => e.message).join('\n');
  }
}
