// Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection: only
// the holder of the lease runs the controllers; the others retry every retryPeriod and take
// the lease once its holder has not renewed it for leaseDuration (timed on the local clock
// from when this candidate last saw the lease change, as client-go does, so clocks that
// disagree do not matter). The leader renews every retryPeriod; when it cannot renew for
// renewDeadline it stops leading (the process exits and restarts, as Kueue's does). A
// graceful stop releases the lease so a standby takes over at once.

import type { KObject } from '../api/objects.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../runtime/store.ts';

export interface Lease extends KObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** Reads and writes of the one Lease, straight to the API server (no cache: RBAC grants only this namespace's leases). */
export interface LeaseClient {
  get(namespace: string, name: string): Promise<Lease | undefined>;
  create(lease: Lease): Promise<Lease>;
  update(lease: Lease): Promise<Lease>;
}

/** A LeaseClient over requests to `coordination.k8s.io/v1` (ClientStore.request). */
export function leaseClient(request: <T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) => Promise<T>): LeaseClient {
  const path = (ns: string, name?: string) =>
    `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/leases${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
  return {
    get: async (ns, name) => {
      try {
        return await request<Lease>('GET', path(ns, name));
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    create: (lease) => request<Lease>('POST', path(lease.metadata.namespace!), lease),
    update: (lease) => request<Lease>('PUT', path(lease.metadata.namespace!, lease.metadata.name), lease),
  };
}

export interface LeaderElectorOptions {
  leases: LeaseClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void;
  now?: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** RFC 3339 with microseconds, as metav1.MicroTime. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The lease's resourceVersion when last seen, and when (local time). */
  private observed: { rv?: string; at: number } = { at: 0 };
  private lastRenew = 0;
  private readonly now: () => number;

  constructor(private readonly o: LeaderElectorOptions) {
    this.now = o.now ?? (() => Date.now());
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning; returns at once. */
  run(): void {
    void this.tick();
  }

  /** Stops; a leader releases the lease (holderIdentity cleared) so a standby need not wait it out. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.o.leases.get(this.o.namespace, this.o.name);
      if (lease?.spec?.holderIdentity === this.o.identity) {
        await this.o.leases.update({
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(this.now()) },
        });
      }
    } catch {
      // the lease runs out on its own
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.o.retryPeriodMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (e) {
      this.o.log?.('lease request failed', { err: (e as Error).message });
    }
    if (this.stopped) return;
    const t = this.now();
    if (ok) {
      this.lastRenew = t;
      if (!this.leading) {
        this.leading = true;
        this.o.log?.('became leader', { lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity });
        await this.o.onStartedLeading();
      }
    } else if (this.leading && t - this.lastRenew > this.o.renewDeadlineMs) {
      this.leading = false;
      this.stopped = true;
      this.o.log?.('lost the lease', { lease: `${this.o.namespace}/${this.o.name}` });
      this.o.onStoppedLeading();
      return;
    }
    this.schedule();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { leases, namespace, name, identity } = this.o;
    const t = this.now();
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.o.leaseDurationMs / 1000),
      acquireTime: microTime(t),
      renewTime: microTime(t),
      leaseTransitions: 0,
    };
    const lease = await leases.get(namespace, name);
    if (!lease) {
      try {
        await leases.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec });
        return true;
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    if (lease.metadata.resourceVersion !== this.observed.rv) this.observed = { rv: lease.metadata.resourceVersion, at: t };
    const holder = lease.spec?.holderIdentity ?? '';
    const duration = (lease.spec?.leaseDurationSeconds ?? 15) * 1000;
    if (holder !== '' && holder !== identity && this.observed.at + duration > t) return false;
    const mine = holder === identity;
    const next: Lease = {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: identity,
        leaseDurationSeconds: spec.leaseDurationSeconds,
        renewTime: spec.renewTime,
        acquireTime: mine ? (lease.spec?.acquireTime ?? spec.acquireTime) : spec.acquireTime,
        leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    try {
      const written = await leases.update(next);
      this.observed = { rv: written.metadata.resourceVersion, at: t };
      return true;
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
  }
}
