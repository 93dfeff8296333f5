import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountId, createTestUser, signIn } from './support/console.js';
import { createTestDatabase } from './support/database.js';
import { startTestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * docs/operations.md, "Limits and budgets": a model without `pricing` counts as free against budgets, so a gateway
 * with any budget in force (a configured default, or one set on an account or key) says at start-up which models
 * have no prices; a gateway without budgets says nothing. GET /api/accounts/{id}/budgets lists the ones the account
 * may call.
 */

let mock: MockUpstream;
beforeAll(async () => {
  mock = await startMockUpstream();
});
afterAll(async () => {
  await mock?.close();
});

const unpriced = { name: 'unpriced-model', provider: 'mock', upstream_model: 'mock' };
const warning = 'budgets are set but these models have no pricing';
const warningsIn = (lines: string[]) => lines.filter((line) => line.includes(warning));

describe('models without pricing', () => {
  it('are named at start-up when a default budget is configured', async () => {
    const gateway = await startTestGateway({
      mock,
      models: [unpriced],
      config: { limits: { key_defaults: { daily_budget_usd: 5 } } },
    });
    try {
      const [line] = warningsIn(gateway.logLines);
      expect(line).toContain('unpriced-model');
      // Priced models are not listed.
      expect(line).not.toContain('gpt-4o-mini');
      // An account holder reads the same next to the budgets: the models it may call that cost $0 against them.
      await createTestUser(gateway, { email: 'member@acme.test', account: 'acme', role: 'member' });
      const member = await signIn(gateway, 'member@acme.test');
      const budgets = await member.request('GET', `/api/accounts/${await accountId(gateway, 'acme')}/budgets`);
      expect(budgets.status).toBe(200);
      expect(budgets.body.unpricedModels).toEqual(['unpriced-model']);
    } finally {
      await gateway.close();
    }
  });

  it('are named at start-up once a key has a budget of its own, and not before', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-unpriced-'));
    const database = await createTestDatabase();
    try {
      const first = await startTestGateway({ mock, models: [unpriced], dataDir, database });
      try {
        expect(warningsIn(first.logLines)).toEqual([]);
        await first.newKey({ name: 'budgeted', limits: { monthlyBudgetUsd: 20 } });
      } finally {
        await first.close();
      }
      const second = await startTestGateway({ mock, models: [unpriced], dataDir, database });
      try {
        expect(warningsIn(second.logLines).join('\n')).toContain('unpriced-model');
      } finally {
        await second.close();
      }
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
