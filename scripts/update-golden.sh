#!/usr/bin/env bash
# Records the conformance transcripts (test/fixtures/conformance/) from what the gateway does now, then replays them
# as an ordinary test run. The recording run itself always fails (each scenario says what it wrote): it checks nothing
# against the transcripts, so it must never be mistaken for a passing run. Review `git diff test/fixtures` before
# committing; a recorded line is only right if it matches the provider's documentation.
set -uo pipefail
cd "$(dirname "$0")/.."

printf '== recording (UPDATE_GOLDEN=1; every scenario fails by design after writing its transcript)\n'
if UPDATE_GOLDEN=1 npx vitest run --project sqlite test/conformance.test.ts --reporter=dot >/dev/null 2>&1; then
  echo 'the recording run passed, but it must fail by design: test/conformance.test.ts no longer honours UPDATE_GOLDEN' >&2
  exit 1
fi
# In the repository's own JSON style, so the diff shows only what the gateway changed.
npx biome format --write test/fixtures/conformance >/dev/null
printf '== replaying the recorded transcripts (an ordinary run: this one must pass)\n'
npx vitest run --project sqlite test/conformance.test.ts || exit 1
printf '== what changed (review before committing)\n'
git diff --stat -- test/fixtures/conformance
