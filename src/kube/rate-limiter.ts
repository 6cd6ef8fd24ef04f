// Client-side rate limiting, as client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter):
// `qps` tokens a second, at most `burst` saved up; each request takes one and waits its turn
// when there is none. client-go's defaults are 5 QPS with a burst of 10; Kueue's
// Configuration raises them to 50 and 100 (clientConnection.qps / burst).

export const CLIENT_GO_QPS = 5;
export const CLIENT_GO_BURST = 10;

export class TokenBucket {
  private tokens: number;
  private last: number;
  /** Milliseconds requests spent waiting for a token, in total (reported by the bench). */
  throttledMs = 0;

  constructor(
    readonly qps: number = CLIENT_GO_QPS,
    readonly burst: number = CLIENT_GO_BURST,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(qps > 0) || !Number.isFinite(qps)) throw new RangeError(`qps must be a positive number, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) throw new RangeError(`burst must be a positive integer, got ${burst}`);
    this.tokens = burst;
    this.last = this.now();
  }

  /** Milliseconds the caller must wait before its request may go (0: at once); takes the token. */
  reserve(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.qps) / 1000);
    this.last = t;
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    // In debt: this request goes when the debt is paid back.
    return (-this.tokens * 1000) / this.qps;
  }

  /** Resolves when the request may go. */
  async take(): Promise<void> {
    const wait = this.reserve();
    if (wait <= 0) return;
    this.throttledMs += wait;
    await new Promise((r) => setTimeout(r, wait));
  }
}
