// Regular expressions written by users (HyperNode `regexMatch.pattern`), with Go's RE2
// syntax and semantics: the peer compiles them with Go's `regexp`, so a pattern means here
// what it means there. re2js is a port of Go's regexp package: matching takes time linear in
// the input whatever the pattern (no backtracking, so no ReDoS), and constructs RE2 refuses
// (backreferences, lookaround, possessive quantifiers) are refused with Go's own error text,
// e.g. "error parsing regexp: invalid escape sequence: `\1`".
//
// JavaScript's RegExp is never used for user patterns: it backtracks, and its syntax differs
// (`(?P<name>...)`, `\z`, `(?i)` flags, `[[:alpha:]]`...).

import { RE2JS, RE2JSException } from 're2js';

export interface UserRegex {
  /** The pattern as the user wrote it. */
  readonly source: string;
  /** Unanchored search, like Go's `MatchString`: `node-2` matches `xnode-20`. */
  test(s: string): boolean;
}

export type CompiledUserRegex = { ok: true; regex: UserRegex } | { ok: false; error: string };

/**
 * Compiles `pattern` with Go RE2 syntax (Perl flags, leftmost-first, as Go's
 * `regexp.Compile`). The error, when the pattern is refused, is the text Go's
 * `err.Error()` gives, e.g. "error parsing regexp: missing closing ): `a(`".
 */
export function compileUserRegex(pattern: string): CompiledUserRegex {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (e) {
    // A syntax error carries Go's message; other re2js refusals (e.g. a program too large)
    // have a message of their own. Anything else is a bug and is not swallowed.
    if (e instanceof RE2JSException) return { ok: false, error: e.message };
    throw e;
  }
  return { ok: true, regex: { source: pattern, test: (s: string) => compiled.test(s) } };
}
