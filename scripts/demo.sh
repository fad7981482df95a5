#!/usr/bin/env bash
# Install dcpm into .venv and run it over the bundled sample data, in a demo store of its own
# (under the dcpm data directory, apart from your real memory). Safe to run again: adds are
# idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip
pip install -q -e .

export DCPM_STORE="${DCPM_DEMO_STORE:-$(python -c 'from dcpm_cli.config import dcpm_home; print(dcpm_home() / "demo")')}"
echo "== demo store: $DCPM_STORE"
step() { echo; echo "\$ $*"; "$@"; }

if dcpm doctor >/dev/null 2>&1; then
  echo "== an LLM answers: the whole pipeline runs (extraction, reconciliation, chains)"
  step dcpm add --file sample_data/journal.md
  step dcpm add --file sample_data/chat.jsonl
  step dcpm recall "what does she eat these days?" -k 5 --arc
  step dcpm history "how she exercises"
  if dcpm dream --help >/dev/null 2>&1; then
    step dcpm dream
    step dcpm schemas
  fi
else
  echo "== no LLM reachable: storing the raw inputs (searchable at once; extraction can catch up later)"
  step dcpm add --no-extract --file sample_data/journal.md
  step dcpm add --no-extract --file sample_data/chat.jsonl
  step dcpm recall "what does she eat these days?" -k 3
  step dcpm recall "coffee" --format prompt -k 3
fi
step dcpm stats
if ! dcpm doctor >/dev/null 2>&1; then
  echo
  echo "To enable extraction: install Ollama (https://ollama.com), run \`ollama pull qwen3:4b\`, then: DCPM_STORE=\"$DCPM_STORE\" dcpm process"
fi
