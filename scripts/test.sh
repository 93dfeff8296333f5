#!/usr/bin/env bash
# The whole test suite, as CI runs it: lint, typecheck, build, then unit, integration and compatibility tests
# (vitest; the Python SDK tests run inside it from a virtualenv this script prepares). The last line printed is
# the test runner's summary.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$1"; }

step 'lint (biome)'
npx biome check --error-on-warnings .
step 'typecheck (tsc --noEmit)'
npx tsc -p tsconfig.json --noEmit
step 'build'
npm run --silent build
step 'python compatibility environment'
bash scripts/setup-python-compat.sh
step 'browser for the console end-to-end tests (Debian chromium)'
bash scripts/setup-chromium.sh
step 'tests (vitest: unit, integration, compatibility)'
npx vitest run
