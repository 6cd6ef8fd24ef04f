// Times as the API writes them (RFC 3339, UTC, whole seconds) and as the pure core counts
// them (seconds since the Unix epoch, a plain number). No clock is read here: callers pass
// `now` in. Formatting is done by hand (civil-from-days) so the pure layers need no Date
// object; parsing accepts any RFC 3339 timestamp with a zone.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** Seconds since the epoch of an RFC 3339 timestamp, or undefined when it is not one. */
export function parseTime(s: string | undefined): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > 31 || h! > 23 || mi! > 59 || se! > 60) return undefined;
  let t = daysFromCivil(y!, mo!, d!) * 86400 + h! * 3600 + mi! * 60 + se!;
  if (m[7]) t += Number(m[7]);
  const zone = m[8]!;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    t -= sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  }
  return t;
}

/** RFC 3339 in UTC with whole seconds (what Kubernetes writes in metav1.Time). */
export function formatTime(seconds: number): string {
  const t = Math.floor(seconds);
  const days = Math.floor(t / 86400);
  const rem = t - days * 86400;
  const [y, m, d] = civilFromDays(days);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  // Joined rather than concatenated: a flat string of 20 characters, not a tree of eleven
  // pieces (~250 bytes), and every condition and creationTimestamp of a big run keeps one.
  return [p(y, 4), '-', p(m), '-', p(d), 'T', p(Math.floor(rem / 3600)), ':', p(Math.floor((rem % 3600) / 60)), ':', p(rem % 60), 'Z'].join(
    '',
  );
}
