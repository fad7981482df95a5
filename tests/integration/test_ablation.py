"""The paper's "without supersedes" ablation over the whole system, from one settings key
(DCPM_NO_SUPERSEDES / --no-supersedes): the writer stores a change of mind as a new item, the
read path shows no arcs, a dream consolidates old and new stances alike."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from support.replies import extraction, item, item_id, replaced

from dcpm_cli.models import RawInput
from dcpm_cli.read.recall import recall

STANCES = [
    ("2026-01-05", "Works out in group spin classes three times a week"),
    ("2026-02-10", "Prefers exercising alone now, running by the river"),
    ("2026-03-20", "Has taken up climbing at the bouldering gym with friends"),
]


def journal() -> str:
    return "".join(f"## {day}\n{text}.\n\n" for day, text in STANCES)


def script_arc(llm) -> None:
    """Extraction of each entry; from the second on, the model judges that it replaces the
    nearest earlier stance (the one before, or in the ablation, where all stay current, the
    nearest: either way one judgement, and the first `replaces` decides)."""
    previous = None
    for day, text in STANCES:
        llm.enqueue(extraction(item(text, attribute="exercise")))
        if previous is not None:
            llm.enqueue(*replaced())
        raw = RawInput(text=f"## {day}\n{text}.", session="journal", source="journal.md", said_at=_noon(day))
        previous = item_id(raw)


def _noon(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def current_texts(data: dict) -> list[str]:
    return [h["text"] for h in data["hits"] if h["current"]]


@pytest.mark.parametrize("how", ["flag", "env"])
def test_add_without_supersedes_stores_a_change_of_mind_as_a_new_item(cli, llm, tmp_path, how) -> None:
    script_arc(llm)
    path = tmp_path / "journal.md"
    path.write_text(journal())
    args, env = (["--no-supersedes"], {}) if how == "flag" else ([], {"DCPM_NO_SUPERSEDES": "1"})
    added = json.loads(cli("add", "--file", str(path), "--json", *args, **env).stdout)

    assert (added["added"], added["superseded"]) == (3, 0)
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["chains"]["count"] == 0 and stats["items"] == {"fact": 3}
    data = json.loads(cli("recall", "how do I exercise?", "--json").stdout)
    assert sorted(current_texts(data)) == sorted(t for _, t in STANCES)  # all three look current


def test_the_full_system_chains_the_same_replies(cli, llm, tmp_path) -> None:
    script_arc(llm)
    path = tmp_path / "journal.md"
    path.write_text(journal())
    added = json.loads(cli("add", "--file", str(path), "--json").stdout)
    assert (added["added"], added["superseded"]) == (3, 2)
    data = json.loads(cli("recall", "how do I exercise?", "--json").stdout)
    assert current_texts(data)[0] == STANCES[-1][1]
    assert [c["text"] for c in data["hits"][0]["chain"]] == [t for _, t in STANCES]

    # Read without supersedes on the same store: no arcs, every stance a belief of its own.
    ablated = json.loads(cli("recall", "how do I exercise?", "--json", "--no-supersedes").stdout)
    assert sorted(current_texts(ablated)) == sorted(t for _, t in STANCES)
    assert all(len(h["chain"]) == 1 for h in ablated["hits"])
    table = cli("recall", "how do I exercise?", "--arc", DCPM_NO_SUPERSEDES="1").stdout
    assert "states" not in table and "→" not in table


def test_process_and_dream_take_the_same_setting(cli, llm, store, embedder, tmp_path) -> None:
    path = tmp_path / "journal.md"
    path.write_text(journal())
    cli("add", "--no-extract", "--file", str(path))
    script_arc(llm)
    processed = json.loads(cli("process", "--json", "--no-supersedes").stdout)
    assert (processed["added"], processed["superseded"]) == (3, 0)

    # Config file key: the dream's catch-up extraction writes no chain either.
    (tmp_path / "home").mkdir(exist_ok=True)
    more = tmp_path / "more.md"
    more.write_text("## 2026-04-02\nGave up climbing; back to running alone.\n")
    cli("add", "--no-extract", "--file", str(more))
    from dcpm_cli.config import dcpm_home

    (dcpm_home() / "config.toml").write_text("no_supersedes = true\n")
    llm.enqueue(
        extraction(item("Gave up climbing and runs alone again", attribute="exercise")),
        *replaced(),  # the nearest of the three stances, all current here
        {"actions": []},  # the dream's induction over the four stances
    )
    out = json.loads(cli("dream", "--json").stdout)
    assert out["run"]["extracted"] == 1 and out["run"]["settings"]["no_supersedes"] is True
    assert json.loads(cli("stats", "--json").stdout)["chains"]["count"] == 0
    hits = recall(store, embedder, "exercise", k=5, chains=False).hits
    assert len([h for h in hits if h.kind == "fact"]) == 4
