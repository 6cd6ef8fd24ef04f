// Resource names to dense indices, so per-leaf capacity lives in flat typed arrays
// (leaf * R + r). `pods` is always index 0: every pod consumes one.

export const PODS = 'pods';

export class ResourceIndex {
  readonly names: string[] = [PODS];
  private readonly map = new Map<string, number>([[PODS, 0]]);

  get size(): number {
    return this.names.length;
  }

  get(name: string): number | undefined {
    return this.map.get(name);
  }

  /** Index of `name`, adding it at the end when new. */
  intern(name: string): number {
    let i = this.map.get(name);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(name);
      this.map.set(name, i);
    }
    return i;
  }
}
