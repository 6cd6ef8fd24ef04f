import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  QUANTITY_FORMAT_MESSAGE,
  QuantityError,
  QuantityFormat,
  addQuantity,
  compareQuantity,
  equalQuantity,
  formatQuantity,
  isZeroQuantity,
  milliValue,
  negQuantity,
  parseQuantity,
  quantityFromMilli,
  quantityFromNano,
  quantityFromValue,
  scaleQuantity,
  subQuantity,
  tryParseQuantity,
  value,
  type Quantity,
} from './quantity.ts';

const { DecimalSI, BinarySI, DecimalExponent } = QuantityFormat;
const G = 1_000_000_000n; // nano per unit
const q = (nano: bigint, format: QuantityFormat = DecimalSI): Quantity => quantityFromNano(nano, format);

describe('parse: every accepted form, exactly, keeping the format', () => {
  const cases: [string | number, bigint, QuantityFormat][] = [
    // plain integers and decimals, with sign
    ['1', 1n * G, DecimalSI],
    ['0', 0n, DecimalSI],
    ['00', 0n, DecimalSI],
    ['007', 7n * G, DecimalSI],
    ['0.1', 100_000_000n, DecimalSI],
    ['.5', 500_000_000n, DecimalSI],
    ['1.', 1n * G, DecimalSI],
    ['+1', 1n * G, DecimalSI],
    ['-1', -1n * G, DecimalSI],
    ['-0.5', -500_000_000n, DecimalSI],
    ['7.123456789', 7_123_456_789n, DecimalSI],
    ['12345678901234567890', 12345678901234567890n * G, DecimalSI],
    // decimal SI suffixes
    ['1n', 1n, DecimalSI],
    ['1u', 1_000n, DecimalSI],
    ['100m', 100_000_000n, DecimalSI],
    ['1.5m', 1_500_000n, DecimalSI],
    ['1k', 10n ** 12n, DecimalSI],
    ['8.1k', 8_100n * G, DecimalSI],
    ['1M', 10n ** 15n, DecimalSI],
    ['10.035M', 10_035_000n * G, DecimalSI],
    ['1G', 10n ** 18n, DecimalSI],
    ['1T', 10n ** 21n, DecimalSI],
    ['1P', 10n ** 24n, DecimalSI],
    ['1E', 10n ** 27n, DecimalSI],
    ['1.G', 10n ** 18n, DecimalSI],
    // binary SI suffixes
    ['1Ki', 1024n * G, BinarySI],
    ['1Mi', 1024n ** 2n * G, BinarySI],
    ['1Gi', 1024n ** 3n * G, BinarySI],
    ['1Ti', 1024n ** 4n * G, BinarySI],
    ['1Pi', 1024n ** 5n * G, BinarySI],
    ['1Ei', 1024n ** 6n * G, BinarySI],
    ['8Ei', 2n ** 63n * G, BinarySI], // Kubernetes caps this one at 2^63-1; we do not cap
    ['1.5Gi', 1_610_612_736n * G, BinarySI],
    ['0.5Ki', 512n * G, BinarySI],
    ['-1Ki', -1024n * G, BinarySI],
    ['0Ki', 0n, BinarySI],
    // a binary value of magnitude below 1 becomes DecimalSI
    ['0.0001Ki', 102_400_000n, DecimalSI],
    ['-0.0001Ki', -102_400_000n, DecimalSI],
    // decimal exponents
    ['1e3', 1_000n * G, DecimalExponent],
    ['1E3', 1_000n * G, DecimalExponent],
    ['1e+3', 1_000n * G, DecimalExponent],
    ['1e0', 1n * G, DecimalExponent],
    ['12e6', 12_000_000n * G, DecimalExponent],
    ['1.5e-3', 1_500_000n, DecimalExponent],
    ['1.3E+6', 1_300_000n * G, DecimalExponent],
    ['0.5e-2', 5_000_000n, DecimalExponent],
    ['1E-9', 1n, DecimalExponent],
    ['1e19', 10n ** 28n, DecimalExponent],
    // finer than a nano: the magnitude rounds up to the next nano
    ['1.0000000001', 1_000_000_001n, DecimalSI],
    ['-1.0000000001', -1_000_000_001n, DecimalSI],
    ['0.0000000001', 1n, DecimalSI],
    ['1e-12', 1n, DecimalExponent],
    ['1e-1000', 1n, DecimalExponent],
    ['0e-1000', 0n, DecimalExponent],
    ['1.0000000001Ki', 1_024_000_000_103n, BinarySI],
    // YAML / JSON numbers
    [2, 2n * G, DecimalSI],
    [0.5, 500_000_000n, DecimalSI],
    [-3, -3n * G, DecimalSI],
    [1e21, 10n ** 30n, DecimalExponent],
    [5e-7, 500n, DecimalExponent],
  ];
  for (const [input, nano, format] of cases) {
    test(`${typeof input === 'string' ? JSON.stringify(input) : input} -> ${nano}n ${format}`, () => {
      assert.deepEqual(parseQuantity(input), { nano, format });
    });
  }
});

describe('parse: everything else is refused, saying what is accepted', () => {
  const formatErrors = [
    '1.5.5',
    'Gi',
    '1 Gi',
    '1gi',
    'abc',
    '',
    '--1',
    ' 1',
    '1 ',
    '.',
    '-',
    '+',
    'e3',
    'm',
    '1.1.M',
    '1+1.0M',
    '0.1am',
    '1e3k',
    '1e3.5',
    '1,5',
    '0x10',
    '１',
  ];
  for (const input of formatErrors) {
    test(`${JSON.stringify(input)} breaks the grammar`, () => {
      assert.throws(
        () => parseQuantity(input),
        (e: unknown) =>
          e instanceof QuantityError &&
          e.reason === 'format' &&
          e.message.startsWith(`invalid quantity ${JSON.stringify(input)}: `) &&
          e.message.includes(QUANTITY_FORMAT_MESSAGE),
      );
    });
  }
  const suffixErrors = ['1e', '1E+', '1K', '1i', '.5i', '1mi', '1Ki2', '1kk', '-3.01e-', '1ee3'];
  for (const input of suffixErrors) {
    test(`${JSON.stringify(input)} has an unknown suffix`, () => {
      assert.throws(
        () => parseQuantity(input),
        (e: unknown) =>
          e instanceof QuantityError &&
          e.reason === 'suffix' &&
          e.message.includes("unable to parse quantity's suffix") &&
          e.message.includes('Ki, Mi, Gi, Ti, Pi, Ei'),
      );
    });
  }
  test('exponents beyond ±1000 are refused with the accepted range', () => {
    assert.throws(() => parseQuantity('1e1001'), /invalid quantity "1e1001": the exponent must be between -1000 and 1000/);
    assert.throws(() => parseQuantity('1e-99999999999999999999'), /between -1000 and 1000/);
  });
  test('non-finite numbers and non-strings are refused', () => {
    assert.throws(() => parseQuantity(NaN), /invalid quantity NaN: a quantity must be a finite number/);
    assert.throws(() => parseQuantity(Infinity), QuantityError);
    assert.throws(() => parseQuantity(null as unknown as string), /invalid quantity null: a quantity must be a string or a number/);
  });
  test('tryParseQuantity returns undefined instead of throwing', () => {
    assert.equal(tryParseQuantity('1gi'), undefined);
    assert.deepEqual(tryParseQuantity('1Gi'), q(1024n ** 3n * G, BinarySI));
  });
});

describe('formatQuantity: Kubernetes canonical form', () => {
  const fromInput: [string, string][] = [
    ['1.5Gi', '1536Mi'],
    ['1000m', '1'],
    ['0.1', '100m'],
    ['1e3', '1e3'],
    ['1E3', '1e3'],
    ['2Ki', '2Ki'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['1024Mi', '1Gi'],
    ['2048Ki', '2Mi'],
    ['1025Ki', '1025Ki'],
    ['100m', '100m'],
    ['12e6', '12e6'],
    ['0', '0'],
    ['0Ki', '0'],
    ['0e3', '0'],
    ['0.5Ki', '512'], // binary below 1024 falls back to DecimalSI
    ['1.5Ki', '1536'], // whole, >= 1024, but not a multiple of 1024: no binary suffix fits
    ['1.0000001Ki', '1024000102400n'], // not whole: DecimalSI
    ['1n', '1n'],
    ['1500n', '1500n'],
    ['1000n', '1u'],
    ['0.000001', '1u'],
    ['0.0000015', '1500n'],
    ['1.0000000001', '1000000001n'],
    ['+1', '1'], // Kubernetes' String() would echo "+1"; the canonical form is "1"
    ['007', '7'],
    ['-1.5', '-1500m'],
    ['-1Ki', '-1Ki'],
    ['-0.5Ki', '-512'],
    ['1000', '1k'],
    ['1000k', '1M'],
    ['1.5k', '1500'],
    ['10.035M', '10035k'],
    ['8.1k', '8100'],
    ['7.123456789', '7123456789n'],
    ['1E', '1E'],
    ['1000E', '1000E'],
    ['1Ei', '1Ei'],
    ['1024Ei', '1024Ei'], // no binary suffix above Ei
    ['1.2e3', '1200'],
    ['1e1', '10'],
    ['1.5e-3', '1500e-6'],
    ['0.5e0', '500e-3'],
    ['1e-12', '1e-9'],
    ['1e21', '1e21'],
  ];
  for (const [input, want] of fromInput) {
    test(`${JSON.stringify(input)} prints as ${JSON.stringify(want)}`, () => {
      assert.equal(formatQuantity(parseQuantity(input)), want);
    });
  }

  // Cases from Kubernetes' own quantity tests (value × 10^scale in the given format).
  const fromKubernetes: [bigint, number, QuantityFormat, string][] = [
    [1024n * 1024n, 0, BinarySI, '1Mi'],
    [1024n * 1024n, 0, DecimalSI, '1048576'],
    [300n * 1024n * 1024n, 0, BinarySI, '300Mi'],
    [6n * 1024n, 0, BinarySI, '6Ki'],
    [1001n * 1024n * 1024n * 1024n, 0, BinarySI, '1001Gi'],
    [1024n ** 4n, 0, BinarySI, '1Ti'],
    [5n, 0, BinarySI, '5'],
    [500n, -3, BinarySI, '500m'],
    [1n, 9, DecimalSI, '1G'],
    [1000n, 6, DecimalSI, '1G'],
    [1000000n, 3, DecimalSI, '1G'],
    [1000000000n, 0, DecimalSI, '1G'],
    [1n, -3, DecimalSI, '1m'],
    [80n, -3, DecimalSI, '80m'],
    [1080n, -3, DecimalSI, '1080m'],
    [108n, -2, DecimalSI, '1080m'],
    [10800n, -4, DecimalSI, '1080m'],
    [300n, 6, DecimalSI, '300M'],
    [1n, 12, DecimalSI, '1T'],
    [1234567n, 6, DecimalSI, '1234567M'],
    [1234567n, -3, BinarySI, '1234567m'],
    [3n, 3, DecimalSI, '3k'],
    [1025n, 0, BinarySI, '1025'],
    [0n, 0, DecimalSI, '0'],
    [0n, 0, BinarySI, '0'],
    [0n, 0, DecimalExponent, '0'],
    [1n, 9, DecimalExponent, '1e9'],
    [1n, -3, DecimalExponent, '1e-3'],
    [1n, -9, DecimalExponent, '1e-9'],
    [80n, -3, DecimalExponent, '80e-3'],
    [300n, 6, DecimalExponent, '300e6'],
    [1n, 12, DecimalExponent, '1e12'],
    [1n, 3, DecimalExponent, '1e3'],
    [3n, 3, DecimalExponent, '3e3'],
    [1n, -9, DecimalSI, '1n'],
    [80n, -9, DecimalSI, '80n'],
    [1080n, -9, DecimalSI, '1080n'],
    [108n, -8, DecimalSI, '1080n'],
    [1n, -6, DecimalSI, '1u'],
    [80n, -6, DecimalSI, '80u'],
    [1080n, -6, DecimalSI, '1080u'],
  ];
  for (const [v, scale, format, want] of fromKubernetes) {
    test(`${v}e${scale} ${format} prints as ${JSON.stringify(want)}`, () => {
      const nano = scale + 9 >= 0 ? v * 10n ** BigInt(scale + 9) : v / 10n ** BigInt(-(scale + 9));
      assert.equal(formatQuantity(q(nano, format)), want);
    });
  }

  test('DecimalSI above E keeps the E suffix and grows the mantissa', () => {
    assert.equal(formatQuantity(q(10n ** 30n * G)), '1000000000000E');
    assert.equal(formatQuantity(q(10n ** 30n * G, DecimalExponent)), '1e30');
  });
});

describe('arithmetic: exact, formats as Kubernetes Add/Sub/Mul', () => {
  test('add and sub are exact where floating point is not', () => {
    const sum = addQuantity(parseQuantity('0.1'), parseQuantity('0.2'));
    assert.equal(formatQuantity(sum), '300m');
    assert.equal(sum.nano, 300_000_000n);
    assert.equal(formatQuantity(subQuantity(parseQuantity('1Gi'), parseQuantity('512Mi'))), '512Mi');
  });
  test('results take the left format, or the right one when the left is zero', () => {
    assert.equal(addQuantity(parseQuantity('1Gi'), parseQuantity('1G')).format, BinarySI);
    assert.equal(addQuantity(parseQuantity('1G'), parseQuantity('1Gi')).format, DecimalSI);
    assert.equal(addQuantity(parseQuantity('0'), parseQuantity('1Gi')).format, BinarySI);
    assert.equal(subQuantity(parseQuantity('0'), parseQuantity('1Gi')).format, BinarySI);
    assert.equal(formatQuantity(subQuantity(parseQuantity('0'), parseQuantity('1Gi'))), '-1Gi');
  });
  test('negative values are allowed', () => {
    const d = subQuantity(parseQuantity('100m'), parseQuantity('1'));
    assert.equal(formatQuantity(d), '-900m');
    assert.equal(compareQuantity(d, parseQuantity('0')), -1);
    assert.equal(formatQuantity(negQuantity(d)), '900m');
  });
  test('scaleQuantity multiplies by an integer and keeps the format', () => {
    assert.equal(formatQuantity(scaleQuantity(parseQuantity('1.5Gi'), 4)), '6Gi');
    assert.equal(formatQuantity(scaleQuantity(parseQuantity('250m'), 4n)), '1');
    assert.equal(formatQuantity(scaleQuantity(parseQuantity('1Ki'), -2)), '-2Ki');
    assert.throws(() => scaleQuantity(parseQuantity('1'), 1.5), /expected a safe integer, got 1.5/);
  });
  test('compare, equality and isZero ignore the format', () => {
    assert.equal(compareQuantity(parseQuantity('1Ki'), parseQuantity('1024')), 0);
    assert.ok(equalQuantity(parseQuantity('1Ki'), parseQuantity('1.024k')));
    assert.ok(!equalQuantity(parseQuantity('1Ki'), parseQuantity('1k')));
    assert.equal(compareQuantity(parseQuantity('1k'), parseQuantity('1Ki')), -1);
    assert.equal(compareQuantity(parseQuantity('1Ki'), parseQuantity('1k')), 1);
    assert.ok(isZeroQuantity(parseQuantity('0Gi')));
    assert.ok(!isZeroQuantity(parseQuantity('1n')));
  });
});

describe('milliValue and value: ceiling, safe integers only', () => {
  const cases: [string, number, number][] = [
    ['1', 1000, 1],
    ['100m', 100, 1],
    ['1500m', 1500, 2],
    ['0.5m', 1, 1],
    ['1n', 1, 1],
    ['1Gi', 1073741824000, 1073741824],
    ['0', 0, 0],
    ['-1.5', -1500, -1],
    ['-0.5m', 0, 0],
    ['-1n', 0, 0],
    ['1.0000000001', 1001, 2],
  ];
  for (const [input, milli, units] of cases) {
    test(`${JSON.stringify(input)}: milliValue ${milli}, value ${units}`, () => {
      assert.equal(milliValue(parseQuantity(input)), milli);
      assert.equal(value(parseQuantity(input)), units);
    });
  }
  test('at 2^53-1 they are exact; beyond, they throw instead of losing precision', () => {
    assert.equal(value(parseQuantity('9007199254740991')), Number.MAX_SAFE_INTEGER);
    assert.equal(value(parseQuantity('-9007199254740991')), -Number.MAX_SAFE_INTEGER);
    assert.equal(milliValue(parseQuantity('9007199254740991m')), Number.MAX_SAFE_INTEGER);
    assert.throws(
      () => value(parseQuantity('8Pi')),
      (e: unknown) =>
        e instanceof QuantityError &&
        e.reason === 'range' &&
        e.message === 'invalid quantity "8Pi": 9007199254740992 units is beyond the exact range of a JavaScript number (±9007199254740991)',
    );
    assert.throws(() => milliValue(parseQuantity('9007199254741')), /9007199254741000 millis is beyond the exact range/);
  });
  test('quantityFromMilli and quantityFromValue take integers in the given format', () => {
    assert.equal(formatQuantity(quantityFromMilli(1500)), '1500m');
    assert.equal(formatQuantity(quantityFromValue(1024, BinarySI)), '1Ki');
    assert.equal(formatQuantity(quantityFromValue(1024)), '1024');
    assert.throws(() => quantityFromMilli(0.5), /quantityFromMilli: expected a safe integer, got 0.5/);
    assert.throws(() => quantityFromValue(2 ** 60), /quantityFromValue: expected a safe integer/);
  });
});

describe('properties', () => {
  const formats = fc.constantFrom<QuantityFormat>(DecimalSI, BinarySI, DecimalExponent);
  const nanos = fc.oneof(
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
    fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
    // whole multiples of powers of 1024, so binary suffixes get exercised
    fc.tuple(fc.bigInt({ min: -(2n ** 20n), max: 2n ** 20n }), fc.integer({ min: 0, max: 6 })).map(([m, p]) => m * 1024n ** BigInt(p) * G),
  );
  const quantities = fc.tuple(nanos, formats).map(([nano, format]) => q(nano, format));
  const safeInts = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

  test('parse(format(q)) has the value of q, and printing is idempotent', () => {
    fc.assert(
      fc.property(quantities, (x) => {
        const s = formatQuantity(x);
        const back = parseQuantity(s);
        assert.equal(back.nano, x.nano);
        assert.equal(formatQuantity(back), s);
      }),
      { numRuns: 2000 },
    );
  });

  test('every string of the grammar parses, and its canonical form parses to the same value', () => {
    const suffix = fc.constantFrom(
      '',
      'n',
      'u',
      'm',
      'k',
      'M',
      'G',
      'T',
      'P',
      'E',
      'Ki',
      'Mi',
      'Gi',
      'Ti',
      'Pi',
      'Ei',
      'e3',
      'E-6',
      'e+2',
      'e0',
      'e-12',
      'e18',
    );
    const digits = (max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: max });
    const input = fc
      .tuple(fc.constantFrom('', '+', '-'), digits(12), fc.option(digits(12)), suffix)
      .filter(([, i, f]) => i !== '' || (f !== null && f !== ''))
      .map(([sign, i, f, suf]) => `${sign}${i}${f === null ? '' : `.${f}`}${suf}`);
    fc.assert(
      fc.property(input, (s) => {
        const x = parseQuantity(s);
        assert.equal(parseQuantity(formatQuantity(x)).nano, x.nano);
      }),
      { numRuns: 2000 },
    );
  });

  test('sub undoes add', () => {
    fc.assert(fc.property(quantities, quantities, (a, b) => subQuantity(addQuantity(a, b), b).nano === a.nano));
  });

  test('addition is commutative and associative', () => {
    fc.assert(
      fc.property(quantities, quantities, quantities, (a, b, c) => {
        assert.equal(addQuantity(a, b).nano, addQuantity(b, a).nano);
        assert.equal(addQuantity(addQuantity(a, b), c).nano, addQuantity(a, addQuantity(b, c)).nano);
      }),
    );
  });

  test('compare agrees with the sign of the difference', () => {
    fc.assert(
      fc.property(quantities, quantities, (a, b) => {
        const d = subQuantity(a, b).nano;
        assert.equal(compareQuantity(a, b), d < 0n ? -1 : d > 0n ? 1 : 0);
        assert.equal(compareQuantity(b, a), -compareQuantity(a, b) || 0);
      }),
    );
  });

  test('milliValue and value of integers are exact', () => {
    fc.assert(
      fc.property(safeInts, (n) => {
        assert.equal(milliValue(quantityFromMilli(n)), n);
        assert.equal(value(quantityFromValue(n)), n);
        assert.equal(value(parseQuantity(String(n))), n);
        assert.equal(milliValue(parseQuantity(`${n}m`)), n);
        if (Math.abs(n) <= Number.MAX_SAFE_INTEGER / 1000) assert.equal(milliValue(parseQuantity(n)), n * 1000);
      }),
    );
  });

  test('milliValue is the ceiling of the value in millis', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (nano) => {
        const m = BigInt(milliValue(q(nano)));
        assert.ok(m * 1_000_000n >= nano && (m - 1n) * 1_000_000n < nano);
      }),
    );
  });
});
