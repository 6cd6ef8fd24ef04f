// Expectations (client-go's ControllerExpectations, Kueue's ungater store): after issuing
// writes a controller records the uids it expects to see changed; until the informer has
// shown every one of them, the controller's view is stale and it must not act on it again
// (the TopologyUngater would otherwise ungate a pod twice onto different domains).

export class Expectations {
  private readonly pending = new Map<string, Set<string>>();

  /** Records uids expected for `key` (added to any still outstanding). */
  expect(key: string, uids: Iterable<string>): void {
    let s = this.pending.get(key);
    if (!s) {
      s = new Set();
      this.pending.set(key, s);
    }
    for (const u of uids) s.add(u);
    if (s.size === 0) this.pending.delete(key);
  }

  /** The informer showed the change (or the write failed, or the object is gone). */
  observe(key: string, uid: string): void {
    const s = this.pending.get(key);
    if (!s) return;
    s.delete(uid);
    if (s.size === 0) this.pending.delete(key);
  }

  satisfied(key: string): boolean {
    return !this.pending.has(key);
  }

  outstanding(key: string): number {
    return this.pending.get(key)?.size ?? 0;
  }

  forget(key: string): void {
    this.pending.delete(key);
  }
}
