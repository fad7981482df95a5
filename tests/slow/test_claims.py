"""Concurrent writers do not repeat or undo each other's work: an input is claimed before its
LLM calls, a failure never overwrites another process's DONE, a re-extraction never reuses an
item id for a different item, and probing the dream lock never makes a starting dream fail."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.fake_ollama import Delay, FakeOllama, Reply
from support.procs import dcpm_script
from support.replies import decide, decisions, extraction, item, item_id

from dcpm_cli.errors import LLMUnavailable, LockBusy
from dcpm_cli.llm import Reply as LLMReply
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import DONE, FAILED, PENDING, RawInput
from dcpm_cli.ops.check import check
from dcpm_cli.ops.forget import apply_forget, plan_forget
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer


def said(day: int) -> datetime:
    return datetime(2026, 5, day, 9, tzinfo=UTC)


def is_extraction(body: dict[str, Any]) -> bool:
    return "items" in (body.get("format") or {}).get("properties", {})


@pytest.mark.slow
def test_two_process_runs_never_repeat_an_llm_call(cli, tmp_path: Path, fake_ollama: FakeOllama) -> None:
    n = 10
    lines = [
        json.dumps({"role": "user", "content": f"note {i}", "timestamp": f"2026-05-{i + 1:02d}"})
        for i in range(n)
    ]
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli("add", "--no-extract", "--file", str(tmp_path / "log.jsonl")).exit_code == 0
    # Each reply reads as an extraction and as a reconciliation, and takes a moment, so both
    # processes are mid-batch together; more replies than any run could need.
    for i in range(6 * n):
        reply = {"items": [item(f"Wrote note number {i}", topic="work")], "decisions": [decide("ADD")]}
        fake_ollama.enqueue(Delay(0.3, Reply(reply)))
    env = {**os.environ, "OLLAMA_HOST": fake_ollama.host, "COLUMNS": "100"}
    procs = [
        subprocess.Popen(
            [dcpm_script(), "--llm", "ollama:tiny", "process", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        reports.append(json.loads(out))

    extractions = [b for b in fake_ollama.chat_requests if is_extraction(b)]
    assert len(extractions) == n  # each input extracted once, by one of the two
    assert sum(r["extracted"] for r in reports) == n
    store = cli.open_store()
    assert {r.status for r in store.raw_by_status([PENDING, DONE, FAILED])} == {DONE}
    assert check(store).ok


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_live_claim_is_respected_and_a_dead_processes_claim_taken_over(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    texts = (("I swim on Mondays.", 1), ("I cycle.", 2), ("I row.", 3))
    mine, theirs, remote = (RawInput(text=t, said_at=said(d)) for t, d in texts)
    writer.add([mine, theirs, remote], extract=False)
    host = socket.gethostname()
    with store.write():  # another live process (this test's own pid) is extracting `theirs`
        store.claim([theirs.id], f"{host}:{os.getpid()}:other", timedelta(minutes=5))
        store.claim([mine.id], f"{host}:{dead_pid()}:gone", timedelta(minutes=5))  # killed mid-call
        store.claim([remote.id], "elsewhere:17:x", timedelta(minutes=-1))  # another machine's, run out
    assert sorted(store.stale_claims()) == sorted([mine.id, remote.id])
    llm.enqueue(
        extraction(item("Swims on Mondays")),
        extraction(item("Rows", topic="sport")),
        decisions(decide("ADD")),
    )

    report = writer.process_pending()

    assert report.extracted == 2
    raws = store.get_raw([mine.id, theirs.id, remote.id])
    assert [raws[r.id].status for r in (mine, theirs, remote)] == [DONE, PENDING, DONE]
    assert list(store.claims_on([mine.id, theirs.id, remote.id])) == [theirs.id]  # its own released


class FinishedElsewhere(ScriptedLLM):
    """An LLM that fails, while another process finishes the same input in the meantime."""

    def __init__(self, store: Store, raw_id: str) -> None:
        super().__init__()
        self.store, self.raw_id = store, raw_id

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> LLMReply:
        with self.store.write():
            self.store.set_raw_status(self.raw_id, DONE, "", 1)
        raise LLMUnavailable("the server went away")


def test_a_failure_never_overwrites_another_processes_done(
    store: Store, embedder: Any, settings: Any
) -> None:
    raw = RawInput(text="I started pottery classes.", said_at=said(3))
    Writer(store, embedder, None, settings).add([raw], extract=False)
    other = Store(store.uri, embedder)

    report = Writer(store, embedder, FinishedElsewhere(other, raw.id), settings).process_pending()

    assert report.llm_error
    assert store.get_raw([raw.id])[raw.id].status == DONE


def test_a_reextraction_never_reuses_an_item_id_for_a_different_item(
    writer: Writer, llm: ScriptedLLM, store: Store
) -> None:
    raw = RawInput(text="I moved to Lisbon and I play the cello.", said_at=said(4))

    class Killed(BaseException):
        """A kill (not Ctrl-C, which the writer turns into a partial report)."""

    def cut(step: str) -> None:
        if step == "links":
            raise Killed  # killed after the items landed, before the input was DONE

    llm.enqueue(extraction(item("Lives in Lisbon", topic="home")))
    with pytest.raises(Killed):
        replace(writer, checkpoint=cut).add([raw])
    assert store.get_raw([raw.id])[raw.id].status == PENDING
    # The second extraction of the same input says something else first.
    llm.enqueue(
        extraction(item("Plays the cello", topic="music"), item("Lives in Lisbon", topic="home")),
        decisions(decide("ADD")),
    )

    assert writer.process_pending().extracted == 1

    texts = {i.id: i.text for i in store.all_items()}
    assert sorted(texts.values()) == ["Lives in Lisbon", "Plays the cello"]
    assert texts[item_id(raw)] == "Lives in Lisbon"  # the first item kept its id
    assert check(store).ok


def test_probing_the_dream_lock_never_makes_a_starting_dream_fail(store: Store) -> None:
    stop = threading.Event()
    probes = [0]

    def stats_in_a_loop() -> None:
        while not stop.is_set():
            store.dream_running()
            probes[0] += 1

    prober = threading.Thread(target=stats_in_a_loop)
    prober.start()
    refused = 0
    try:
        for _ in range(300):
            try:
                with store.dream_lock():
                    pass
            except LockBusy:
                refused += 1
    finally:
        stop.set()
        prober.join()
    assert probes[0] > 0
    assert refused == 0
    with store.dream_lock():
        assert store.dream_running()
    assert not store.dream_running()


def test_minilm_int8_vectors_do_not_mix_into_a_minilm_store(cli) -> None:
    assert cli("add", "--no-extract", "I like tea").exit_code == 0

    result = cli("--embedder", "minilm-int8", "add", "--no-extract", "I like coffee")

    assert result.exit_code == 4
    assert "made by all-MiniLM-L6-v2" in result.stderr and "int8" in result.stderr


class ForgottenMeanwhile(ScriptedLLM):
    """An LLM whose first call takes long enough for the user to `dcpm forget` the input."""

    def __init__(self, store: Store, raw_id: str) -> None:
        super().__init__()
        self.store, self.raw_id = store, raw_id

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> LLMReply:
        if self.store.get_raw([self.raw_id]):
            apply_forget(self.store, plan_forget(self.store, [self.raw_id]))
        return super().chat(messages, schema=schema)


def test_an_input_forgotten_while_it_is_extracted_leaves_no_fact_behind(
    store: Store, embedder: Any, settings: Any
) -> None:
    raw = RawInput(text="My PIN is 4321.", said_at=said(5))
    Writer(store, embedder, None, settings).add([raw], extract=False)
    llm = ForgottenMeanwhile(Store(store.uri, embedder), raw.id)
    llm.enqueue(extraction(item("Has PIN 4321", topic="bank")))

    report = Writer(store, embedder, llm, settings).process_pending()

    assert report.failed == 0 and report.added == 0
    assert store.all_items() == [] and store.get_raw([raw.id]) == {}
    assert store.stale_claims() == []
    assert check(store).ok
