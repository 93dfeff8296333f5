/** How numbers and times read in the console. Times are shown in the viewer's time zone. */

const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const shortDateTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});
const dayOnly = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const weekdayAndDay = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric' });
const timeOfDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dayAndTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const hourOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const integer = new Intl.NumberFormat();
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export const formatTime = (iso: string) => dateTime.format(new Date(iso));
export const formatShortTime = (iso: string) => shortDateTime.format(new Date(iso));
export const formatDay = (iso: string) => dayOnly.format(new Date(iso));
export const formatHour = (iso: string) => hourOnly.format(new Date(iso));
/** A whole day (a daily bucket): "Mon, 27 Oct", never with a midnight time. */
export const formatWeekday = (iso: string) => weekdayAndDay.format(new Date(iso));
/** A bucket's start as a row label: the day for daily buckets, day and hour for hourly ones. */
export const formatBucket = (iso: string, bucket: 'hour' | 'day') =>
  bucket === 'day' ? formatWeekday(iso) : formatShortTime(iso);

/**
 * A log row's time, as short as stays unambiguous: the time alone today, day and time this year, else in full (the
 * exact time is in the cell's tooltip). Keeps the log's first column narrow enough for every column to fit.
 */
export function formatCompactTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (date.toDateString() === now.toDateString()) return timeOfDay.format(date);
  if (date.getFullYear() === now.getFullYear()) return dayAndTime.format(date);
  return dateTime.format(date);
}
export const formatInteger = (value: number) => integer.format(value);
export const formatCompact = (value: number) =>
  Math.abs(value) < 10_000 ? integer.format(value) : compact.format(value);

export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

/**
 * A cost in US dollars. `outcome`, for one request: a failed or cancelled request with no cost recorded cost nothing,
 * so it reads "$0" whatever its status class; only a success without a price configured reads "–" (unknown).
 */
export function formatCost(value: number | null | undefined, outcome?: string): string {
  if ((value === null || value === undefined) && outcome !== undefined && outcome !== 'success') return '$0';
  if (value === null || value === undefined) return '–';
  if (value === 0) return '$0';
  if (value < 0.000_001) return '< $0.000001';
  if (value < 0.01) return `$${value.toFixed(6)}`;
  return `$${value.toFixed(value < 100 ? 4 : 2)}`;
}

/**
 * Why one request's cost reads "–" (see formatCost), or undefined when it does not: a success served by a deployment
 * without prices (it counts as $0 against budgets, like the models GET …/budgets lists as unpricedModels), or a
 * request that called no model (a model list).
 */
export function unknownCostReason(entry: {
  costUsd: number | null;
  outcome: string;
  model: string;
  servedModel: string | null;
  deployment: string | null;
}): { unpricedModel: string | undefined; text: string } | undefined {
  if (formatCost(entry.costUsd, entry.outcome) !== '–') return undefined;
  const model = entry.servedModel ?? entry.model;
  if (entry.deployment === null || model === '') {
    return { unpricedModel: undefined, text: 'No model was called: there is nothing to price.' };
  }
  return {
    unpricedModel: model,
    text: `No price configured for model ${model} (deployment ${entry.deployment}): it counts as $0 against budgets.`,
  };
}

/** Dollars on a chart's axis: as few digits as tell the steps apart. */
export function formatCostAxis(value: number): string {
  if (value === 0) return '$0';
  if (value >= 100) return `$${Math.round(value)}`;
  if (value >= 0.01) return `$${value.toFixed(2)}`;
  return `$${Number(value.toPrecision(2))}`;
}

/** "3 minutes ago", "in 2 days": for last-used and expiry columns (the exact time goes in a tooltip). */
export function formatRelative(iso: string | null, now = Date.now()): string {
  if (iso === null) return 'never';
  const difference = new Date(iso).getTime() - now;
  const seconds = Math.round(difference / 1000);
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ];
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return Math.abs(seconds) < 10 ? 'just now' : relative.format(seconds, 'second');
}

/** The path a client called, for each endpoint name the request log records (see /api's `endpoint` filter). */
export const endpointPaths: Record<string, string> = {
  chat_completions: '/v1/chat/completions',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
  responses: '/v1/responses',
  responses_retrieve: 'GET /v1/responses/{id}',
  responses_delete: 'DELETE /v1/responses/{id}',
  responses_input_items: '/v1/responses/{id}/input_items',
  messages: '/v1/messages',
  count_tokens: '/v1/messages/count_tokens',
  models: '/v1/models',
  model: '/v1/models/{id}',
};

/** Endpoints that run a model (their latency is a model's); the others answer from the gateway itself. */
export const inferenceEndpoints = new Set(['chat_completions', 'completions', 'embeddings', 'responses', 'messages']);

/** An endpoint as the console shows it: its path when known, else its name; rows logged before it was kept: –. */
export const formatEndpoint = (endpoint: string | null) =>
  endpoint === null ? '–' : (endpointPaths[endpoint] ?? endpoint);
