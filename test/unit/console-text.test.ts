import { describe, expect, it } from 'vitest';
import { ApiFailure } from '../../console/src/api.js';
import { readableMessage } from '../../console/src/error-text.js';
import { formatCompactTime, formatCost, formatWeekday, unknownCostReason } from '../../console/src/format.js';
import { keyLabeller } from '../../console/src/key-labels.js';
import type { ApiKeyView } from '../../console/src/types.js';

/** How the console words errors, costs, times and key names. */

describe('readableMessage', () => {
  it('turns API text into sentences with fields in words', () => {
    expect(
      readableMessage(new ApiFailure(409, 'a user with e-mail a@b.test already exists', 'user_exists', null)),
    ).toBe('A user with e-mail a@b.test already exists.');
    expect(
      readableMessage(
        new ApiFailure(
          400,
          "Invalid body field 'name': Too big: expected string to have <=64 characters",
          'invalid_request',
          'name',
        ),
      ),
    ).toBe('The name is not valid: too big: expected string to have <=64 characters.');
    expect(
      readableMessage(
        new ApiFailure(
          403,
          'dailyBudgetUsd is bounded by the operator at $5: an account owner may set it lower, not higher or unlimited. Ask the operator to change it.',
          'limit_set_by_operator',
          null,
        ),
      ),
    ).toBe(
      'The daily budget is bounded by the operator at $5: an account owner may set it lower, not higher or unlimited. Ask the operator to change it.',
    );
    expect(readableMessage(new ApiFailure(400, 'from must be earlier than to', 'invalid_request', 'from'))).toBe(
      'The start time must be earlier than the end time.',
    );
  });

  it('says what to do about a server failure, and keeps sentences that are already sentences', () => {
    expect(readableMessage(new ApiFailure(500, 'internal error', 'internal_error', null))).toBe(
      'The server could not do this (error 500): Internal error. Try again; if it keeps failing, tell the operator.',
    );
    expect(readableMessage(new ApiFailure(401, 'The current password is not correct.', null, null))).toBe(
      'The current password is not correct.',
    );
    expect(readableMessage(new Error('choose at least one model'))).toBe('Choose at least one model.');
  });
});

describe('formatCost', () => {
  it('reads the same for every failed request, whatever its status class', () => {
    expect(formatCost(null, 'error')).toBe('$0');
    expect(formatCost(0, 'error')).toBe('$0');
    expect(formatCost(null, 'cancelled')).toBe('$0');
    expect(formatCost(null, 'success')).toBe('–');
    expect(formatCost(0.0000001)).toBe('< $0.000001');
    expect(formatCost(0.0015)).toBe('$0.001500');
  });
});

describe('times', () => {
  it('shows a day without a midnight time, and a log time as short as stays unambiguous', () => {
    expect(formatWeekday('2026-10-27T00:00:00Z')).not.toMatch(/12:00|00:00/);
    const now = new Date('2026-11-27T15:00:00');
    expect(formatCompactTime(new Date('2026-11-27T09:05:03').toISOString(), now)).not.toMatch(/Nov|2026/);
    expect(formatCompactTime(new Date('2026-11-20T09:05:03').toISOString(), now)).toMatch(/Nov/);
    expect(formatCompactTime(new Date('2025-11-20T09:05:03').toISOString(), now)).toMatch(/2025/);
  });
});

describe('keyLabeller', () => {
  const key = (id: string, name: string, display: string, accountId = 'acct_1') =>
    ({ id, name, display, accountId }) as ApiKeyView;

  it('adds the display suffix only where keys of one account share a name', () => {
    const label = keyLabeller([
      key('key_old', 'checkout', 'sk-sb-…AAAA'),
      key('key_new', 'checkout', 'sk-sb-…BBBB'),
      key('key_batch', 'batch', 'sk-sb-…CCCC'),
      key('key_other', 'batch', 'sk-sb-…DDDD', 'acct_2'),
    ]);
    expect(label('key_old', 'checkout')).toBe('checkout …AAAA');
    expect(label('key_new', 'checkout')).toBe('checkout …BBBB');
    expect(label('key_batch', 'batch')).toBe('batch');
    expect(label('key_gone', 'deleted-key')).toBe('deleted-key');
  });
});

describe('unknownCostReason', () => {
  const row = { costUsd: null, outcome: 'success', model: 'm', servedModel: null, deployment: 'p/u' };
  it('names the model that answered and its deployment when it had no prices', () => {
    expect(unknownCostReason(row)?.unpricedModel).toBe('m');
    expect(unknownCostReason({ ...row, servedModel: 'fallback', deployment: 'q/v' })).toEqual({
      unpricedModel: 'fallback',
      text: 'No price configured for model fallback (deployment q/v): it counts as $0 against budgets.',
    });
  });
  it('tells a request that called no model apart, and has nothing to say of a known cost', () => {
    expect(unknownCostReason({ ...row, model: '', deployment: null })?.unpricedModel).toBeUndefined();
    expect(unknownCostReason({ ...row, costUsd: 0.5 })).toBeUndefined();
    expect(unknownCostReason({ ...row, outcome: 'error' })).toBeUndefined();
  });
});
