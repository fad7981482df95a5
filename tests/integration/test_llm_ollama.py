"""The real `ollama` client code path, against a fake Ollama HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_ollama import Delay, Error, FakeOllama, RawBody, Reply
from support.replies import extraction, item, item_id, judged

from dcpm_cli.config import Settings
from dcpm_cli.embed import OllamaEmbedder, get_embedder
from dcpm_cli.errors import LLMBadReply, LLMError, LLMUnavailable
from dcpm_cli.ingest import formats as ingest
from dcpm_cli.llm import OllamaLLM, get_llm, structured
from dcpm_cli.prompts.extraction import Extraction
from dcpm_cli.store import Store

MESSAGES = [{"role": "user", "content": "I quit coffee and drink green tea now."}]
GOOD = extraction(item("Has quit coffee and drinks green tea", topic="food", attribute="coffee habit"))


def test_structured_output_is_requested_with_the_json_schema(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue(Reply(GOOD, prompt_eval_count=123, eval_count=45))
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    got = structured(llm, MESSAGES, Extraction)

    assert got.items[0].text == "Has quit coffee and drinks green tea"
    (sent,) = fake_ollama.chat_requests
    assert sent["model"] == "tiny"
    assert sent["format"] == Extraction.model_json_schema()
    assert sent["options"]["temperature"] == 0
    assert sent["think"] is False
    assert sent["stream"] is False
    assert sent["messages"] == MESSAGES
    assert (llm.usage.calls, llm.usage.prompt_tokens, llm.usage.completion_tokens) == (1, 123, 45)


def test_a_model_without_thinking_is_asked_again_without_the_flag(fake_ollama: FakeOllama) -> None:
    fake_ollama.no_think_models.add("tiny")
    fake_ollama.enqueue(GOOD, GOOD)
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    structured(llm, MESSAGES, Extraction)
    structured(llm, MESSAGES, Extraction)

    sent = fake_ollama.chat_requests
    assert ["think" in s for s in sent] == [True, False, False]  # it learns once, then stops asking
    assert fake_ollama.pending == 0
    assert llm.usage.calls == 2


def test_unknown_model_is_unavailable_with_a_pull_hint(fake_ollama: FakeOllama) -> None:
    llm = OllamaLLM("qwen3:4b", host=fake_ollama.host, timeout=10)

    with pytest.raises(LLMUnavailable) as e:
        llm.chat(MESSAGES)

    assert "qwen3:4b" in e.value.message and "not found" in e.value.message
    assert e.value.hint == "run `ollama pull qwen3:4b`"
    assert e.value.exit_code == 3


def test_scripted_404_is_unavailable(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue(Error(404, 'model "tiny" not found, try pulling it first'))

    with pytest.raises(LLMUnavailable, match="does not have the model"):
        OllamaLLM("tiny", host=fake_ollama.host, timeout=10).chat(MESSAGES)


def test_server_error_is_unavailable(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue(Error(500, "llama runner process has terminated"))

    with pytest.raises(LLMUnavailable) as e:
        OllamaLLM("tiny", host=fake_ollama.host, timeout=10).chat(MESSAGES)

    assert "llama runner process has terminated" in e.value.message


def test_bad_request_is_an_llm_error_but_not_unavailable(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue(Error(400, "invalid format schema"))

    with pytest.raises(LLMError) as e:
        OllamaLLM("tiny", host=fake_ollama.host, timeout=10).chat(MESSAGES)

    assert not isinstance(e.value, LLMUnavailable)
    assert "invalid format schema" in e.value.message


def test_closed_port_is_unavailable(dcpm_home: Path) -> None:
    from support.procs import closed_port

    llm = OllamaLLM("tiny", host=f"127.0.0.1:{closed_port()}", timeout=10)

    with pytest.raises(LLMUnavailable) as e:
        llm.chat(MESSAGES)

    assert e.value.message == "cannot reach the Ollama server"
    assert "ollama serve" in (e.value.hint or "")


def test_a_server_slower_than_the_timeout_is_called_slow_not_down(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue(Delay(30, then=GOOD))
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=0.3)

    with pytest.raises(LLMUnavailable) as e:
        llm.chat(MESSAGES)

    assert e.value.message == "tiny timed out after 0.3 s: the model is slow (the server is up)"
    assert "--llm-timeout" in (e.value.hint or "")
    assert "ollama serve" not in (e.value.hint or "")


def test_a_reply_cut_off_at_the_token_limit_is_asked_again_with_a_larger_budget(
    fake_ollama: FakeOllama,
) -> None:
    cut = json.dumps(GOOD)[:30]
    fake_ollama.enqueue(
        Reply(cut, eval_count=1024, done_reason="length"),
        Reply(cut, eval_count=2048, done_reason="length"),
        Reply(GOOD, eval_count=300),
    )
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    got = structured(llm, MESSAGES, Extraction)

    assert got.items[0].attribute == "coffee habit"
    budgets = [s["options"].get("num_predict") for s in fake_ollama.chat_requests]
    assert budgets == [None, 2048, 4096]  # larger each time, never the same request again
    assert llm.usage.calls == 3 and llm.usage.completion_tokens == 1024 + 2048 + 300


def test_the_larger_budget_has_a_ceiling(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue(*[Reply("{", eval_count=5000, done_reason="length")] * 3)
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    reply = llm.chat(MESSAGES)

    assert reply.content == "{"
    assert [s["options"].get("num_predict") for s in fake_ollama.chat_requests] == [None, 4096]
    assert fake_ollama.pending == 1


def test_malformed_content_is_retried_then_a_bad_reply(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue("Sure! Here's what I found: the user quit coffee.", "{not json", {"items": "none"})
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    with pytest.raises(LLMBadReply) as e:
        structured(llm, MESSAGES, Extraction, retries=2)

    assert "after 3 attempts" in e.value.message
    sent = fake_ollama.chat_requests
    assert len(sent) == 3
    # A retry shows the model its reply and why it was refused, under the same schema.
    assert sent[1]["messages"][1] == {
        "role": "assistant",
        "content": "Sure! Here's what I found: the user quit coffee.",
    }
    assert "That reply was invalid" in sent[1]["messages"][2]["content"]
    assert all(s["format"] == Extraction.model_json_schema() for s in sent)


def test_a_retry_that_succeeds_returns_the_valid_reply(fake_ollama: FakeOllama) -> None:
    fake_ollama.enqueue({"items": [{"kind": "belief", "text": "x"}]}, GOOD)
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    got = structured(llm, MESSAGES, Extraction, retries=2)

    assert got.items[0].attribute == "coffee habit"
    assert llm.usage.calls == 2


@pytest.mark.parametrize(
    "body",
    [
        RawBody(b"<html>502 Bad Gateway</html>", content_type="text/html"),
        RawBody(b'{"status": "ok"}'),  # JSON, but not a chat response
    ],
)
def test_a_reply_that_is_not_like_ollama_fails_the_call_not_as_unavailable(
    fake_ollama: FakeOllama, body: RawBody
) -> None:
    fake_ollama.enqueue(body)

    with pytest.raises(LLMBadReply) as e:
        OllamaLLM("tiny", host=fake_ollama.host, timeout=10).chat(MESSAGES)

    assert not isinstance(e.value, LLMUnavailable)
    assert "did not answer like Ollama" in e.value.message
    assert "OLLAMA_HOST" in (e.value.hint or "")


def test_an_unreadable_reply_fails_one_input_and_the_batch_goes_on(
    fake_ollama: FakeOllama, store: Store, embedder, settings: Settings
) -> None:
    from dcpm_cli.write.pipeline import Writer

    raws = ingest.parse(
        '{"role": "user", "content": "I bake bread on Sundays.", "timestamp": "2026-01-01"}\n'
        '{"role": "user", "content": "I play chess online.", "timestamp": "2026-01-02"}\n',
        session="s",
    )
    fake_ollama.enqueue(
        RawBody(b"<html>502 Bad Gateway</html>", content_type="text/html"),
        extraction(item("Plays chess online", topic="hobbies", attribute="games")),
    )
    llm = OllamaLLM("tiny", host=fake_ollama.host, timeout=10)

    report = Writer(store, embedder, llm, settings).add(raws)

    assert (report.extracted, report.failed, report.pending, report.llm_error) == (1, 1, 0, "")
    assert "did not answer like Ollama" in report.outcomes[0].error
    assert [i.text for i in store.all_items()] == ["Plays chess online"]


def test_ollama_host_env_is_respected(fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.enqueue(GOOD)

    llm = get_llm("ollama:tiny", timeout=10)
    structured(llm, MESSAGES, Extraction)

    assert len(fake_ollama.chat_requests) == 1


def test_ollama_embedder_goes_through_the_server(
    fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    emb = OllamaEmbedder("tiny")

    vectors = emb.embed(["one", "two"])

    assert (emb.model_id, emb.dim, vectors.shape) == ("ollama:tiny", 8, (2, 8))
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-5
    # A store keeps the embedder's id: vectors from this model are never mixed with MiniLM's.
    Store(str(tmp_path / "s"), emb)
    with pytest.raises(Exception, match="ollama:tiny"):
        Store(str(tmp_path / "s"), get_embedder("minilm"))


def test_dcpm_add_runs_the_whole_pipeline_through_ollama_host(
    fake_ollama: FakeOllama, dcpm, dcpm_home: Path
) -> None:
    log = (
        '{"role": "user", "content": "I drink three flat whites a day.", "timestamp": "2026-03-10T09:00"}\n'
        '{"role": "assistant", "content": "That is a lot of coffee.", "timestamp": "2026-03-10T09:01"}\n'
        '{"role": "user", "content": "I quit coffee, green tea now.", "timestamp": "2026-03-10T09:20"}\n'
    )
    _, _, second = ingest.parse(log, session="chat")
    fake_ollama.no_think_models.add("tiny")  # dcpm must fall back to asking without `think`
    coffee = extraction(item("Drinks three flat whites a day", topic="food", attribute="coffee habit"))
    fake_ollama.enqueue(
        Reply(coffee, 50, 10),
        Reply(GOOD, 60, 30),
        Reply(judged("replaces"), 70, 10),
        Reply(judged("replaces"), 70, 10),  # a replaces is asked again before it links
    )

    done = dcpm(
        "--llm", "ollama:tiny", "add", "-", "--session", "chat", "--json",
        input=log,
        env={"OLLAMA_HOST": fake_ollama.host},
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["stored"], summary["extracted"], summary["added"], summary["superseded"]) == (3, 2, 2, 1)
    assert (summary["llm_calls"], summary["prompt_tokens"], summary["completion_tokens"]) == (4, 250, 60)
    sent = fake_ollama.chat_requests
    assert [s.get("think") for s in sent] == [False, None, None, None, None]  # refused once, then omitted
    assert [s["format"]["title"] for s in sent] == ["Extraction"] * 3 + ["Judgement"] * 2
    assert {s["model"] for s in sent} == {"tiny"}
    assert "I quit coffee, green tea now." in sent[2]["messages"][-1]["content"]
    assert "assistant: That is a lot of coffee." in sent[2]["messages"][-1]["content"]
    assert "EARLIER (said 2026-03-10): Drinks three flat whites a day" in sent[3]["messages"][-1]["content"]
    store = Store(Settings.resolve().store, get_embedder("minilm"), create=False)
    assert [i.text for i in store.chain(item_id(second))] == [
        "Drinks three flat whites a day",
        "Has quit coffee and drinks green tea",
    ]


def test_dcpm_add_without_a_server_keeps_the_input_and_says_so_once(dcpm, dcpm_home: Path) -> None:
    done = dcpm("--llm", "ollama:tiny", "add", "I moved to Bristol in 2019.")

    assert done.returncode == 3
    assert done.stdout.strip() == "stored 1 input, 1 pending extraction"
    assert "Traceback" not in done.stderr
    assert done.stderr.count("cannot reach the Ollama server") == 1
    assert "dcpm process" in done.stderr
    store = Store(Settings.resolve().store, get_embedder("minilm"), create=False)
    (raw,) = store.raw_by_status(["pending"])
    assert raw.text == "I moved to Bristol in 2019."
    assert "cannot reach the Ollama server" in raw.error


@pytest.mark.parametrize("host", ["garbage:::1", "localhost:abc", "127.0.0.1:99999"])
def test_an_ollama_host_that_is_no_host_keeps_the_input_and_says_why(
    dcpm, dcpm_home: Path, host: str
) -> None:
    done = dcpm("--llm", "ollama:tiny", "add", "I moved to Bristol in 2019.", env={"OLLAMA_HOST": host})

    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert f"OLLAMA_HOST {host!r} is not a host and port" in done.stderr
    store = Store(Settings.resolve().store, get_embedder("minilm"), create=False)
    assert [r.text for r in store.raw_by_status(["pending"])] == ["I moved to Bristol in 2019."]


def test_doctor_says_an_ollama_host_that_is_no_host_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from dcpm_cli.llm import probe

    monkeypatch.setenv("OLLAMA_HOST", "garbage:::1")
    assert probe("ollama:tiny").startswith("OLLAMA_HOST 'garbage:::1' is not a host and port")


def test_scripted_llm_counts_tokens_per_call() -> None:
    from dcpm_cli.llm import ScriptedLLM

    llm = ScriptedLLM().enqueue("x" * 40, "y" * 8)

    first = llm.chat([{"role": "user", "content": "z" * 400}])
    second = llm.chat([{"role": "user", "content": "z" * 4}])

    assert (first.prompt_tokens, first.completion_tokens) == (100, 10)
    assert (second.prompt_tokens, second.completion_tokens) == (1, 2)
    assert (llm.usage.calls, llm.usage.prompt_tokens, llm.usage.completion_tokens) == (2, 101, 12)
    with pytest.raises(LLMUnavailable, match="no reply left"):
        llm.chat([{"role": "user", "content": "more?"}])


def test_ctrl_c_during_add_prints_what_was_done_and_exits_130(fake_ollama: FakeOllama) -> None:
    import os
    import signal
    import subprocess
    import time

    from support.procs import dcpm_script

    log = "".join(
        json.dumps({"role": "user", "content": text, "timestamp": f"2026-01-0{n}"}) + "\n"
        for n, text in enumerate(["I bake bread on Sundays.", "I play chess.", "I grow tomatoes."], 1)
    )
    fake_ollama.enqueue(
        extraction(item("Bakes bread on Sundays", topic="food", attribute="baking")),
        Delay(60, then=GOOD),  # the second input's call hangs until Ctrl-C
    )
    proc = subprocess.Popen(
        [dcpm_script(), "--llm", "ollama:tiny", "add", "-", "--session", "s"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OLLAMA_HOST": fake_ollama.host, "COLUMNS": "100"},
        # As in a terminal: a runner started in the background (`cmd &` in a script) hands its
        # children SIGINT ignored, and Python then never raises KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdin is not None
    proc.stdin.write(log)
    proc.stdin.close()
    deadline = time.monotonic() + 120
    while len(fake_ollama.chat_requests) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()

    assert proc.returncode == 130, err
    assert (
        out.strip() == "stored 3 inputs, extracted 1, +1 new, 0 superseded, 0 updated, 0 duplicates, "
        "2 pending extraction"
    )
    assert "interrupted: 2 input(s) still pending" in err
    assert "Traceback" not in err
    store = Store(Settings.resolve().store, get_embedder("minilm"), create=False)
    assert sorted(r.text for r in store.raw_by_status(["pending"])) == ["I grow tomatoes.", "I play chess."]
