"""A notes folder is one input per day: re-importing it after editing one day replaces that
day's input (the old words stay reachable by `dcpm show`), never two current copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.replies import extraction, item


def _folder(tmp_path: Path, monday: str) -> Path:
    notes = tmp_path / "journal"
    notes.mkdir(exist_ok=True)
    (notes / "2026-03-02.md").write_text(monday)
    (notes / "2026-03-03.md").write_text("Tuesday: swam forty lengths at the lido.\n")
    return notes


def _recall(cli, query: str) -> list[dict]:
    return json.loads(cli("recall", query, "--json").stdout)["hits"]


@pytest.mark.parametrize(
    ("first", "then"),
    [("UTC", "UTC"), ("Australia/Sydney", "Australia/Sydney"), ("UTC", "Australia/Sydney")],
)  # a day is the user's, and the setting may change between two imports
def test_an_edited_day_replaces_its_old_version_and_keeps_it_as_history(
    cli, tmp_path: Path, first: str, then: str
) -> None:
    notes = _folder(tmp_path, "Monday: booked the dentist for the kestrel appointment.\n")
    added = cli("add", "--no-extract", "--file", str(notes), "--json", DCPM_TIMEZONE=first)
    assert json.loads(added.stdout)["stored"] == 2
    old = [h for h in _recall(cli, "dentist kestrel appointment") if "booked" in h["text"]]
    assert len(old) == 1

    _folder(tmp_path, "Monday: cancelled the dentist, the kestrel appointment moved to April.\n")
    again = json.loads(cli("add", "--no-extract", "--file", str(notes), "--json", DCPM_TIMEZONE=then).stdout)
    assert again["stored"] == 1  # the edited day only

    texts = [h["text"] for h in _recall(cli, "dentist kestrel appointment")]
    assert [t for t in texts if "kestrel" in t] == [
        "Monday: cancelled the dentist, the kestrel appointment moved to April."
    ]
    shown = json.loads(cli("show", old[0]["id"], "--json").stdout)
    assert "booked the dentist" in json.dumps(shown) and "replaced" in json.dumps(shown)
    assert cli("check").exit_code == 0

    # Unchanged, the folder changes nothing.
    unchanged = cli("add", "--no-extract", "--file", str(notes), "--json", DCPM_TIMEZONE=then)
    assert json.loads(unchanged.stdout)["stored"] == 0
    assert len([h for h in _recall(cli, "dentist kestrel appointment") if "kestrel" in h["text"]]) == 1


def test_the_facts_of_a_replaced_day_are_not_recalled(cli, llm, tmp_path: Path) -> None:
    notes = _folder(tmp_path, "Monday: adopted a tabby kitten called Quince.\n")
    llm.enqueue(extraction(item("Has a tabby kitten called Quince", topic="pets")))
    llm.enqueue(extraction(item("Swims at the lido", topic="sport")))
    cli("add", "--file", str(notes))
    assert any("Quince" in h["text"] for h in _recall(cli, "kitten Quince"))

    _folder(tmp_path, "Monday: visited a shelter, no kitten after all.\n")
    llm.enqueue(extraction(item("Visited an animal shelter", topic="pets")))
    cli("add", "--file", str(notes))

    assert not any("Quince" in h["text"] for h in _recall(cli, "kitten Quince"))


def test_a_day_edited_back_to_its_first_text_is_recalled_again(cli, tmp_path: Path) -> None:
    first = "Monday: went swimming with the manatees at the springs.\n"
    notes = _folder(tmp_path, first)
    cli("add", "--no-extract", "--file", str(notes))
    _folder(tmp_path, "Monday: went swimming with the manatees and a dolphin.\n")
    cli("add", "--no-extract", "--file", str(notes))
    _folder(tmp_path, first)  # the edit undone
    again = json.loads(cli("add", "--no-extract", "--file", str(notes), "--json").stdout)
    assert again["stored"] == 0  # that text is stored already: it is current again

    texts = [h["text"] for h in _recall(cli, "swimming with the manatees")]
    assert [t for t in texts if "manatees" in t] == [
        "Monday: went swimming with the manatees at the springs."
    ]
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["raw_by_status"]["replaced"] == 1, stats  # the dolphin version, kept as history
    assert cli("check").exit_code == 0


def test_the_facts_of_a_day_edited_back_are_recalled_again(cli, llm, tmp_path: Path) -> None:
    notes = _folder(tmp_path, "Monday: adopted a tabby kitten called Quince.\n")
    llm.enqueue(extraction(item("Has a tabby kitten called Quince", topic="pets")))
    llm.enqueue(extraction(item("Swims at the lido", topic="sport")))
    cli("add", "--file", str(notes))
    _folder(tmp_path, "Monday: visited a shelter, no kitten after all.\n")
    llm.enqueue(extraction(item("Visited an animal shelter", topic="pets")))
    cli("add", "--file", str(notes))
    assert not any("Quince" in h["text"] for h in _recall(cli, "kitten Quince"))

    _folder(tmp_path, "Monday: adopted a tabby kitten called Quince.\n")
    cli("add", "--file", str(notes))  # no extraction asked: the first version's facts stand

    assert any(h["kind"] == "fact" and "Quince" in h["text"] for h in _recall(cli, "kitten Quince"))


def test_a_day_whose_current_version_was_forgotten_is_no_fault(cli, tmp_path: Path) -> None:
    notes = _folder(tmp_path, "Monday: met Jo at the lido.\n")
    cli("add", "--no-extract", "--file", str(notes))
    _folder(tmp_path, "Monday: met Jo and Sam at the lido.\n")
    cli("add", "--no-extract", "--file", str(notes))
    (now,) = [h for h in _recall(cli, "met at the lido") if "Sam" in h["text"]]
    assert cli("forget", now["id"], "--yes").exit_code == 0

    assert cli("check").exit_code == 0  # the older version stays replaced: nothing to repair
    assert not [h for h in _recall(cli, "met at the lido") if "Jo" in h["text"]]


def test_an_edited_journal_entry_replaces_its_old_words(cli, tmp_path: Path) -> None:
    journal = tmp_path / "journal.md"
    entries = {
        "2026-03-28": "Quiet day, read in the garden.",
        "2026-03-29": "Booked Gothenburg for June with Ingrid.",
        "2026-03-30": "Back to work, inbox of doom.",
    }

    def write(changes: dict[str, str]) -> None:
        days = {**entries, **changes}
        journal.write_text("# Journal\n\n" + "".join(f"## {d}\n{t}\n\n" for d, t in days.items()))

    write({})
    assert json.loads(cli("add", "--no-extract", "--file", str(journal), "--json").stdout)["stored"] == 3
    write({"2026-03-29": "Booked Gothenburg for July with Ingrid (moved from June)."})
    again = json.loads(cli("add", "--no-extract", "--file", str(journal), "--json").stdout)
    assert (again["stored"], again["already_stored"]) == (1, 2)

    hits = [h["text"] for h in _recall(cli, "when are we going to Gothenburg?")]
    assert any("July" in t for t in hits) and not any("for June" in t for t in hits), hits
    old = [r for r in cli.open_store().note_versions("journal", ["journal.md"]) if "for June" in r.text]
    assert [r.status for r in old] == ["replaced"]

    write({})  # edited back: the first words are current again
    cli("add", "--no-extract", "--file", str(journal))
    hits = [h["text"] for h in _recall(cli, "when are we going to Gothenburg?")]
    assert any("for June" in t for t in hits) and not any("July" in t for t in hits), hits


def test_two_journals_of_one_name_do_not_replace_each_other(cli, tmp_path: Path) -> None:
    for place, text in (
        ("work", "Sprint review ran long, demo crashed twice."),
        ("home", "Walked Biscuit by the canal."),
    ):
        (tmp_path / place).mkdir()
        (tmp_path / place / "journal.md").write_text(f"## 2026-03-29\n{text}\n")
    for _night in range(2):  # a cron adds both, every night
        for place in ("work", "home"):
            assert cli("add", "--no-extract", "--file", str(tmp_path / place / "journal.md")).exit_code == 0

    versions = cli.open_store().note_versions("journal", ["journal.md"])
    assert sorted(r.status for r in versions) == ["pending", "pending"]  # both current
    assert any("demo crashed" in h["text"] for h in _recall(cli, "sprint review demo"))
