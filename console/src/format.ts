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
const hourOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const integer = new Intl.NumberFormat();
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export const formatTime = (iso: string) => dateTime.format(new Date(iso));
export const formatShortTime = (iso: string) => shortDateTime.format(new Date(iso));
export const formatDay = (iso: string) => dayOnly.format(new Date(iso));
export const formatHour = (iso: string) => hourOnly.format(new Date(iso));
export const formatInteger = (value: number) => integer.format(value);
export const formatCompact = (value: number) =>
  Math.abs(value) < 10_000 ? integer.format(value) : compact.format(value);

export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

export function formatCost(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value === 0) return '$0';
  if (value < 0.01) return `$${value.toFixed(6)}`;
  return `$${value.toFixed(value < 100 ? 4 : 2)}`;
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
  models: '/v1/models',
  model: '/v1/models/{id}',
  messages: '/v1/messages',
  count_tokens: '/v1/messages/count_tokens',
  responses: '/v1/responses',
  responses_retrieve: 'GET /v1/responses/{id}',
  responses_delete: 'DELETE /v1/responses/{id}',
  responses_input_items: '/v1/responses/{id}/input_items',
};

/** An endpoint as the console shows it: its path when known, else its name; rows logged before it was kept: –. */
export const formatEndpoint = (endpoint: string | null) =>
  endpoint === null ? '–' : (endpointPaths[endpoint] ?? endpoint);
