import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, test } from 'node:test';
import { compileUserRegex, type UserRegex } from './regex.ts';

function compiled(pattern: string): UserRegex {
  const r = compileUserRegex(pattern);
  if (!r.ok) assert.fail(`${pattern} was refused: ${r.error}`);
  return r.regex;
}

function refusal(pattern: string): string {
  const r = compileUserRegex(pattern);
  if (r.ok) assert.fail(`${pattern} was accepted`);
  return r.error;
}

describe('compileUserRegex: Go RE2 syntax, unanchored search', () => {
  const cases: [pattern: string, input: string, matches: boolean][] = [
    ['node-[0-9]+', 'node-12', true],
    ['node-[0-9]+', 'node-', false],
    ['node-[0-9]+', 'gpu-node-7-a', true],
    ['^gpu-.*$', 'gpu-a100-3', true],
    ['^gpu-.*$', 'xgpu-a100', false],
    ['node-2', 'xnode-20', true],
    ['node-2', 'node-3', false],
    ['^node-[0-9]+$', 'node-1x', false],
    // Go-only syntax: named groups in both spellings, flags, POSIX classes, \z.
    ['^(?P<rack>r[0-9]+)-n[0-9]+$', 'r12-n3', true],
    ['^(?<rack>r[0-9]+)-n', 'r12-n3', true],
    ['(?i)^NODE-a', 'node-A7', true],
    ['^[[:digit:]]+$', '0123', true],
    ['^[[:digit:]]+$', '01a', false],
    ['node\\z', 'a-node', true],
    // Go's `$` without (?m) matches only at the end of the text, not before a final newline.
    ['^a$', 'a\n', false],
    // The empty pattern matches everything (the HyperNode rules refuse it separately).
    ['', 'anything', true],
  ];
  for (const [pattern, input, matches] of cases) {
    test(`${JSON.stringify(pattern)} ${matches ? 'matches' : 'does not match'} ${JSON.stringify(input)}`, () => {
      const re = compiled(pattern);
      assert.equal(re.source, pattern);
      assert.equal(re.test(input), matches);
    });
  }

  test('a compiled regex keeps no state between calls (unlike a global JS RegExp)', () => {
    const re = compiled('node-[0-9]');
    assert.deepEqual([re.test('node-1'), re.test('node-1'), re.test('x'), re.test('node-2')], [true, true, false, true]);
  });
});

describe('compileUserRegex: RE2-unsupported syntax is refused with Go error text', () => {
  const cases: [pattern: string, error: string][] = [
    ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
    ['(?=x)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
    ['(?!x)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
    ['(?<=x)a', 'error parsing regexp: invalid named capture: `(?<=x)a`'],
    ['a++', 'error parsing regexp: invalid nested repetition operator: `++`'],
    ['node-(', 'error parsing regexp: missing closing ): `node-(`'],
    ['node-)', 'error parsing regexp: unexpected ): `node-)`'],
    ['node-[0-9', 'error parsing regexp: missing closing ]: `[0-9`'],
    ['[z-a]', 'error parsing regexp: invalid character class range: `z-a`'],
    ['a{2,1}', 'error parsing regexp: invalid repeat count: `{2,1}`'],
    ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
    ['*', 'error parsing regexp: missing argument to repetition operator: `*`'],
    ['\\Z', 'error parsing regexp: invalid escape sequence: `\\Z`'],
    ['node\\', 'error parsing regexp: trailing backslash at end of expression'],
  ];
  for (const [pattern, error] of cases) {
    test(`${JSON.stringify(pattern)} is refused: ${error}`, () => {
      assert.equal(refusal(pattern), error);
    });
  }

  test('a pattern nested too deeply is refused, not a stack overflow', () => {
    assert.equal(refusal(`${'('.repeat(1500)}a${')'.repeat(1500)}`), 'error parsing regexp: expression nests too deeply');
  });
});

describe('compileUserRegex: catastrophic-backtracking patterns run in linear time', () => {
  const N = 50_000;
  const cases: [pattern: string, input: string, matches: boolean][] = [
    ['(a+)+$', `${'a'.repeat(N)}!`, false],
    ['(a+)+$', 'a'.repeat(N), true],
    ['(a|aa)*c', 'a'.repeat(N), false],
    ['(a|aa)*c', `${'a'.repeat(N)}c`, true],
    ['(x+x+)+y', 'x'.repeat(N), false],
    ['(x+x+)+y', `${'x'.repeat(N)}y`, true],
    // The required literal is present, so a literal pre-filter cannot short-cut these.
    ['(x+x+)+y', `y${'x'.repeat(N)}`, false],
    ['^(a|aa)*c', `${'a'.repeat(N)}bc`, false],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', 'a'.repeat(N), false],
  ];
  for (const [pattern, input, matches] of cases) {
    test(`${pattern} against ${input.length} characters ${matches ? 'matches' : 'does not match'}`, (t) => {
      const re = compiled(pattern);
      const start = performance.now();
      const got = re.test(input);
      const ms = performance.now() - start;
      t.diagnostic(`${pattern} on ${input.length} chars: ${ms.toFixed(1)} ms`);
      assert.equal(got, matches);
      // Generous: a backtracking engine takes longer than the age of the universe here.
      assert.ok(ms < 5000, `took ${ms.toFixed(0)} ms`);
    });
  }
});
