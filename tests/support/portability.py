"""What the export/import and re-embed tests ask of a store, and how they ask it."""

from __future__ import annotations

import json

QUERIES = ["how do I like to exercise", "Zumba with friends", "hiking"]


def recall_all(cli, *store_flag: str) -> list[dict]:
    return [json.loads(cli(*store_flag, "recall", q, "--json").stdout) for q in QUERIES]
