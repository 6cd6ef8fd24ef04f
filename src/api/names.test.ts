import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DNS_SUBDOMAIN_PATTERN, DNS_SUBDOMAIN_PROBLEM, isDnsLabel, isDnsSubdomain, isLabelValue } from './names.ts';

describe('object names (RFC 1123)', () => {
  it('a DNS label is lowercase letters, digits and -, starts and ends with a letter or digit, at most 63 characters', () => {
    for (const ok of ['a', '0', 'main', 'worker-1', 'a'.repeat(63)]) assert.equal(isDnsLabel(ok), true, ok);
    for (const bad of ['', '-a', 'a-', 'A', 'a.b', 'a_b', 'a'.repeat(64)]) assert.equal(isDnsLabel(bad), false, bad);
  });
  it('a DNS subdomain is labels joined by dots, at most 253 characters', () => {
    for (const ok of ['a', 'example.com', 'x-1.y-2', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`])
      assert.equal(isDnsSubdomain(ok), true, ok);
    for (const bad of ['', '.a', 'a.', 'a..b', 'a.-b', 'Example.com', 'a'.repeat(254)]) assert.equal(isDnsSubdomain(bad), false, bad);
  });
  it('a label value is empty or letters, digits, -, _ and ., starting and ending with a letter or digit, at most 63 characters', () => {
    for (const ok of ['', 'a', 'A_b.c-9', 'x'.repeat(63), '3f2c1d9e-0000-4000-8000-000000000000']) assert.equal(isLabelValue(ok), true, ok);
    for (const bad of ['-a', 'a_', '.a', 'a/b', 'a b', 'x'.repeat(64)]) assert.equal(isLabelValue(bad), false, bad);
  });
  it('the subdomain pattern checks no length (callers that report the length separately use it)', () => {
    assert.equal(DNS_SUBDOMAIN_PATTERN.test('a'.repeat(300)), true);
  });
  it("the refusal text is Kubernetes' IsDNS1123Subdomain message, with the pattern it validates with", () => {
    assert.match(DNS_SUBDOMAIN_PROBLEM, /^a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters/);
    assert.ok(DNS_SUBDOMAIN_PROBLEM.includes(`'${DNS_SUBDOMAIN_PATTERN.source.slice(1, -1)}'`));
  });
});
