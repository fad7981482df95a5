"""Where the repository's files are, wherever a test module sits."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SAMPLE_DATA = REPO / "sample_data"
TEST_DATA = REPO / "tests" / "data"
