"""`dcpm bench longmemeval --qa`: a reader answers from `recall --format prompt`, a judge scores
with LongMemEval's per-type rules. Through the real `ollama` client against the fake Ollama
server (the path a real server takes), and with a scripted model for the ablation rows."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from support.replies import extraction, item, replaced

from dcpm_cli.bench.qa import judge_prompt, run_qa
from dcpm_cli.config import Settings
from dcpm_cli.llm import ScriptedLLM


def record(qid: str, qtype: str, question: str, answer: str, sessions: list[list[tuple[str, str]]]) -> dict:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": answer,
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": [f"{qid}_s{i}" for i in range(len(sessions))],
        "haystack_dates": [f"2023/05/{10 + i:02d} (Wed) 09:00" for i in range(len(sessions))],
        "haystack_sessions": [[{"role": r, "content": c} for r, c in s] for s in sessions],
        "answer_session_ids": [f"{qid}_s0"],
    }


FILE = [
    record(
        "q1", "single-session-user", "How long did I wait for my visa decision?", "over a year",
        [[("user", "I finally got my visa decision after waiting more than a year."), ("assistant", "Yay!")]],
    ),
    record(
        "q2", "knowledge-update", "Where do I live now?", "Portland",
        [[("user", "I live in Denver, love the mountains.")], [("user", "We moved to Portland last week.")]],
    ),
    record(
        "q3_abs", "multi-session", "What is my cat's name?", "You never mentioned a cat.",
        [[("user", "My dog Biscuit loves the beach.")]],
    ),
    record(
        "q4", "temporal-reasoning", "How many days passed between my two dentist visits?", "18 days",
        [[("user", "Dentist today, a filling.")], [("user", "Back at the dentist for a check-up.")]],
    ),
]  # fmt: skip


@pytest.fixture
def lme(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(FILE, f)
    return path


def test_each_type_gets_its_judge_rule() -> None:
    def rule(qtype: str, abstention: bool = False) -> str:
        return judge_prompt(qtype, "Q?", "A", "R", abstention=abstention)

    assert "off-by-one" in rule("temporal-reasoning") and "off-by-one" not in rule("multi-session")
    assert "updated answer" in rule("knowledge-update")
    assert "Rubric: A" in rule("single-session-preference")
    assert "Correct Answer: A" in rule("single-session-user")
    assert "unanswerable" in rule("multi-session", abstention=True)
    for qtype in ("single-session-user", "single-session-assistant", "multi-session"):
        assert rule(qtype).endswith("Is the model response correct? Answer yes or no only.")


def test_qa_through_a_real_ollama_client_prints_accuracy_per_type(cli, fake_ollama, lme, tmp_path) -> None:
    fake_ollama.models.add("judge")
    fake_ollama.enqueue(
        "You waited over a year.", "yes",
        "You live in Denver.", "no",
        "I don't know: you never mentioned a cat.", "Yes.",
        "19 days.", "yes",
    )  # fmt: skip
    out = tmp_path / "answers.jsonl"
    result = cli(
        "bench", "longmemeval", str(lme), "--qa", "--llm", "ollama:tiny", "--judge", "ollama:judge",
        "--out", str(out), OLLAMA_HOST=fake_ollama.host,
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines() if line.strip()}
    assert rows["single-session-user"] == ["1", "1.000"]
    assert rows["knowledge-update"] == ["1", "0.000"]
    assert rows["temporal-reasoning"] == ["1", "1.000"]
    assert rows["abstention"] == ["1", "1.000"]
    assert rows["overall"] == ["4", "0.750"]

    chats = fake_ollama.chat_requests
    assert [c["model"] for c in chats] == ["tiny", "judge"] * 4
    reader = chats[0]["messages"][-1]["content"]
    assert "Relevant memory about the user" in reader and "waiting more than a year" in reader
    assert "2023-06-01" in reader  # the question's date: temporal questions need today
    assert "format" not in chats[0] and "format" not in chats[1]  # plain chat, any model answers
    assert "Model Response: You waited over a year." in chats[1]["messages"][-1]["content"]
    assert "off-by-one" in chats[7]["messages"][-1]["content"]
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["question_id"], x["autoeval_label"]["label"]) for x in labels] == [
        ("q1", True), ("q2", False), ("q3_abs", True), ("q4", True)
    ]  # fmt: skip


def test_per_type_and_limit_choose_the_questions(cli, fake_ollama, lme) -> None:
    fake_ollama.enqueue("Portland.", "yes")
    result = cli(
        "bench", "longmemeval", str(lme), "--qa", "--llm", "ollama:tiny", "--per-type", "1", "--limit", "2",
        OLLAMA_HOST=fake_ollama.host,
    )  # fmt: skip
    assert result.exit_code == 3  # the second question found no reply: the LLM is "down"
    fake_ollama.enqueue("Over a year.", "yes", "Portland.", "yes")
    result = cli(
        "bench", "longmemeval", str(lme), "--qa", "--llm", "ollama:tiny", "--per-type", "1", "--limit", "2",
        OLLAMA_HOST=fake_ollama.host,
    )  # fmt: skip
    assert "overall                        2     1.000" in result.stdout


def qa_with_memory(lme: Path, embedder, ablation: str) -> tuple[dict, ScriptedLLM]:
    """q2 alone through System 1 (and 2) on a scripted model: the move supersedes Denver."""
    llm = ScriptedLLM()
    denver = "Lives in Denver"
    llm.enqueue(
        extraction(item(denver, topic="home", attribute="home city", kind="identity")),
        extraction(item("Moved to Portland in May 2023", topic="home", attribute="home city")),
        *replaced(),
        "You live in Portland.",
        "yes",
    )
    records = [r for r in FILE if r["question_id"] == "q2"]
    path = lme.with_name(f"q2-{ablation}.json")
    path.write_text(json.dumps(records))
    bench = run_qa(path, embedder, Settings.resolve(llm="scripted"), llm, llm, ablation=ablation)
    return {"bench": bench, "reader": llm.calls[4]["messages"][-1]["content"]}, llm


def _first_item(session: str) -> str:
    from dcpm_cli.bench.qa import parse_qa
    from dcpm_cli.models import short_hash

    q = parse_qa(next(r for r in FILE if r["question_id"] == "q2"))
    raw = next(r for r in q.raws if r.session == session)
    return "m_" + short_hash(raw.id, "0")


def test_the_ablation_rows_build_memory_with_the_whole_system(lme, embedder) -> None:
    full, llm = qa_with_memory(lme, embedder, "full")
    assert len(llm.calls) == 6 and llm.replies == []  # 2 extractions, 1 replaces asked twice, reader, judge
    assert "Moved to Portland" in full["reader"]
    assert "[earlier: 2023-05-10: Lives in Denver]" in full["reader"]
    assert full["bench"].memory_usage.calls == 4 and full["bench"].accuracy() == (1.0, 1)

    ablated, _ = qa_with_memory(lme, embedder, "no-supersedes")
    reader = ablated["reader"]
    assert "[earlier:" not in reader  # no arcs: two beliefs side by side, both "current"
    assert "Lives in Denver" in reader and "Moved to Portland" in reader
