import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/server/cancellation.js';
import { InFlightRequests } from '../../src/server/in-flight.js';

/** The registry must behave exactly like the Set it replaced, whatever order requests start and finish in. */
describe('in-flight requests', () => {
  it('holds exactly what a Set would, through any sequence of adds and removals', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ add: fc.boolean(), which: fc.nat(19) }), { maxLength: 200 }), (steps) => {
        const cancellations = Array.from({ length: 20 }, () => new Cancellation());
        const registry = new InFlightRequests();
        const model = new Set<Cancellation>();
        for (const { add, which } of steps) {
          const cancellation = cancellations[which] as Cancellation;
          if (add && !model.has(cancellation)) {
            registry.add(cancellation);
            model.add(cancellation);
          } else if (!add) {
            registry.delete(cancellation);
            model.delete(cancellation);
          }
          expect(registry.size).toBe(model.size);
        }
        registry.abortAll('shutdown');
        for (const cancellation of cancellations) expect(cancellation.aborted).toBe(model.has(cancellation));
      }),
    );
  });

  it('ignores removing what it does not hold, or removing twice', () => {
    const registry = new InFlightRequests();
    const held = new Cancellation();
    const other = new Cancellation();
    registry.add(held);
    registry.delete(other);
    registry.delete(held);
    registry.delete(held);
    expect(registry.size).toBe(0);
    registry.abortAll('shutdown');
    expect(held.aborted).toBe(false);
  });

  it('aborts every request even when an abort finishes a request and removes it', () => {
    const registry = new InFlightRequests();
    const cancellations = [new Cancellation(), new Cancellation(), new Cancellation()];
    for (const cancellation of cancellations) {
      registry.add(cancellation);
      cancellation.addEventListener('abort', () => registry.delete(cancellation));
    }
    registry.abortAll('shutdown');
    expect(cancellations.every((cancellation) => cancellation.aborted)).toBe(true);
    expect(registry.size).toBe(0);
  });
});
