#!/usr/bin/env bash
# Install dcpm with its test dependencies into .venv and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip
# The CPU build of torch first: the test extra has sentence-transformers (the reference the
# default embedder is compared with), which would otherwise pull a multi-GB CUDA build.
pip install -q torch==2.13.0
pip install -q -e '.[test]'
ruff check dcpm_cli tests
ruff format --check dcpm_cli tests
pytest "$@"
