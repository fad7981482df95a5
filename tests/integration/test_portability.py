"""`dcpm export` / `dcpm import`: round trips through the CLI with real LanceDB and MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.portability import recall_all


def records(path: Path) -> tuple[dict, list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    head.pop("exported_at")
    return head, lines[1:]


@pytest.mark.parametrize("with_vectors", [False, True], ids=["re-embedded", "with-vectors"])
def test_round_trip_gives_the_same_records_and_the_same_answers(
    rich_store, cli, tmp_path: Path, with_vectors: bool
) -> None:
    first, second, fresh = tmp_path / "a.jsonl", tmp_path / "b.jsonl", str(tmp_path / "fresh")
    flags = ["--with-vectors"] if with_vectors else []
    assert cli("export", "--out", str(first), *flags).exit_code == 0

    imported = cli("--store", fresh, "import", str(first), "--json")

    assert imported.exit_code == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["added"] == {
        "raw": 5,
        "item": 5,
        "event": 9,  # an ADD, four SUPERSEDEs and the four judgements behind them
        "node": 2,
        "edge": 4,
        "dream_run": 1,
        "calibration": 1,
    }
    assert report["vectors"] == ("from the file" if with_vectors else "embedded by all-MiniLM-L6-v2")
    assert cli("--store", fresh, "export", "--out", str(second), *flags).exit_code == 0
    head_a, lines_a = records(first)
    head_b, lines_b = records(second)
    assert head_a == head_b and head_a["format"] == 1 and head_a["embedder"] == "all-MiniLM-L6-v2"
    assert sorted(lines_a) == sorted(lines_b)
    items = [json.loads(line) for line in lines_a if '"type": "item"' in line]
    assert sum(1 for i in items if i["supersedes"]) == 4 and sum(1 for i in items if i["superseded_by"]) == 4
    assert recall_all(cli) == recall_all(cli, "--store", fresh)


def test_importing_twice_changes_nothing(rich_store, cli, tmp_path: Path) -> None:
    dump, again = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    cli("export", "--out", str(dump))

    second = cli("import", str(dump), "--json")  # into the store it came from

    assert second.exit_code == 0
    report = json.loads(second.stdout)
    assert set(report["added"].values()) == {0}
    assert report["already_present"]["item"] == 5
    cli("export", "--out", str(again))
    assert records(dump) == records(again)


def test_import_merges_into_a_store_that_has_other_memories(rich_store, cli, tmp_path: Path) -> None:
    dump, other = tmp_path / "a.jsonl", str(tmp_path / "other")
    cli("export", "--out", str(dump))
    cli("--store", other, "add", "--no-extract", "My sister lives in Leeds")

    assert cli("--store", other, "import", str(dump)).exit_code == 0

    assert json.loads(cli("--store", other, "stats", "--json").stdout)["raw_inputs"] == 6
    hits = json.loads(cli("--store", other, "recall", "where does my sister live", "--json").stdout)["hits"]
    assert "Leeds" in hits[0]["text"]
    assert recall_all(cli, "--store", other)[0]["hits"][0]["id"] == recall_all(cli)[0]["hits"][0]["id"]


def test_vectors_of_another_embedder_are_ignored_and_recomputed(rich_store, cli, tmp_path: Path) -> None:
    dump, fresh = tmp_path / "a.jsonl", str(tmp_path / "fresh")
    cli("export", "--out", str(dump), "--with-vectors")
    lines = dump.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0]) | {"embedder": "bge-m3", "dim": 1024}
    dump.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n", encoding="utf-8")

    report = json.loads(cli("--store", fresh, "import", str(dump), "--json").stdout)

    assert report["source_embedder"] == "bge-m3" and report["vectors"] == "embedded by all-MiniLM-L6-v2"
    assert recall_all(cli) == recall_all(cli, "--store", fresh)


def test_a_newer_format_or_a_broken_file_is_refused_and_nothing_is_stored(cli, tmp_path: Path) -> None:
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"type": "header", "format": 99}) + "\n", encoding="utf-8")
    res = cli("import", str(newer))
    assert res.exit_code == 2
    assert "format 99, newer than this dcpm reads (up to 1)" in " ".join(res.stderr.split())

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "header", "format": 1}\n{"type": "raw", "text": \n', encoding="utf-8")
    res = cli("import", str(broken))
    assert res.exit_code == 2 and "line 2 is not JSON" in res.stderr
    assert cli("import", str(tmp_path / "missing.jsonl")).exit_code == 2

    bad_vector = tmp_path / "bad-vector.jsonl"
    head = {"type": "header", "format": 1, "with_vectors": True, "embedder": "all-MiniLM-L6-v2", "dim": 384}
    raw = {"type": "raw", "id": "r_1", "text": "hello", "vector": "AAAAAA==", "role": "user", "session": ""}
    raw |= {
        "source": "cli",
        "said_at": "2026-01-01T12:00:00+00:00",
        "created_at": "2026-01-01T12:00:00+00:00",
    }
    raw |= {"content_hash": "x", "status": "pending", "error": "", "attempts": 0}
    bad_vector.write_text(json.dumps(head) + "\n" + json.dumps(raw) + "\n", encoding="utf-8")
    res = cli("import", str(bad_vector))
    assert res.exit_code == 2 and "raw r_1: bad vector: a vector of 1 numbers, not 384" in res.stderr


def test_a_file_cut_short_or_not_utf8_imports_nothing(rich_store, cli, tmp_path: Path) -> None:
    """The file is read whole before anything is stored: a truncated export used to import its
    first records and then stop with an error, leaving half of it behind."""
    export = tmp_path / "all.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(export.read_bytes()[:-40])
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(export.read_bytes().replace(b"\n", b"\n\xe9", 1))
    counts = tmp_path / "counts.jsonl"
    head, *rest = export.read_text(encoding="utf-8").splitlines()
    counts.write_text(json.dumps({**json.loads(head), "counts": {"raw": "many"}}) + "\n" + "\n".join(rest))
    other = {"DCPM_HOME": str(tmp_path / "other")}

    for bad, says in (
        (cut, "is not JSON"),
        (latin1, "not UTF-8 text"),
        (counts, "counts are not numbers"),
    ):
        res = cli("import", str(bad), **other)
        assert res.exit_code == 2 and says in res.stderr, (bad.name, res.stderr)
        assert "Traceback" not in res.stderr
        assert not (tmp_path / "other" / "store").exists(), f"{bad.name}: nothing stored"
    piped = cli("import", "-", input=export.read_text(encoding="utf-8"), **other)
    assert piped.exit_code == 0, piped.stderr
    missing = cli("export", "--out", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert missing.exit_code == 2 and "there is no folder" in missing.stderr
    folder = tmp_path / "exports"
    folder.mkdir()
    into_folder = cli("export", "--out", str(folder))
    assert into_folder.exit_code == 2 and "it is a folder" in into_folder.stderr, into_folder.stderr
    assert "Traceback" not in into_folder.stderr
    assert not (tmp_path / "exports.partial").exists(), "no half copy of the memory left behind"


def test_export_to_stdout_is_one_json_record_a_line(rich_store, cli) -> None:
    res = cli("export")
    lines = res.stdout.splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds[0] == "header" and kinds.count("raw") == 5 and kinds.count("node") == 2
    assert all("vector" not in json.loads(line) for line in lines)


@pytest.mark.four_way  # an item updated
def test_a_newer_export_moves_an_older_copy_forward(cli, llm, tmp_path: Path) -> None:
    """Importing Tuesday's export over Monday's copy: what changed since (an item superseded,
    an item updated, an input extracted) comes over; importing Monday's again changes nothing."""
    from support.replies import extraction, item, judged, replaced

    llm.enqueue(
        extraction(
            item("Is vegetarian", topic="food", attribute="diet"), item("Lives in Leeds", attribute="home")
        )
    )
    assert cli("add", "--at", "2026-01-01", "I'm vegetarian from today. I live in Leeds.").exit_code == 0
    assert sorted(i.text for i in cli.open_store().all_items()) == ["Is vegetarian", "Lives in Leeds"]
    assert cli("add", "--no-extract", "--at", "2026-01-02", "Bought a bread machine.").exit_code == 0
    monday, tuesday, copy = tmp_path / "mon.jsonl", tmp_path / "tue.jsonl", str(tmp_path / "copy")
    cli("export", "--out", str(monday))
    assert cli("--store", copy, "import", str(monday)).exit_code == 0

    llm.enqueue(
        extraction(item("Eats meat again", topic="food", attribute="diet")),
        *replaced(),
        extraction(item("Bought a bread machine", topic="home", attribute="kitchen")),
        judged("unrelated"),  # the meat
        judged("unrelated"),  # Leeds
    )
    assert cli("add", "--at", "2026-02-01", "I eat meat again.").exit_code == 0
    assert cli("process").exit_code == 0
    llm.enqueue(
        extraction(item("Lives in the Headingley part of Leeds", attribute="home")),
        judged("adds_detail"),
    )
    assert cli("add", "--at", "2026-02-02", "Headingley, to be exact.").exit_code == 0
    cli("export", "--out", str(tuesday))

    moved = json.loads(cli("--store", copy, "import", str(tuesday), "--json").stdout)

    assert moved["moved_forward"] == {"raw": 1, "item": 2}
    assert cli("--store", copy, "check").exit_code == 0
    hits = json.loads(cli("--store", copy, "recall", "what do I eat?", "--json").stdout)["hits"]
    assert hits[0]["text"] == "Eats meat again"
    assert [c["text"] for c in hits[0]["chain"]] == ["Is vegetarian", "Eats meat again"]
    assert json.loads(cli("--store", copy, "stats", "--json").stdout)["pending"] == 0
    home = json.loads(cli("--store", copy, "recall", "where do I live?", "--json").stdout)["hits"][0]
    assert home["text"] == "Lives in Leeds; Lives in the Headingley part of Leeds"  # re-embedded
    again = json.loads(cli("--store", copy, "import", str(monday), "--json").stdout)
    assert again["moved_forward"] == {} and set(again["added"].values()) == {0}


def _with_counts(head: dict, lines: list[str]) -> str:
    """An export file whose header counts its records (as `dcpm export` writes it)."""
    counts = {k: 0 for k in head.get("counts", {})}
    for line in lines:
        kind = json.loads(line)["type"]
        counts[kind] = counts.get(kind, 0) + 1
    return "\n".join([json.dumps({**head, "counts": counts}), *lines]) + "\n"


def _edited(lines: list[str], kind: str, n: int, **changes) -> list[str]:
    """The lines with the n-th record of `kind` changed (None: the field dropped)."""
    out, seen = [], 0
    for line in lines:
        record = json.loads(line)
        if record["type"] == kind:
            if seen == n:
                record = {k: v for k, v in {**record, **changes}.items() if v is not None or k not in changes}
            seen += 1
        out.append(json.dumps(record))
    return out


def test_an_export_cut_at_a_line_boundary_is_refused_by_its_header_counts(
    rich_store, cli, tmp_path: Path
) -> None:
    """`head -n 3` of an export is valid JSONL to the last line: only the header's counts
    show that the items and events are missing. It used to import the raw inputs alone."""
    export = tmp_path / "all.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(export.read_text(encoding="utf-8").splitlines()[:3]) + "\n")

    res = cli("import", str(cut), DCPM_HOME=str(tmp_path / "other"))

    assert res.exit_code == 2, res.stderr
    said = " ".join(res.stderr.split())
    assert "holds 2 raw records, its header says 5" in said and "cut short" in said
    assert not (tmp_path / "other" / "store").exists()


@pytest.mark.parametrize(
    ("kind", "changes", "says"),
    [
        ("raw", {"text": 12345}, "line 2: raw field text must be a string, not int"),
        ("item", {"text": None}, "item record lacks the field text"),
        ("item", {"raw_ids": "r_1"}, "field raw_ids must be a list of strings"),
        (
            "event",
            {"at": "0500-01-01T00:00:00+00:00"},
            "field at '0500-01-01T00:00:00+00:00' is out of range",
        ),
        ("raw", {"attempts": True}, "raw field attempts must be an integer, not bool"),
        ("raw", {"text": "a \ud800 b"}, "raw field text holds a lone surrogate"),
        ("item", {"text": "nul\u0000here"}, "item field text holds a NUL byte"),
        ("raw", {"status": "weird"}, "raw field status 'weird' is not one of pending, done"),
        ("raw", {"role": "robot"}, "raw field role 'robot' is not one of user, assistant, system"),
        ("raw", {"text": "  "}, "line 2: raw input with no text"),
        ("item", {"id": "x' OR 1=1"}, 'item id "x\' OR 1=1" is not an id'),
        ("raw", {"id": ""}, "raw id '' is not an id"),
    ],
    ids=[
        "text a number",
        "a field missing",
        "a list that is a string",
        "year 500",
        "bool for int",
        "a lone surrogate",
        "a NUL",
        "an unknown status",
        "an unknown role",
        "an empty input",
        "an id that is no id",
        "an empty id",
    ],
)
def test_a_malformed_record_is_refused_before_anything_is_stored(
    rich_store, cli, tmp_path: Path, kind: str, changes: dict, says: str
) -> None:
    export = tmp_path / "all.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    head, lines = records(export)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_with_counts(head, _edited(lines, kind, 0, **changes)), encoding="utf-8")

    res = cli("import", str(bad), DCPM_HOME=str(tmp_path / "other"))

    assert res.exit_code == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert says in " ".join(res.stderr.split())
    assert not (tmp_path / "other" / "store").exists()


def test_a_header_of_the_wrong_types_is_refused(rich_store, cli, tmp_path: Path) -> None:
    export = tmp_path / "all.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    head, lines = records(export)
    for field, value, says in (("dim", "384", "dim"), ("with_vectors", "yes", "with_vectors")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(_with_counts({**head, field: value}, lines), encoding="utf-8")
        res = cli("import", str(bad), DCPM_HOME=str(tmp_path / "other"))
        assert res.exit_code == 2 and f"the header's {says}" in res.stderr, res.stderr
        assert not (tmp_path / "other" / "store").exists()


def test_an_import_that_would_break_the_chains_is_refused_with_its_line(
    rich_store, cli, tmp_path: Path
) -> None:
    """A record moving an existing item "forward" to a successor that exists nowhere, or two
    new items superseding each other: refused before writing; the store passes `check`."""
    from support.files import snapshot

    export = tmp_path / "all.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0
    head, lines = records(export)
    store_dir = tmp_path / "home" / "store"
    checked = cli("check").stdout
    before = snapshot(store_dir)
    head_item = next(
        json.loads(x) for x in lines if json.loads(x)["type"] == "item" and not json.loads(x)["superseded_by"]
    )
    forward = [
        json.dumps(
            {
                **json.loads(x),
                "superseded_by": "m_nowhere",
                "updated_at": "2030-01-01T00:00:00+00:00",
                "text": "Overwritten",
            }
        )
        if json.loads(x).get("id") == head_item["id"]
        else x
        for x in lines
    ]
    a, b = (
        {**head_item, "id": i, "supersedes": j, "superseded_by": j, "raw_ids": head_item["raw_ids"]}
        for i, j in (("m_aaaaaaaaaaaa", "m_bbbbbbbbbbbb"), ("m_bbbbbbbbbbbb", "m_aaaaaaaaaaaa"))
    )
    loop = [*lines, json.dumps(a), json.dumps(b)]
    loop.sort(key=lambda x: list(head["counts"]).index(json.loads(x)["type"]))

    for name, body, says in (
        (
            "forward.jsonl",
            forward,
            "superseded_by names m_nowhere, which is neither in the file nor in this store",
        ),
        ("loop.jsonl", loop, "would make a cycle"),
    ):
        bad = tmp_path / name
        bad.write_text(_with_counts(head, body), encoding="utf-8")
        res = cli("import", str(bad))
        assert res.exit_code == 2, (name, res.stderr)
        said = " ".join(res.stderr.split())
        assert says in said and "line " in said, (name, said)
        assert snapshot(store_dir) == before, name
    assert cli("check").stdout == checked  # the fixture's lone core schema fails as before, nothing more


def test_the_import_report_reads_as_counts_not_python(rich_store, cli, tmp_path: Path) -> None:
    export = tmp_path / "all.jsonl"
    assert cli("export", "--out", str(export)).exit_code == 0

    res = cli("import", str(export), DCPM_HOME=str(tmp_path / "other"))

    assert res.exit_code == 0, res.stderr
    assert "{" not in res.stdout and "'" not in res.stdout
    assert "added: raw 5, item 5" in res.stdout


def test_an_export_made_before_a_forget_does_not_bring_it_back(rich_store, cli, tmp_path: Path) -> None:
    """A backup taken last week, imported after `dcpm forget`: what was forgotten stays
    forgotten, the chain stays relinked around it, and the rest is as the forget left it."""
    before, after, again = tmp_path / "before.jsonl", tmp_path / "after.jsonl", tmp_path / "again.jsonl"
    assert cli("export", "--out", str(before)).exit_code == 0
    fact = sorted(rich_store.all_items(), key=lambda i: i.event_at)[1]  # evidence, and mid-chain
    assert fact.supersedes and fact.superseded_by
    (middle,) = rich_store.get_raw(fact.raw_ids).values()
    assert cli("forget", middle.id, "--yes").exit_code == 0
    assert cli("export", "--out", str(after)).exit_code == 0
    checked = cli("check").stdout  # (the fixture's core schema has one member: a graph finding)

    res = cli("import", str(before), "--json")

    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["forgotten"] == {"raw": 1, "item": 1, "edge": 1}
    assert set(report["added"].values()) == {0}
    assert cli("export", "--out", str(again)).exit_code == 0
    assert records(again) == records(after)
    assert middle.text not in again.read_text(encoding="utf-8")
    assert cli("check").stdout == checked
    assert "ok    chains" in checked and "ok    provenance" in checked
