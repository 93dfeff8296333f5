import { describe, expect, it } from 'vitest';
import { attemptsJson } from '../../src/request-log/record.js';
import type { AttemptRecord } from '../../src/routing/dispatch.js';

const attempt = (overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  model: 'gpt-4o-mini',
  deployment: 'openai/gpt-4o-mini',
  provider: 'openai',
  upstreamModel: 'gpt-4o-mini',
  outcome: 'success',
  status: 200,
  code: null,
  waitedMs: 0,
  latencyMs: 412,
  ...overrides,
});

describe('the attempts column', () => {
  it('is the same text JSON.stringify writes', () => {
    const cases: AttemptRecord[][] = [
      [attempt()],
      [
        attempt({ outcome: 'error', status: 429, code: 'rate_limit_exceeded', waitedMs: 0, latencyMs: 37 }),
        attempt({ deployment: 'azure/gpt-4o-mini', provider: 'azure', waitedMs: 1250 }),
      ],
      [attempt({ outcome: 'skipped', deployment: '', provider: '', upstreamModel: '', status: 400, latencyMs: 0 })],
      // Names and codes that need escaping: quotes, backslashes, control and non-ASCII characters, a lone surrogate.
      [attempt({ model: 'say "hi"\\\n\u0001', code: 'bad\tcode "x"', upstreamModel: 'modèle-😀\ud800' })],
      [attempt({ latencyMs: Number.NaN, waitedMs: Number.POSITIVE_INFINITY, status: -0 })],
    ];
    for (const attempts of cases) {
      expect(attemptsJson(attempts)).toBe(JSON.stringify(attempts));
      expect(JSON.parse(attemptsJson(attempts))).toEqual(JSON.parse(JSON.stringify(attempts)));
    }
  });

  it('stays right for names seen again and for many distinct names', () => {
    for (let round = 0; round < 3; round++) {
      for (let index = 0; index < 1_500; index++) {
        const attempts = [attempt({ model: `model-${index}`, deployment: `provider/model-${index}` })];
        expect(attemptsJson(attempts)).toBe(JSON.stringify(attempts));
      }
    }
  });
});
