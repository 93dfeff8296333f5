#!/usr/bin/env bash
# Installs the Codex CLI (npm @openai/codex, pinned) for compat/codex.test.ts into a cache directory outside
# package.json (data/tools/codex, or $SWITCHBOARD_CODEX_DIR); idempotent. Under CI a failed install fails the run;
# elsewhere it is reported and the Codex test says it was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.171.0
dir=${SWITCHBOARD_CODEX_DIR:-data/tools/codex}
codex="$dir/node_modules/.bin/codex"
if [ -x "$codex" ] && [ "$("$codex" --version 2>/dev/null)" = "codex-cli $version" ]; then
  exit 0
fi
mkdir -p "$dir"
if ! npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "@openai/codex@$version"; then
  echo "setup-codex: installing @openai/codex@$version into $dir failed" >&2
  if [ -n "${CI:-}" ]; then exit 1; fi
fi
