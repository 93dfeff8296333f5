/**
 * Human-friendly units in configuration and CLI flags: durations like "500ms", "30s", "24h", "30d" and sizes like
 * "512kb", "8mb". Plain numbers are milliseconds and bytes.
 */

const durationUnits: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const sizeUnits: Record<string, number> = {
  b: 1,
  kb: 1024,
  k: 1024,
  mb: 1024 * 1024,
  m: 1024 * 1024,
  gb: 1024 * 1024 * 1024,
  g: 1024 * 1024 * 1024,
};

/** Parses "30s" / "1h30m" / 1500 into milliseconds; returns undefined when the text is not a duration. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;
  let total = 0;
  let consumed = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index !== consumed) return undefined;
    const amount = Number(match[1]);
    const unit = durationUnits[match[2] ?? ''];
    if (unit === undefined) return undefined;
    total += amount * unit;
    consumed += match[0].length;
  }
  return consumed === text.length && consumed > 0 ? Math.round(total) : undefined;
}

/** Parses "8mb" / "512kb" / 1048576 into bytes; returns undefined when the text is not a size. */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/.exec(value.trim().toLowerCase());
  if (!match) return undefined;
  const unit = sizeUnits[match[2] ?? 'b'] ?? 1;
  return Math.round(Number(match[1]) * unit);
}

/** Formats milliseconds for people: 90000 -> "1m30s". */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.round(milliseconds)}ms`;
  let remaining = Math.round(milliseconds / 1000);
  const parts: string[] = [];
  for (const [unit, seconds] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (remaining >= seconds) {
      parts.push(`${Math.floor(remaining / seconds)}${unit}`);
      remaining %= seconds;
    }
  }
  return parts.join('');
}
