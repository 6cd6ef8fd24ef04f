// Kubernetes' name rules (apimachinery's validation.IsDNS1123Label, IsDNS1123Subdomain
// and IsValidLabelValue), defined once: every check of an object name, a PodSet name, a
// label value or a label key's prefix uses these patterns and limits.

/** Longest RFC 1123 label: a namespace, a PodSet, a replicatedJob name. */
export const DNS_LABEL_MAX = 63;
/** Longest RFC 1123 subdomain: an object name. */
export const DNS_SUBDOMAIN_MAX = 253;

/** Lowercase letters, digits and '-', starting and ending with a letter or digit (no length check). */
export const DNS_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Labels joined by '.' (no length check). */
export const DNS_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Kubernetes' IsDNS1123Subdomain pattern error, verbatim: users and their tooling match on it. */
export const DNS_SUBDOMAIN_PROBLEM =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** A valid RFC 1123 label: the pattern and at most 63 characters. */
export function isDnsLabel(s: string): boolean {
  return s.length <= DNS_LABEL_MAX && DNS_LABEL_PATTERN.test(s);
}

/** A valid RFC 1123 subdomain: the pattern and at most 253 characters. */
export function isDnsSubdomain(s: string): boolean {
  return s.length <= DNS_SUBDOMAIN_MAX && DNS_SUBDOMAIN_PATTERN.test(s);
}

/** Longest label value. */
export const LABEL_VALUE_MAX = 63;
/** A label value: empty, or letters, digits, '-', '_' and '.', starting and ending with a letter or digit (no length check). */
export const LABEL_VALUE_PATTERN = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A valid label value: the pattern and at most 63 characters. */
export function isLabelValue(s: string): boolean {
  return s.length <= LABEL_VALUE_MAX && LABEL_VALUE_PATTERN.test(s);
}
