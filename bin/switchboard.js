#!/usr/bin/env node
// The published entry point: the CLI, compiled and bundled into dist/bundle/ by `npm install` (the prepare script runs
// `npm run build`; see rolldown.config.mjs for why it is bundled).
import v8 from 'node:v8';

// Set before any of our code runs (hence the dynamic import below). V8 "pretenures" an allocation site, allocating its
// objects straight in the old generation, once most of them survive a scavenge. Opening many streams at once makes
// the per-request sites look long-lived; the sites stay pretenured, and every later chunk and request then left its
// garbage in the old generation (the figures: docs/performance.md, "Memory").
v8.setFlagsFromString('--no-allocation-site-pretenuring');

const { runCli, failureLine, wantsJson } = await import('../dist/bundle/switchboard.js');

runCli(process.argv).catch((error) => {
  process.stderr.write(failureLine(error instanceof Error ? error.message : String(error), wantsJson(process.argv)));
  process.exit(1);
});
