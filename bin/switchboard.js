#!/usr/bin/env node
// The published entry point: the compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { runCli } from '../dist/cli/main.js';

runCli(process.argv).catch((error) => {
  process.stderr.write(`switchboard: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
