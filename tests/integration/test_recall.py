"""The read path as users meet it: recall, history, show, stats — no LLM anywhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime

import jsonschema
import pytest
from support.paths import README
from support.procs import dcpm_script
from support.replies import extraction, item, item_id, replaced

from dcpm_cli.models import RawInput
from dcpm_cli.read.recall import recall

# Each later stance says its change in words, as a link needs (write/change.py).
FITNESS = [
    ("2025-11-03", "Finds working out with others a motivator that pushes them to new physical milestones"),
    ("2026-01-12", "Now prefers working out alone, on solitary early runs"),
    ("2026-03-02", "Went back to Zumba classes and enjoys dancing with a group again"),
    ("2026-04-20", "Now brings friends to their Zumba class, as on their birthday"),
    ("2026-06-01", "Now finds hiking more fulfilling than fitness classes, prefers welcoming places"),
]


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


@pytest.fixture
def fitness(writer, llm):
    """The paper's fitness arc: five stances over seven months, one chain."""
    previous = None
    for day, text in FITNESS:
        raw = RawInput(text=f"Journal: {text}.", session="journal", said_at=_at(day))
        llm.enqueue(extraction(item(text, attribute="group fitness")))
        if previous is not None:
            llm.enqueue(*replaced())
        writer.add([raw])
        previous = item_id(raw)
    return previous


def test_recall_shows_current_belief_once_with_its_arc(store, embedder, fitness):
    result = recall(store, embedder, "what kind of exercise do they like?", k=5)
    fitness_hits = [h for h in result.hits if h.chain and len(h.chain) == 5]
    assert len(fitness_hits) == 1, "a superseded state must never come back as a separate, stale hit"
    hit = fitness_hits[0]
    assert hit.id == fitness and "hiking" in hit.text
    assert [c.text for c in hit.chain] == [t for _, t in FITNESS]
    assert not hit.superseded


def test_as_of_returns_the_state_valid_at_that_date(store, embedder, fitness):
    for day, expected in [("2026-02-01", 1), ("2026-03-15", 2), ("2026-05-01", 3), ("2026-07-01", 4)]:
        result = recall(store, embedder, "exercise", k=3, as_of=_at(day))
        hit = next(h for h in result.hits if len(h.chain) == 5)
        assert hit.text == FITNESS[expected][1], day
    before_anything = recall(store, embedder, "exercise", k=3, as_of=_at("2025-01-01"))
    assert not any(len(h.chain) == 5 for h in before_anything.hits)


def test_as_of_finds_what_was_said_then_under_many_later_matches(cli, tmp_path):
    """The states said after `as_of` drop out only once ranked: with 40 later inputs that match
    better, the one said before the date is still found, at any k."""
    cli(
        "add",
        "--no-extract",
        "--at",
        "2025-06-01",
        "Started the day with a strong espresso at the station cafe",
    )
    later = tmp_path / "later.jsonl"
    later.write_text(
        "\n".join(
            json.dumps({"role": "user", "content": f"Coffee number {i} today, coffee is great, coffee coffee",
                        "timestamp": f"2026-0{1 + i % 9}-{10 + i % 18:02d}T10:00:00", "session": f"s{i}"})
            for i in range(40)
        ),
        encoding="utf-8",
    )  # fmt: skip
    assert cli("add", "--no-extract", "--file", str(later)).exit_code == 0
    for k in ("1", "5", "10"):
        hits = json.loads(cli("recall", "coffee", "--as-of", "2025-12-31", "-k", k, "--json").stdout)["hits"]
        assert [h["text"] for h in hits] == ["Started the day with a strong espresso at the station cafe"], k


def test_recall_works_on_a_raw_only_store(cli):
    journal = "## 2026-03-01\nI've stopped drinking coffee, green tea only now.\n\n## 2026-03-02\nRan 5k.\n"
    assert cli("add", "--no-extract", "-", input=journal).exit_code == 0
    result = cli("recall", "what do I drink?", "--json")
    data = json.loads(result.stdout)
    assert data["hits"][0]["kind"] == "raw"
    assert "green tea" in data["hits"][0]["text"]
    assert cli.llm.calls == []


def test_recall_json_follows_the_documented_schema(cli, fitness):
    schema = json.loads(re.search(r"```json\n(\{.*?\})\n```", README.read_text(), re.S).group(1))
    result = cli("recall", "hiking", "--json", "--as-of", "2026-04-01")
    data = json.loads(result.stdout)
    jsonschema.validate(data, schema)
    assert data["as_of"].startswith("2026-04-01")
    batch = cli("recall", "--batch", "-", input="# what I move for\nhiking\n\n#\nzumba\n")
    lines = batch.stdout.strip().splitlines()
    assert [json.loads(x)["query"] for x in lines] == ["hiking", "zumba"], "comments are no queries"
    for line in lines:
        jsonschema.validate(json.loads(line), schema)


def test_a_long_input_is_shown_as_its_piece_that_answers(cli, tmp_path):
    """A 2 MB journal pasted in one go: recall shows the piece holding the query's words, in the
    table, the prompt and the JSON (which says so); `dcpm show` gives it whole."""
    filler = "Another ordinary day at the office, nothing much to report about it. " * 40
    paragraphs = [filler] * 300
    paragraphs[217] = "Paddled the new kayak round the headland at dawn, seals everywhere."
    diary = tmp_path / "diary.txt"
    diary.write_text("\n\n".join(paragraphs), encoding="utf-8")
    assert cli("add", "--no-extract", "--file", str(diary)).exit_code == 0

    data = json.loads(cli("recall", "kayak headland", "--json").stdout)
    (hit,) = [h for h in data["hits"] if "kayak" in h["text"]]
    assert len(hit["text"]) <= 4000 and hit["excerpt"]["chars"] == len(diary.read_text().strip())
    assert 1 < hit["excerpt"]["piece"] <= hit["excerpt"]["of"]
    jsonschema.validate(
        data, json.loads(re.search(r"```json\n(\{.*?\})\n```", README.read_text(), re.S).group(1))
    )
    for fmt in (["--format", "prompt"], []):
        shown = cli("recall", "kayak headland", *fmt).stdout
        assert "Paddled the new kayak" in shown and len(shown) < 10_000, fmt
        assert f"of {hit['excerpt']['of']}; `dcpm show {hit['id']}` for all]" in " ".join(shown.split())
    whole = json.loads(cli("show", hit["id"], "--json").stdout)
    assert len(json.dumps(whole)) > diary.stat().st_size


def test_table_renders_current_first_and_arc_on_request(cli, fitness):
    plain = cli("recall", "hiking", "-k", "1")
    assert "hiking" in plain.stdout and "5 states" in plain.stdout
    arc = cli("recall", "hiking", "-k", "1", "--arc").stdout
    positions = [arc.index(text[:30]) for _, text in reversed(FITNESS)]
    assert positions == sorted(positions), "the arc lists the current state first, then older ones"


def test_prompt_format_pipes_into_another_command(dcpm, dcpm_home):
    dcpm("add", "--no-extract", "--at", "2026-02-01", "I am allergic to peanuts and carry two EpiPens")
    produce = subprocess.Popen(
        [dcpm_script(), "recall", "allergies", "--format", "prompt", "-k", "2"], stdout=subprocess.PIPE
    )
    consume = subprocess.run(
        [sys.executable, "-c", "import sys; t = sys.stdin.read(); print(len(t.splitlines())); print(t)"],
        stdin=produce.stdout,
        capture_output=True,
        text=True,
    )
    produce.wait()
    assert produce.returncode == 0
    assert "Relevant memory about the user" in consume.stdout
    assert "peanuts" in consume.stdout
    assert "\x1b[" not in consume.stdout, "no terminal escapes in piped output"


def test_a_query_that_matches_nothing_says_so(cli):
    cli("add", "--no-extract", "--at", "2026-02-01", "I adopted a cat called Miso")
    result = cli("recall", "quarterly tax filing for offshore shipping containers")
    assert result.exit_code == 0
    assert "no memories match" in result.stdout
    # Not "you never wrote about this": the user is told why, and what finds more.
    assert "nothing stored shares a word with the question or comes near it in meaning" in result.stderr
    for junk in ("*", "?!.", "..."):  # no word: nothing found, and so nothing to forget
        res = cli("recall", junk, "--json")
        assert res.exit_code == 0 and json.loads(res.stdout)["hits"] == [], junk
        assert "no words" in res.stderr
        plan = cli("forget", "--query", junk, "--dry-run")
        assert "Miso" not in plan.stdout, junk


def test_empty_store_gives_a_friendly_message(cli, dcpm_home):
    for args in (["recall", "anything"], ["stats"], ["history", "anything"]):
        result = cli(*args)
        assert result.exit_code == 0, args
        assert "nothing stored yet" in result.stdout + result.stderr
    assert json.loads(cli("recall", "anything", "--json").stdout)["hits"] == []
    # --json always prints JSON a script's jq can parse, the same shape as on a real store.
    assert json.loads(cli("history", "anything", "--json").stdout) == []
    assert json.loads(cli("stats", "--json").stdout)["raw_inputs"] == 0
    assert json.loads(cli("check", "--json").stdout)["ok"] is True
    assert json.loads(cli("dream", "--json").stdout)["run"] is None
    assert cli("show", "m_0123456789ab").exit_code == 2  # an unknown id, as on any store
    assert not (dcpm_home / "store").exists(), "reading never creates a store"


def test_history_shows_each_state_with_its_source(cli, fitness):
    out = cli("history", "hiking").stdout
    for day, text in FITNESS:
        assert text[:30] in out
        assert day in out
    assert "(current)" in out
    data = json.loads(cli("history", fitness, "--json").stdout)
    assert len(data) == 1 and len(data[0]["states"]) == 5
    assert data[0]["current"] == fitness
    assert all(s["sources"] for s in data[0]["states"]), "every state links to its raw input"


def test_history_of_an_id_not_in_the_store_is_an_error_not_a_query(cli, fitness):
    """A mistyped id used to fall back to a text search and answer "no beliefs match", exit 0;
    like `show`, it is an unknown id (exit 2). A query still finds beliefs."""
    for target, what in (
        ("m_2d171cb34da8", "no item"),
        ("r_0123456789ab", "no input"),
        ("m_doesnotexist", "no item"),
    ):
        res = cli("history", target)
        assert res.exit_code == 2 and what in res.stderr, (target, res.stdout, res.stderr)
    assert cli("history", "  ").exit_code == 2
    assert json.loads(cli("history", "hiking", "--json").stdout)[0]["current"] == fitness


def test_history_follows_the_read_settings(cli, fitness):
    """The no-supersedes ablation and the similarity floor apply to `history` as to `recall`."""
    assert len(json.loads(cli("history", fitness, "--json").stdout)[0]["states"]) == 5
    alone = json.loads(cli("history", fitness, "--json", "--no-supersedes").stdout)
    assert [len(a["states"]) for a in alone] == [1]
    by_query = json.loads(cli("history", "hiking", "--json", DCPM_NO_SUPERSEDES="1").stdout)
    assert by_query and all(len(a["states"]) == 1 for a in by_query)
    # "sport" is in no text: found by meaning alone, so not at all above a floor of 0.99.
    assert json.loads(cli("history", "which sport?", "--json").stdout)
    assert (
        json.loads(cli("history", "which sport?", "--json", DCPM_RECALL_MIN_SIMILARITY="0.99").stdout) == []
    )


def test_show_gives_provenance_and_links(cli, store, fitness):
    item_view = json.loads(cli("show", fitness, "--json").stdout)
    assert item_view["type"] == "item"
    assert item_view["item"]["supersedes"] is not None
    assert item_view["sources"][0]["text"].startswith("Journal: Now finds hiking")
    # The judgement that linked it, then the link itself.
    assert [e["op"] for e in item_view["events"]][:2] == ["JUDGED", "SUPERSEDE"]
    assert item_view["events"][0]["detail"].startswith("replaces: ")
    raw_id = item_view["sources"][0]["id"]
    raw_view = json.loads(cli("show", raw_id, "--json").stdout)
    assert raw_view["items"][0]["id"] == fitness
    missing = cli("show", "m_doesnotexist")
    assert missing.exit_code == 2 and "no item" in missing.stderr


def test_stats_counts_chains_and_pending(cli, fitness):
    cli("add", "--no-extract", "a thought for later")
    data = json.loads(cli("stats", "--json").stdout)
    assert data["items"] == {"fact": 5}
    assert data["chains"] == {"count": 1, "mean_length": 5.0, "max_length": 5}
    assert data["pending"] == 1
    assert data["raw_inputs"] == 6
    text = cli("stats").stdout
    assert "max 5" in text and "pending" in text


def test_an_input_with_nothing_extracted_stays_findable(cli, llm):
    llm.enqueue(extraction())  # the model found nothing memorable in it
    cli("add", "--at", "2026-03-03", "My name is Nora and I work as a nurse in Leeds")
    data = json.loads(cli("recall", "where do I work", "--json").stdout)
    assert data["hits"] and "nurse in Leeds" in data["hits"][0]["text"]


def test_a_bare_as_of_date_counts_the_whole_day(cli):
    """`--as-of 2026-03-01` is what was believed by the end of that day: an evening chat counts."""
    cli("add", "--no-extract", "--at", "2026-03-01T19:30", "Booked the cello lessons for Thursday evenings")
    hits = json.loads(cli("recall", "cello lessons", "--as-of", "2026-03-01", "--json").stdout)["hits"]
    assert [h["text"] for h in hits] == ["Booked the cello lessons for Thursday evenings"]
    assert json.loads(cli("recall", "cello lessons", "--as-of", "2026-02-28", "--json").stdout)["hits"] == []


def test_history_of_words_not_yet_extracted_says_they_wait(cli):
    assert cli("add", "--no-extract", "I switched to oat milk").exit_code == 0

    done = cli("history", "oat milk")

    assert done.exit_code == 0 and "no beliefs match" in done.stdout
    assert "1 input(s) still wait for extraction" in " ".join(done.stderr.split())


def test_the_same_words_said_at_the_same_time_are_not_each_called_the_newest(cli, tmp_path):
    # One day noted twice, typed in two sessions (a journal's entry added again from another
    # journal is the one stored before: no second input).
    moved = "Moved to Leeds for the new job at the library."
    for session in ("paper", "phone"):
        assert cli("add", "--no-extract", "-s", session, "--at", "2026-03-01", moved).exit_code == 0
    assert (
        cli("add", "--no-extract", "-s", "paper", "--at", "2026-03-02", "Unpacked the kitchen.").exit_code
        == 0
    )

    table = " ".join(cli("recall", "moved to Leeds").stdout.split())
    prompt = cli("recall", "moved to Leeds", "--format", "prompt").stdout

    assert "newest of these" not in table and table.count("said at the same time as another") == 2
    assert "the latest of" not in prompt and prompt.count("said at the same time") == 2


def test_nothing_extracted_yet_is_said_when_a_kind_or_an_input_id_finds_no_belief(cli):
    assert (
        cli("add", "--no-extract", "--at", "2026-03-01", "I love my gym, the coach knows my name.").exit_code
        == 0
    )
    facts = cli("recall", "gym", "--kind", "fact")
    assert facts.stdout.strip() == "no memories match 'gym'"
    assert "1 input(s) still wait for extraction, so no fact comes from them yet" in facts.stderr
    assert "without --kind, recall finds their words" in facts.stderr
    assert "gym" in cli("recall", "gym").stdout  # and it does
    # --arc has no arc to show of a raw input: it says why, not nothing
    arc = cli("recall", "gym", "--arc")
    assert "gym" in arc.stdout and "--arc shows the revision arcs of extracted beliefs" in " ".join(
        arc.stderr.split()
    )
    assert "--arc" not in cli("recall", "gym").stderr
    raw_id = json.loads(cli("recall", "gym", "--json").stdout)["hits"][0]["id"]
    history = cli("history", raw_id)
    assert f"{raw_id} is an input, not a belief: `dcpm show {raw_id}` shows it" in history.stderr
