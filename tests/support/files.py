"""What a test reads of the files a command left behind."""

from __future__ import annotations

import hashlib
from pathlib import Path


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder`, by relative path, with the sha256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
