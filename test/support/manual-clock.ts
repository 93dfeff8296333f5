/**
 * A clock that moves only when the test says so (a gateway's deployment health through `testHooks.healthClock`), so a
 * cooldown's last and first millisecond can be checked without sleeping. It starts at the real time, so windows and
 * bucket names look as they would in production.
 */
export interface ManualClock {
  now: () => number;
  advance(ms: number): void;
}

export function manualClock(start = Date.now()): ManualClock {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
