"""Concurrent `dcpm add` processes (a cron job and a shell pipe) on one store: nothing lost,
nothing stored twice, and the store still opens."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.procs import dcpm_script
from support.replies import decide, item

from dcpm_cli.config import Settings
from dcpm_cli.embed import get_embedder
from dcpm_cli.models import CONTEXT, DONE, PENDING
from dcpm_cli.store import Store


def chat_line(session: str, n: int, who: str) -> str:
    role = "user" if n % 2 == 0 else "assistant"
    return json.dumps(
        {
            "session": session,
            "role": role,
            "content": f"{who} turn {n}: note about day {n % 31 + 1}, topic {n % 7}.",
            "timestamp": f"2026-{n // 28 % 12 + 1:02d}-{n % 28 + 1:02d}T{n % 24:02d}:00:00",
        }
    )


def start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "100"}
    return subprocess.Popen(
        [dcpm_script(), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(procs: list[subprocess.Popen[str]]) -> list[dict]:
    summaries = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        assert "Traceback" not in err
        summaries.append(json.loads(out))
    return summaries


def all_raw(store: Store) -> list:
    return store.raw_by_status([PENDING, DONE, CONTEXT, "failed", "raw_only"])


@pytest.mark.slow
def test_parallel_raw_adds_store_every_input_exactly_once(tmp_path: Path) -> None:
    a = [chat_line("cron", n, "A") for n in range(300)]
    b = [chat_line("pipe", n, "B") for n in range(300)]
    c = a[100:200] + b[:100] + [chat_line("both", n, "C") for n in range(50)]  # overlaps both
    for name, lines in (("a", a), ("b", b), ("c", c)):
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    procs = [start("add", "--no-extract", "--json", "--file", str(tmp_path / f"{n}.jsonl")) for n in "abc"]
    summaries = finish(procs)

    unique = len(set(a + b + c))
    assert unique == 650
    assert sum(s["stored"] for s in summaries) == unique
    assert sum(s["stored"] + s["already_stored"] for s in summaries) == len(a) + len(b) + len(c)
    store = Store(Settings.resolve().store, get_embedder("minilm"), create=False)
    raws = all_raw(store)
    assert len(raws) == unique
    assert len({r.content_hash for r in raws}) == unique
    assert {r.text for r in raws} == {json.loads(line)["content"] for line in a + b + c}
    assert sum(r.status == PENDING for r in raws) == sum(
        json.loads(x)["role"] == "user" for x in set(a + b + c)
    )


def reply_file(path: Path, who: str, n: int) -> Path:
    """One reply per line that is valid both as an extraction and as a reconciliation (each
    schema ignores the other's key), since whether a reconcile call happens depends on what
    the other process has stored by then."""
    lines = [
        json.dumps(
            {
                "items": [item(f"{who} fact number {i} about the user's week", topic="work")],
                "decisions": [decide("ADD")],
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_parallel_adds_with_extraction(tmp_path: Path) -> None:
    for who in ("a", "b"):
        lines = [
            json.dumps(
                {"role": "user", "content": f"{who} said thing {n}", "timestamp": f"2026-05-{n + 1:02d}"}
            )
            for n in range(12)
        ]
        (tmp_path / f"{who}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    procs = [
        start(
            "--llm",
            f"scripted:{reply_file(tmp_path / f'{who}-replies.jsonl', who, 24)}",
            "add",
            "--json",
            "--file",
            str(tmp_path / f"{who}.jsonl"),
        )
        for who in ("a", "b")
    ]
    summaries = finish(procs)

    assert [(s["stored"], s["extracted"], s["added"], s["pending"]) for s in summaries] == [
        (12, 12, 12, 0)
    ] * 2
    store = Store(Settings.resolve().store, get_embedder("minilm"), create=False)
    raws = all_raw(store)
    assert len(raws) == 24 and {r.status for r in raws} == {DONE}
    items = store.all_items()
    assert len(items) == 24
    assert sorted(i.raw_ids[0] for i in items) == sorted(r.id for r in raws)  # one item per input
    assert all(i.is_current and i.supersedes is None for i in items)
