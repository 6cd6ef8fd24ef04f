// Kubernetes resource quantities (k8s.io/apimachinery `resource.Quantity`), held exactly.
//
// A Quantity is a bigint count of nano-units (value × 10^9) and the format it was written
// in. Nano is the finest unit Kubernetes keeps, so every quantity Kubernetes can hold is
// exact here, and sums and differences never lose precision.
//
// Parsing follows Kubernetes' ParseQuantity:
//   1. split sign, integer digits, fraction digits and suffix (the grammar of Kubernetes'
//      hand-written parser, which is the regular expression quoted in its error message);
//   2. interpret the suffix: decimal SI (n u m "" k M G T P E) -> DecimalSI, binary SI
//      (Ki Mi Gi Ti Pi Ei) -> BinarySI, or an exponent (e3, E-6, e+2) -> DecimalExponent;
//   3. scale to nano-units; a value finer than a nano has its magnitude rounded UP to the
//      next nano ("if you want some resources, you should get some"): `1.0000000001` ->
//      1000000001n, `-1.0000000001` -> -1000000001n, `1e-12` -> 1n;
//   4. a BinarySI value whose magnitude is below 1 becomes DecimalSI.
//
// Where we differ from Kubernetes, on input nobody should write:
//   - Kubernetes accepts a quantity with no digits at all (`Gi`, `.`, `-`, `e3`) as zero;
//     we refuse it, as the regular expression in Kubernetes' own message does.
//   - Kubernetes caps some values above 2^63-1 units (only those its slow parse path
//     sees, e.g. `8Ei` but not `1e19`); we never cap.
//   - Kubernetes reads the exponent as an int32 (silently wrapping); we refuse exponents
//     outside ±1000, which keeps every value computable.
//   - Kubernetes' `String()` returns the input verbatim when it judges it canonical, which
//     keeps `+1`, `01` and `1E3` as written; `formatQuantity` always prints the canonical
//     form (`1`, `1`, `1e3`).

export const QuantityFormat = {
  DecimalSI: 'DecimalSI',
  BinarySI: 'BinarySI',
  DecimalExponent: 'DecimalExponent',
} as const;
export type QuantityFormat = (typeof QuantityFormat)[keyof typeof QuantityFormat];

export interface Quantity {
  /** The value in nano-units (value × 10^9). */
  readonly nano: bigint;
  /** How the value prefers to be printed (Kubernetes keeps the input's format). */
  readonly format: QuantityFormat;
}

/** Kubernetes' message for input that does not follow the quantity grammar (verbatim). */
export const QUANTITY_FORMAT_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** Kubernetes' message for an unknown suffix (verbatim), followed by what is accepted. */
export const QUANTITY_SUFFIX_MESSAGE =
  "unable to parse quantity's suffix; accepted suffixes are n, u, m, k, M, G, T, P, E (decimal), " +
  'Ki, Mi, Gi, Ti, Pi, Ei (binary) or an exponent such as e3 or E-6';

export type QuantityErrorReason = 'format' | 'suffix' | 'range';

export class QuantityError extends Error {
  constructor(
    /** The input as given. */
    readonly input: unknown,
    readonly reason: QuantityErrorReason,
    /** What was wrong and what is accepted, without the input (for callers that name a field). */
    readonly detail: string,
  ) {
    super(`invalid quantity ${showInput(input)}: ${detail}`);
    this.name = 'QuantityError';
  }
}

/** How an input is quoted in messages: strings in double quotes, numbers as they are. */
export function showInput(input: unknown): string {
  return typeof input === 'string' ? JSON.stringify(input) : String(input);
}

const NANO = 1_000_000_000n;
const NANO_PER_MILLI = 1_000_000n;
const MAX_EXPONENT = 1000;

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const DECIMAL_SUFFIX_BY_EXPONENT: ReadonlyMap<number, string> = new Map([...DECIMAL_SUFFIXES].map(([s, e]) => [e, s]));
const BINARY_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** sign, integer digits, fraction digits, suffix: the grammar Kubernetes' parser accepts. */
const GRAMMAR = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const EXPONENT_SUFFIX = /^[eE]([+-]?[0-9]+)$/;

// ---------------------------------------------------------------------------------------
// Parsing

/**
 * Parses a quantity as Kubernetes does (see the file header). A number is read through
 * its shortest JavaScript spelling (`0.1` -> "0.1", `1e21` -> "1e+21"), as a YAML or JSON
 * number in a manifest would be. Throws QuantityError.
 */
export function parseQuantity(s: string | number): Quantity {
  let text: string;
  if (typeof s === 'number') {
    if (!Number.isFinite(s)) {
      throw new QuantityError(s, 'format', `a quantity must be a finite number or a string; ${QUANTITY_FORMAT_MESSAGE}`);
    }
    text = String(s);
  } else if (typeof s === 'string') {
    text = s;
  } else {
    throw new QuantityError(s, 'format', `a quantity must be a string or a number; ${QUANTITY_FORMAT_MESSAGE}`);
  }

  // 1. Split.
  if (text === '') throw new QuantityError(s, 'format', `the quantity is empty; ${QUANTITY_FORMAT_MESSAGE}`);
  const m = GRAMMAR.exec(text);
  if (m === null) throw new QuantityError(s, 'format', QUANTITY_FORMAT_MESSAGE);
  const [, sign, intDigits, fracDigits = '', suffix] = m;
  if (intDigits === '' && fracDigits === '') {
    throw new QuantityError(s, 'format', `the quantity must start with a number; ${QUANTITY_FORMAT_MESSAGE}`);
  }

  // 2. Suffix.
  let format: QuantityFormat;
  let decExp = 0;
  let binExp = 0;
  const dec = DECIMAL_SUFFIXES.get(suffix);
  const bin = BINARY_SUFFIXES.get(suffix);
  if (dec !== undefined) {
    format = QuantityFormat.DecimalSI;
    decExp = dec;
  } else if (bin !== undefined) {
    format = QuantityFormat.BinarySI;
    binExp = bin;
  } else {
    const e = EXPONENT_SUFFIX.exec(suffix);
    if (e === null) throw new QuantityError(s, 'suffix', QUANTITY_SUFFIX_MESSAGE);
    const exp = Number(e[1]);
    if (!(Math.abs(exp) <= MAX_EXPONENT)) {
      throw new QuantityError(s, 'range', `the exponent must be between -${MAX_EXPONENT} and ${MAX_EXPONENT}`);
    }
    format = QuantityFormat.DecimalExponent;
    decExp = exp;
  }

  // 3. Scale to nano, rounding the magnitude up.
  const digits = BigInt(intDigits + fracDigits) << BigInt(binExp);
  const shift = decExp + 9 - fracDigits.length;
  let nano: bigint;
  if (shift >= 0) {
    nano = digits * 10n ** BigInt(shift);
  } else {
    const d = 10n ** BigInt(-shift);
    nano = (digits + d - 1n) / d;
  }
  if (sign === '-') nano = -nano;

  // 4. Sub-unit binary values are decimal.
  if (format === QuantityFormat.BinarySI && nano !== 0n && abs(nano) < NANO) format = QuantityFormat.DecimalSI;
  return { nano, format };
}

/** parseQuantity, or undefined when the input is not a quantity. */
export function tryParseQuantity(s: string | number): Quantity | undefined {
  try {
    return parseQuantity(s);
  } catch (e) {
    if (e instanceof QuantityError) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------
// Canonical printing, as Kubernetes' Quantity.CanonicalizeBytes:
//   - zero is `0` whatever the format;
//   - BinarySI: when the value is a whole number of magnitude >= 1024, divide by 1024 as
//     long as it divides exactly (up to Ei) and print that with Ki..Ei; otherwise fall
//     back to DecimalSI (`0.5Ki` -> `512`, `1.5Ki` -> `1536`);
//   - DecimalSI / DecimalExponent: move every factor of 10 into the exponent, then lower
//     the exponent to a multiple of 3 (`1.5` = 15e-1 -> 1500e-3); DecimalSI prints the SI
//     suffix of that exponent (n..E; above E the mantissa grows), DecimalExponent prints
//     `e<exp>` unless the exponent is 0 (`1.5e-3` -> `1500e-6`, `1.2e3` -> `1200`).

export function formatQuantity(q: Quantity): string {
  if (q.nano === 0n) return '0';
  const sign = q.nano < 0n ? '-' : '';
  const magnitude = abs(q.nano);

  if (q.format === QuantityFormat.BinarySI && magnitude >= 1024n * NANO && magnitude % NANO === 0n) {
    let units = magnitude / NANO;
    let power = 0;
    while (power < BINARY_SUFFIX_BY_POWER.length - 1 && units % 1024n === 0n) {
      units /= 1024n;
      power++;
    }
    return `${sign}${units}${BINARY_SUFFIX_BY_POWER[power]}`;
  }

  let mantissa = magnitude;
  let exp = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp++;
  }
  const down = ((exp % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(down);
  exp -= down;

  if (q.format === QuantityFormat.DecimalExponent) return `${sign}${mantissa}${exp === 0 ? '' : `e${exp}`}`;
  if (exp > 18) {
    mantissa *= 10n ** BigInt(exp - 18);
    exp = 18;
  }
  return `${sign}${mantissa}${DECIMAL_SUFFIX_BY_EXPONENT.get(exp)!}`;
}

// ---------------------------------------------------------------------------------------
// Construction and arithmetic. Results take the left operand's format, or the right's when
// the left is zero (Kubernetes' Add and Sub); scaling and negation keep the format.

export function quantityFromNano(nano: bigint, format: QuantityFormat = QuantityFormat.DecimalSI): Quantity {
  return { nano, format };
}

/** Kubernetes' NewMilliQuantity. `n` must be an integer. */
export function quantityFromMilli(n: number | bigint, format: QuantityFormat = QuantityFormat.DecimalSI): Quantity {
  return { nano: toBigInt(n, 'quantityFromMilli') * NANO_PER_MILLI, format };
}

/** Kubernetes' NewQuantity. `n` must be an integer. */
export function quantityFromValue(n: number | bigint, format: QuantityFormat = QuantityFormat.DecimalSI): Quantity {
  return { nano: toBigInt(n, 'quantityFromValue') * NANO, format };
}

export function addQuantity(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano + b.nano, format: a.nano === 0n ? b.format : a.format };
}

export function subQuantity(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano - b.nano, format: a.nano === 0n ? b.format : a.format };
}

export function negQuantity(q: Quantity): Quantity {
  return { nano: -q.nano, format: q.format };
}

/** Multiplies by an integer (Kubernetes' Mul). */
export function scaleQuantity(q: Quantity, n: number | bigint): Quantity {
  return { nano: q.nano * toBigInt(n, 'scaleQuantity'), format: q.format };
}

/** -1, 0 or 1; formats are ignored (Kubernetes' Cmp). */
export function compareQuantity(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nano < b.nano ? -1 : a.nano > b.nano ? 1 : 0;
}

/** Same value, whatever the formats (Kubernetes' Equal). */
export function equalQuantity(a: Quantity, b: Quantity): boolean {
  return a.nano === b.nano;
}

export function isZeroQuantity(q: Quantity): boolean {
  return q.nano === 0n;
}

// ---------------------------------------------------------------------------------------
// Hot-path numbers. Both round up to the next whole milli / unit (ceiling, toward +∞).
// Kubernetes' MilliValue and Value round positive values the same way; for negative values
// its int64 path rounds away from zero and its big-decimal path toward +∞; we always take
// the ceiling so the result never depends on an internal representation.
// The result is a JavaScript number and must be a safe integer (|n| <= 2^53-1, i.e. about
// 9 PB of memory in bytes or 9 billion cores in millicores); beyond that these throw a
// QuantityError rather than return an inexact number.

export function milliValue(q: Quantity): number {
  return toSafeNumber(ceilDiv(q.nano, NANO_PER_MILLI), q, 'millis');
}

export function value(q: Quantity): number {
  return toSafeNumber(ceilDiv(q.nano, NANO), q, 'units');
}

// ---------------------------------------------------------------------------------------

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/** Ceiling of a / d for d > 0 (bigint division truncates toward zero). */
function ceilDiv(a: bigint, d: bigint): bigint {
  const q = a / d;
  return a % d > 0n ? q + 1n : q;
}

function toBigInt(n: number | bigint, what: string): bigint {
  if (typeof n === 'bigint') return n;
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what}: expected a safe integer, got ${n}`);
  return BigInt(n);
}

function toSafeNumber(n: bigint, q: Quantity, unit: string): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new QuantityError(
      formatQuantity(q),
      'range',
      `${n} ${unit} is beyond the exact range of a JavaScript number (±${Number.MAX_SAFE_INTEGER})`,
    );
  }
  return Number(n);
}
