import { randomFillSync } from 'node:crypto';

/**
 * Request ids: `req_` + 32 lowercase hex digits, the first 12 the arrival time in milliseconds and the other 20
 * random (80 bits). Time first, because the request log indexes request_id: random ids land anywhere in that index and
 * every insert touches another page; time-ordered ids are appended at its end (docs/performance.md#request-ids). Ids of the same millisecond differ in their random part; nothing relies on their order.
 *
 * One generator per owner (the data plane, the HTTP server): it draws randomness 5 KB at a time and reuses the time
 * prefix within a millisecond.
 */
export class RequestIds {
  private readonly random = Buffer.allocUnsafe(10 * 512);
  private offset = this.random.length;
  private prefixTime = -1;
  private prefix = '';

  next(now: number = Date.now()): string {
    if (this.offset === this.random.length) {
      randomFillSync(this.random);
      this.offset = 0;
    }
    const random = this.random.toString('hex', this.offset, this.offset + 10);
    this.offset += 10;
    if (now !== this.prefixTime) {
      this.prefixTime = now;
      this.prefix = `req_${Math.max(0, Math.floor(now)).toString(16).padStart(12, '0')}`;
    }
    return this.prefix + random;
  }
}
