import { z } from 'zod';

/**
 * The shapes the management API returns, as zod schemas: they document the API (openapi.ts turns them into JSON
 * Schema), the console imports their inferred types, and the tests parse real responses with them, so a response
 * that drifts from its documentation fails a test.
 */

const isoTime = z.string().describe('ISO 8601 time, UTC');
const id = (prefix: string) => z.string().describe(`identifier, "${prefix}_…"`);

export const roleSchema = z.enum(['owner', 'member']);

export const userSchema = z.object({
  id: id('user'),
  email: z.string(),
  admin: z.boolean(),
  disabled: z.boolean(),
  hasPassword: z.boolean(),
  createdAt: isoTime,
  lastSignInAt: isoTime.nullable(),
  createdByInvitation: z
    .object({ accountId: id('acct'), invitedBy: z.string().nullable().describe('user id of the inviter') })
    .nullable()
    .describe(
      "set while the login is tied to the account whose owner's invitation created it; an operator confirms it " +
        'before trusting it elsewhere',
    ),
});

export const membershipSchema = z.object({
  accountId: id('acct'),
  accountName: z.string(),
  role: roleSchema,
  accountDisabled: z.boolean(),
});

export const userWithMembershipsSchema = userSchema.extend({ memberships: z.array(membershipSchema) });

/** A configured default for each limit (limits.account_defaults, limits.key_defaults); null = no limit. */
const limitDefaultsSchema = z.object({
  requestsPerMinute: z.number().int().nullable(),
  tokensPerMinute: z.number().int().nullable(),
  concurrentRequests: z.number().int().nullable(),
  dailyBudgetUsd: z.number().nullable(),
  monthlyBudgetUsd: z.number().nullable(),
});

export const sessionSchema = z.object({
  user: z.object({ id: id('user'), email: z.string(), admin: z.boolean() }),
  memberships: z.array(membershipSchema),
  /** Send it back in the x-csrf-token header of every POST, PATCH and DELETE made with the session cookie. */
  csrfToken: z.string().describe('send back in the x-csrf-token header of state-changing requests'),
  expiresAt: isoTime,
  limitDefaults: z
    .object({ account: limitDefaultsSchema, key: limitDefaultsSchema })
    .describe('what applies where an account or key leaves a limit unset'),
});

export const passwordChangedSchema = z.object({
  sessionsEnded: z.number().int().describe('other console sessions of the user that were ended'),
  managementTokensRevoked: z.number().int().describe("the user's management tokens that were revoked"),
  csrfToken: z.string().describe('the CSRF token of the new session that replaces the one making the change'),
  message: z.string(),
});

/** Limits set on an account or key; a field left out follows the configured defaults, null removes that limit. */
export const limitsSchema = z
  .object({
    requestsPerMinute: z.number().int().min(1).nullable().optional().describe('sliding 60-second window'),
    tokensPerMinute: z.number().int().min(1).nullable().optional().describe('prompt + completion, sliding 60 s'),
    concurrentRequests: z.number().int().min(1).nullable().optional(),
    dailyBudgetUsd: z.number().min(0).nullable().optional().describe('US dollars per UTC day'),
    monthlyBudgetUsd: z.number().min(0).nullable().optional().describe('US dollars per UTC month'),
  })
  .describe('limits set here; absent fields follow limits.*_defaults in the configuration, null = no limit');

export const accountSchema = z.object({
  id: id('acct'),
  name: z.string(),
  models: z.array(z.string()).describe('models the account may call; ["*"] = every configured model'),
  disabled: z.boolean(),
  logBodies: z.boolean(),
  limits: limitsSchema,
  createdAt: isoTime,
  role: roleSchema.nullable().describe("the caller's role; null for an admin who is not a member"),
});

export const keyStatusSchema = z.enum(['active', 'expiring', 'expired', 'revoked']);

export const apiKeySchema = z.object({
  id: id('key'),
  accountId: id('acct'),
  name: z.string(),
  environment: z.string().nullable(),
  display: z.string().describe('prefix and last four characters; the key itself is never returned again'),
  models: z.array(z.string()).nullable().describe('null: every model of the account; otherwise narrower'),
  status: keyStatusSchema.describe('expiring: rotated, still valid until expiresAt'),
  createdAt: isoTime,
  lastUsedAt: isoTime.nullable(),
  expiresAt: isoTime.nullable(),
  revokedAt: isoTime.nullable(),
  replacedBy: z.string().nullable(),
  limits: limitsSchema,
  operatorLimits: limitsSchema.describe(
    'the limits an operator set on the key: an account owner may set lower values, never higher ones or none',
  ),
  limitsSetBy: z
    .partialRecord(
      z.enum(['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests', 'dailyBudgetUsd', 'monthlyBudgetUsd']),
      z.object({
        role: z.enum(['operator', 'owner']),
        userId: z.string().nullable().describe('null: the operator at the command line'),
      }),
    )
    .describe('who set each limit of the key last'),
});

export const createdKeySchema = apiKeySchema.extend({
  key: z.string().describe('the API key; shown in this response only, never again'),
});

export const rotatedKeySchema = createdKeySchema.extend({ previous: apiKeySchema });

export const logEntrySchema = z.object({
  id: z.number().int(),
  requestId: z.string(),
  time: isoTime,
  endpoint: z
    .string()
    .nullable()
    .describe('the data-plane endpoint that served it (chat_completions, models, model…); null on rows logged before'),
  accountId: id('acct'),
  keyId: id('key'),
  keyName: z.string(),
  model: z.string(),
  provider: z.string().nullable(),
  upstreamModel: z.string().nullable(),
  servedModel: z.string().nullable().describe('the model that answered when a fallback did'),
  deployment: z.string().nullable().describe('provider/upstream_model of the deployment that served it'),
  attemptCount: z.number().int().nullable(),
  attempts: z
    .array(
      z.object({
        model: z.string(),
        deployment: z.string(),
        provider: z.string(),
        upstreamModel: z.string(),
        outcome: z.enum(['success', 'error', 'skipped']),
        status: z.number().int(),
        code: z.string().nullable(),
        waitedMs: z.number(),
        latencyMs: z.number(),
      }),
    )
    .describe('every upstream attempt made, in order'),
  status: z.number().int(),
  outcome: z.string().describe('success | error | cancelled (the client went away; status 499)'),
  error: z
    .object({ type: z.string().nullable(), code: z.string().nullable(), message: z.string().nullable() })
    .nullable(),
  stream: z.boolean(),
  latencyMs: z.number(),
  ttftMs: z.number().nullable(),
  usage: z.object({
    promptTokens: z.number().nullable(),
    completionTokens: z.number().nullable(),
    totalTokens: z.number().nullable(),
    cachedTokens: z.number().nullable(),
    cacheWriteTokens: z.number().nullable(),
    reasoningTokens: z.number().nullable(),
    estimated: z.boolean(),
  }),
  costUsd: z
    .number()
    .nullable()
    .describe(
      'US dollars; null when unknown: a request served by a deployment without prices (it counted as $0 against ' +
        "budgets; GET …/budgets lists the account's models without prices as unpricedModels), or one that called " +
        'no model (a model list). A failed request with prices costs 0.',
    ),
  userAgent: z.string().nullable(),
});

export const logPageSchema = z.object({
  data: z.array(logEntrySchema),
  keys: z
    .array(apiKeySchema)
    .describe(
      "the keys of this page's rows, with every key of their accounts that shares one's name (to tell those apart)",
    ),
  nextCursor: z.string().nullable().describe('pass as ?cursor= for the next (older) page; null at the end'),
});

export const logDetailSchema = logEntrySchema.extend({
  bodiesLogged: z.boolean().describe('true when bodies were kept for this request (body logging on for the account)'),
  requestBody: z.string().nullable(),
  responseBody: z.string().nullable(),
});

export const usagePointSchema = z.object({
  start: isoTime,
  requests: z.number().int(),
  errors: z.number().int(),
  cancelled: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  totalTokens: z.number().int(),
  costUsd: z.number(),
  latencyP50Ms: z
    .number()
    .nullable()
    .describe(
      'of successful model calls (model lists and other non-inference requests are left out), from a latency ' +
        'histogram: exact to within its bucket; null when there were none',
    ),
  latencyP95Ms: z.number().nullable(),
});

export const usageTotalsSchema = usagePointSchema.omit({ start: true });

export const usageGroupBySchema = z.enum(['none', 'key', 'model', 'endpoint', 'provider']);

export const usageSchema = z.object({
  from: isoTime,
  to: isoTime,
  bucket: z.enum(['hour', 'day']),
  groupBy: z.enum(['none', 'key', 'model', 'endpoint', 'provider', 'account']),
  totals: usageTotalsSchema,
  series: z.array(
    z.object({
      id: z
        .string()
        .nullable()
        .describe(
          'key id, model name, endpoint, provider or account id; "" for requests without one (no model: a model ' +
            'list, an unreadable body); null when not grouped',
        ),
      name: z.string().nullable().describe('the key or account name, or the id; "(no model)" and the like for ""'),
      label: z
        .string()
        .describe("the name, unique among the series: a key's display form is added where two keys share a name"),
      totals: usageTotalsSchema,
      points: z.array(usagePointSchema),
    }),
  ),
});

const spendFields = {
  requests: z.number().int(),
  errors: z.number().int(),
  totalTokens: z.number().int(),
  costUsd: z.number(),
};

export const accountsUsageSchema = z.object({
  from: isoTime,
  to: isoTime,
  totals: z.object(spendFields),
  accounts: z.array(
    z.object({
      accountId: id('acct'),
      name: z.string(),
      disabled: z.boolean(),
      ...spendFields,
    }),
  ),
});

export const keysUsageSchema = z.object({
  from: isoTime,
  to: isoTime,
  keys: z.array(
    z.object({
      keyId: id('key'),
      name: z.string(),
      display: z.string(),
      ...spendFields,
    }),
  ),
});

export const budgetSchema = z.object({
  period: z.enum(['day', 'month']).describe('UTC calendar day or month'),
  limitUsd: z.number(),
  spentUsd: z.number().describe('spent in the current period, from the request log (its rollups)'),
  remainingUsd: z.number(),
  periodStart: isoTime,
  resetsAt: isoTime.describe('when the period ends and spending starts again from zero'),
  exceeded: z.boolean().describe('true once spent reaches the limit: requests are refused until resetsAt'),
});

export const budgetsSchema = z.object({
  atLimit: z
    .string()
    .describe("what happens when a budget is reached (the same for every budget): the data plane's answer"),
  unpricedModels: z
    .array(z.string())
    .describe(
      'models the account may call that have no prices configured: their requests cost $0 against every budget ' +
        '(their log rows have no cost)',
    ),
  account: z.object({ budgets: z.array(budgetSchema) }),
  keys: z.array(
    z.object({
      keyId: id('key'),
      name: z.string(),
      display: z.string(),
      budgets: z.array(budgetSchema),
    }),
  ),
});

export const modelSchema = z.object({
  id: z.string(),
  provider: z.string(),
  providerType: z.string(),
  ownedBy: z.string(),
  contextWindow: z.number().int().nullable(),
  pricing: z
    .object({
      inputPerMillion: z.number(),
      outputPerMillion: z.number(),
      cachedInputPerMillion: z.number(),
      cacheWritePerMillion: z.number(),
      reasoningPerMillion: z.number(),
    })
    .nullable()
    .describe('US dollars per million tokens'),
});

export const adminModelSchema = modelSchema.extend({ upstreamModel: z.string() });

export const memberSchema = z.object({
  userId: id('user'),
  email: z.string(),
  role: roleSchema,
  disabled: z.boolean(),
  lastSignInAt: isoTime.nullable(),
  since: isoTime,
});

export const invitationSchema = z.object({
  id: id('invite'),
  accountId: id('acct'),
  email: z.string(),
  role: roleSchema,
  createdAt: isoTime,
  expiresAt: isoTime,
});

export const createdInvitationSchema = invitationSchema.extend({
  token: z.string().describe('the invitation secret; shown in this response only'),
  path: z.string().describe('console path that accepts it: the console origin + this path is the link to send'),
});

export const invitationPreviewSchema = z.object({
  email: z.string(),
  accountName: z.string(),
  role: roleSchema,
  expiresAt: isoTime,
  signedInAsInvitee: z
    .boolean()
    .describe('true: the caller is signed in as the invited address and may accept without a password'),
});

export const managementTokenSchema = z.object({
  id: id('mtok'),
  name: z.string(),
  display: z.string(),
  accountId: z.string().nullable().describe('null: every account the user may act on'),
  createdAt: isoTime,
  lastUsedAt: isoTime.nullable(),
  expiresAt: isoTime.nullable(),
  revokedAt: isoTime.nullable(),
  status: z.enum(['active', 'expired', 'revoked']),
});

export const createdManagementTokenSchema = managementTokenSchema.extend({
  token: z.string().describe('the token; shown in this response only'),
});

/** Path parameters. */
export const accountParams = z.strictObject({ accountId: z.string().min(1).max(100) });
export const keyParams = accountParams.extend({ keyId: z.string().min(1).max(100) });

export type UserView = z.infer<typeof userSchema>;
export type UserWithMemberships = z.infer<typeof userWithMembershipsSchema>;
export type Membership = z.infer<typeof membershipSchema>;
export type SessionView = z.infer<typeof sessionSchema>;
export type PasswordChangedView = z.infer<typeof passwordChangedSchema>;
export type AccountView = z.infer<typeof accountSchema>;
export type ApiKeyView = z.infer<typeof apiKeySchema>;
export type CreatedKeyView = z.infer<typeof createdKeySchema>;
export type RotatedKeyView = z.infer<typeof rotatedKeySchema>;
export type LogEntryView = z.infer<typeof logEntrySchema>;
export type LogPage = z.infer<typeof logPageSchema>;
export type LogDetailView = z.infer<typeof logDetailSchema>;
export type UsageView = z.infer<typeof usageSchema>;
export type UsagePoint = z.infer<typeof usagePointSchema>;
export type UsageTotals = z.infer<typeof usageTotalsSchema>;
export type AccountsUsageView = z.infer<typeof accountsUsageSchema>;
export type KeysUsageView = z.infer<typeof keysUsageSchema>;
export type BudgetView = z.infer<typeof budgetSchema>;
export type BudgetsView = z.infer<typeof budgetsSchema>;
export type ModelView = z.infer<typeof modelSchema>;
export type AdminModelView = z.infer<typeof adminModelSchema>;
export type MemberView = z.infer<typeof memberSchema>;
export type InvitationView = z.infer<typeof invitationSchema>;
export type CreatedInvitationView = z.infer<typeof createdInvitationSchema>;
export type InvitationPreviewView = z.infer<typeof invitationPreviewSchema>;
export type ManagementTokenView = z.infer<typeof managementTokenSchema>;
export type CreatedManagementTokenView = z.infer<typeof createdManagementTokenSchema>;
