#!/usr/bin/env bash
# Creates (or reuses) the virtualenv the Python compatibility tests run in: the official openai and anthropic SDKs from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-compat
requirements=compat/python/requirements.txt
stamp="$venv/.requirements.sha256"
wanted=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
echo "$wanted" > "$stamp"
