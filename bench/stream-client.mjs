// A small streaming client for what wrk cannot see: time to first token and the gaps between chunks of SSE
// streams, and many streams held open at once (for memory). One stream at a time for latency, so the client
// itself never queues.
import { Agent, request } from 'undici';

function percentile(sorted, fraction) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
}

/**
 * Runs `count` streams one after another. TTFT: from sending the request to the first content event (not the
 * role-only first chunk). Gaps: between consecutive content events. `batched` counts reads that carried more than
 * one content event (a proxy that batches chunks shows it here).
 */
export async function measureStreams({ url, headers = {}, body, count }) {
  const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 60_000 });
  const ttfts = [];
  const gaps = [];
  let batched = 0;
  let reads = 0;
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const response = await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    if (response.statusCode !== 200)
      throw new Error(`stream answered ${response.statusCode}: ${await response.body.text()}`);
    let first;
    let previous;
    for await (const part of response.body) {
      const now = performance.now();
      const events = (part.toString().match(/"content":"token/g) ?? []).length;
      if (events === 0) continue;
      reads++;
      if (events > 1) batched++;
      if (first === undefined) {
        first = now;
        ttfts.push((now - started) * 1000);
      } else {
        gaps.push((now - previous) * 1000);
      }
      previous = now;
    }
  }
  await dispatcher.close();
  return { ttft: summarize(ttfts), gap: summarize(gaps), batchedReads: batched, reads };
}

/**
 * Opens `count` streams at once; resolves when all have ended. `onAllOpen` runs once every stream has begun, and is
 * given a function that says how many have ended since (a reading meant to see them all open can check it).
 */
export async function holdStreams({ url, headers = {}, body, count, onAllOpen }) {
  const dispatcher = new Agent({
    connections: count + 8,
    keepAliveTimeout: 60_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  let open = 0;
  let ended = 0;
  let failures = 0;
  let resolveAllOpen;
  const allOpen = new Promise((resolve) => {
    resolveAllOpen = resolve;
  });
  const streams = Array.from({ length: count }, async () => {
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      if (++open === count) resolveAllOpen();
      const text = await response.body.text();
      ended++;
      if (response.statusCode !== 200 || !text.endsWith('data: [DONE]\n\n')) failures++;
    } catch {
      failures++;
      ended++;
      if (++open === count) resolveAllOpen();
    }
  });
  await allOpen;
  const sample = await onAllOpen?.(() => ended);
  await Promise.all(streams);
  await dispatcher.close();
  return { failures, sample };
}
