// Gang groups in a cycle (koordinator-gang.md; docs/design.md "Gangs"): a gang is decided
// together with every gang of its group, whichever queue they wait in.
//
// 1. closure: the group is closed over its members' own groups (a gang pulled in by another's
//    list brings the gangs its own list names); each gang found waiting is taken out of its
//    queue and becomes a member of the entry; a gang decided earlier in this cycle decides
//    the entry (retry next cycle, or the same failure);
// 2. basic check: every named gang exists (or is admitted already) and has at least its
//    minimum of pods;
// 3. waiting time: it starts when the gang first holds a reservation or first fails on the
//    topology alone; once it has run out, the entry times out (reservations released, pods
//    annotated).

import { CoreApiVersion } from '../api/api-versions.ts';
import type { Entry } from './entry.ts';
import { PendingReason } from './flavor-assigner.ts';
import type { QueueManager } from './queue.ts';
import type { AdmissionSnapshot, ClusterQueueInfo } from './snapshot.ts';
import { type GangInfo, totalPods, type WorkloadInfo } from './workload-info.ts';

/** A gang id list as the peer prints it. */
export const gangIdList = (ids: readonly string[]) => `[${ids.join(' ')}]`;

/**
 * A gang as its pending message names it: its key, and for a gang of Pods the pods the user
 * wrote and the pod sets they make (named by role hash, which alone says nothing to the
 * user): `ns/g (pods g-0, g-1 in pod set 199f7c7c)`. At most 4 pods are named.
 */
export function gangMemberName(info: WorkloadInfo): string {
  const pods = (info.workload.metadata.ownerReferences ?? [])
    .filter((o) => o.kind === 'Pod' && o.apiVersion === CoreApiVersion.V1)
    .map((o) => o.name);
  if (pods.length === 0) return info.key;
  const shown = pods.length > 4 ? `${pods.slice(0, 4).join(', ')}, ... (${pods.length} in all)` : pods.join(', ');
  const names = info.podSets.map((p) => p.name);
  const sets = names.length === 1 ? `pod set ${names[0]}` : `pod sets ${names.join(', ')}`;
  return `${info.key} (pod${pods.length === 1 ? '' : 's'} ${shown} in ${sets})`;
}

/** The per-Workload checks of the nomination, applied to each gang pulled into the group. */
export type MemberCheck = (
  info: WorkloadInfo,
  cq: ClusterQueueInfo | undefined,
  cqName: string | undefined,
) => { reason: PendingReason; message: string } | undefined;

export interface GangGroupContext {
  snap: AdmissionSnapshot;
  queues: QueueManager;
  now: number;
  /** Entries decided earlier in this cycle, by Workload key. */
  decided: ReadonlyMap<string, Entry>;
  /** A gang waiting in a queue (popped heads included), by gang id. */
  findGang: (id: string) => WorkloadInfo | undefined;
  check: MemberCheck;
}

/**
 * Steps 1 to 3 for the entry of `gang`'s head: adds the group's other gangs as members;
 * true when that decided the entry (its status, reason and message are set).
 */
export function closeGangGroup(ctx: GangGroupContext, entry: Entry, gang: GangInfo): boolean {
  const { snap, queues } = ctx;
  const missing: string[] = [];
  const seen = new Set<string>([gang.id]);
  const todo = [...gang.group];
  while (todo.length > 0) {
    const id = todo.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const other = ctx.findGang(id);
    const earlier = other ? ctx.decided.get(other.key) : undefined;
    if (earlier) {
      if (earlier.status === 'fit') {
        // It is admitted below (or not): this group is tried again next cycle.
        entry.reason = PendingReason.GangNotReady;
        entry.message = `gangGroup ${gangIdList(gang.group)}: member gang ${id} is being admitted in this cycle; retrying next cycle`;
        entry.immediate = true;
      } else {
        entry.reason = earlier.reason;
        entry.message = `gangGroup ${gangIdList(gang.group)}: member gang ${id} cannot be admitted: ${earlier.message}`;
      }
      return true;
    }
    if (other) {
      const ocqName = queues.clusterQueueOf(other.key)!;
      const ocq = snap.clusterQueues.get(ocqName);
      const taken = queues.take(other.key);
      entry.members.push({
        info: other,
        cq: ocq!,
        targets: [],
        reservedOnly: false,
        held: snap.admitted.get(other.key),
        wasLive: taken?.live ?? true,
      });
      const p = ctx.check(other, ocq, ocqName);
      if (p) {
        entry.reason = p.reason;
        entry.message = `gang ${other.gang!.id} of the group: ${p.message}`;
        return true;
      }
      todo.push(...(other.gang?.group ?? []));
      continue;
    }
    // Admitted already (once satisfied): it does not hold the group back.
    if (snap.admittedGang(id)) continue;
    missing.push(id);
  }
  const short = entry.members.filter((m) => m.info.gang && totalPods(m.info) < m.info.gang.min);
  if (missing.length > 0 || short.length > 0) {
    const parts: string[] = [];
    if (missing.length > 0) parts.push(`memberGangs ${gangIdList(missing)} doesn't exists`);
    if (short.length > 0) parts.push(`memberGangs ${gangIdList(gang.group)} child pod not collect enough`);
    entry.reason = PendingReason.GangNotReady;
    entry.messageFor = (current) => `gangGroup ${gangIdList(gang.group)} basic check: ${parts.join(', ')}, current gang: ${current}`;
    entry.message = entry.messageFor(gang.id);
    return true;
  }
  // Timed out while waiting: release and stop.
  const since = entry.members.map((m) => m.info.gang?.waitingSince).filter((x): x is number => x !== undefined);
  const waited = since.length > 0 ? Math.min(...since) : undefined;
  if (waited !== undefined && ctx.now >= waited + gang.waitingSeconds) {
    entry.status = 'timeout';
    entry.reason = PendingReason.GangTimeout;
    entry.message =
      `gang ${gang.id} was not satisfied within its waiting time of ${gang.waitingSeconds}s (waiting since ${waited}); ` +
      'its reservations are released and its pods are annotated gang.scheduling.koordinator.sh/timeout=true: delete or recreate them to try again';
    return true;
  }
  return false;
}

/** A gang's waiting time starts now: it failed on the topology alone and has not started waiting. */
export function startsWaitingNow(gang: GangInfo | undefined, topologyOnly: boolean, now: number): number | undefined {
  return gang && gang.waitingSince === undefined && topologyOnly ? now : undefined;
}

/** The Pods (`ns/name`, from the Workload's Pod owner references) a timed-out gang annotates. */
export function timedOutPods(info: WorkloadInfo): string[] {
  return (info.workload.metadata.ownerReferences ?? [])
    .filter((o) => o.kind === 'Pod' && o.apiVersion === CoreApiVersion.V1)
    .map((o) => `${info.namespace}/${o.name}`);
}
