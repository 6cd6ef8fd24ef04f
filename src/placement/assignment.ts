// The internal form of a topology assignment: the levels it speaks in and one entry per
// lowest-level domain, in emission order (sorted by full level path). Encoders turn it
// into the Workload's v1beta2 slices or the v1beta1 domain list.

export interface DomainAssignment {
  /** One value per entry of `levels`. */
  values: string[];
  count: number;
}

export interface Assignment {
  levels: string[];
  domains: DomainAssignment[];
}

export function assignmentPodCount(a: Assignment): number {
  let n = 0;
  for (const d of a.domains) n += d.count;
  return n;
}
