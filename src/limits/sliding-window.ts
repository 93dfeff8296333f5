/**
 * A 60-second sliding window in one-second buckets: the in-process twin of the Redis hash the Lua script keeps,
 * with the same arithmetic, so a single node and a cluster count alike.
 */
export class SlidingWindow {
  private readonly seconds = new Float64Array(60);
  private readonly counts = new Float64Array(60);

  total(nowSecond: number): number {
    let sum = 0;
    for (let slot = 0; slot < 60; slot++) {
      if ((this.seconds[slot] as number) > nowSecond - 60) sum += this.counts[slot] as number;
    }
    return sum;
  }

  add(nowSecond: number, amount: number): void {
    const slot = nowSecond % 60;
    if (this.seconds[slot] !== nowSecond) {
      this.seconds[slot] = nowSecond;
      this.counts[slot] = 0;
    }
    this.counts[slot] = (this.counts[slot] as number) + amount;
  }

  /** Corrects an earlier reservation; ignored once its second has left the window. */
  adjust(second: number, delta: number): void {
    const slot = second % 60;
    if (this.seconds[slot] !== second) return;
    this.counts[slot] = Math.max(0, (this.counts[slot] as number) + delta);
  }

  /** Milliseconds until `needed` more would fit under `limit`, as the oldest buckets expire. */
  retryAfterMs(nowMs: number, needed: number, limit: number): number {
    const nowSecond = Math.floor(nowMs / 1000);
    const active: Array<[number, number]> = [];
    for (let slot = 0; slot < 60; slot++) {
      const second = this.seconds[slot] as number;
      if (second > nowSecond - 60 && (this.counts[slot] as number) > 0)
        active.push([second, this.counts[slot] as number]);
    }
    active.sort((a, b) => a[0] - b[0]);
    const total = active.reduce((sum, [, count]) => sum + count, 0);
    let freed = 0;
    for (const [second, count] of active) {
      freed += count;
      if (total - freed + needed <= limit) return Math.max(1, (second + 60) * 1000 - nowMs);
    }
    return 60_000;
  }

  /** Milliseconds until everything counted now has left the window. */
  resetMs(nowMs: number): number {
    const nowSecond = Math.floor(nowMs / 1000);
    let newest = -1;
    for (let slot = 0; slot < 60; slot++) {
      const second = this.seconds[slot] as number;
      if (second > nowSecond - 60 && (this.counts[slot] as number) > 0 && second > newest) newest = second;
    }
    return newest < 0 ? 0 : Math.max(0, (newest + 60) * 1000 - nowMs);
  }
}
