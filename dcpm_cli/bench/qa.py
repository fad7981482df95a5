"""LongMemEval question answering on dcpm: memory → `recall --format prompt` → a reader model
answers → a judge model says yes or no with LongMemEval's per-type rules.

    dcpm bench longmemeval FILE --qa [--llm ollama:M] [--judge ollama:M] [--limit N]
                                [--per-type N] [--ablation full|no-collision|lite|no-supersedes]

Each question's haystack goes into a fresh store in a temp dir, through the writer users run:

- no --ablation: stored raw (`dcpm add --no-extract`), no LLM for memory. The quick path, and
  the read path alone: what recall finds in the user's own words.
- --ablation ROW: the whole system on the reader model, as the paper's ablation table: System 1
  extracts and reconciles every user turn (`dcpm add`), then System 2 dreams (`dcpm dream`).
  full = dream with core schemas; no-collision = dream without Phase 3; lite = no dream;
  no-supersedes = full, with no revision chains written or read (DCPM_NO_SUPERSEDES).

Then `recall()` with the question (chains off for no-supersedes), rendered exactly as
`dcpm recall --format prompt` renders it, is the reader's only context, with the question's
date. The judge gets the question, the gold answer (a rubric for preference questions, an
explanation for abstention ones) and the reader's answer, with the rules of LongMemEval's
`evaluate_qa.py` (`get_anscheck_prompt`): a response is correct if it contains the answer or all
the steps to it, and wrong if it has only part of it; temporal reasoning tolerates off-by-one
counts of days, weeks or months; for a knowledge update, older information beside the updated
answer is fine; a preference response need only recall and use the user's information
correctly; an abstention question is right when the response says it cannot be answered. The
label is "yes" in the judge's reply, as there. Both models are called through dcpm's LLM
protocol (an Ollama server, or a scripted model), with no reply schema: plain text, as any
chat model answers.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.bench.longmemeval import TYPES, haystacks, load, parse_date
from dcpm_cli.errors import InputError
from dcpm_cli.llm import Usage
from dcpm_cli.models import RawInput

if TYPE_CHECKING:
    from dcpm_cli.config import Settings
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM

ABLATIONS = ("full", "no-collision", "lite", "no-supersedes")
CONTEXT_K = 10  # memories given to the reader

READER = """You answer a question from the user's long-term memory. The memory below was
recalled for this question; earlier versions of a belief are shown in brackets, and the
current one is what holds now. Today's date is {today}.

{memory}

Question: {question}
Answer briefly, using only the memory above (dates in it are when things were said). If it
does not contain the answer, say that you do not know."""

_ASK = "\n\nQuestion: {question}\n\n{gold_label}: {answer}\n\nModel Response: {response}\n\n"
_CORRECT = (
    "I will give you a question, a correct answer, and a response from a model. Please answer yes "
    "if the response contains the correct answer. Otherwise, answer no. If the response is "
    "equivalent to the correct answer or contains all the intermediate steps to get the correct "
    "answer, you should also answer yes. If the response only contains a subset of the information "
    "required by the answer, answer no."
)
JUDGE_RULES = {
    "single-session-user": _CORRECT,
    "single-session-assistant": _CORRECT,
    "multi-session": _CORRECT,
    "temporal-reasoning": _CORRECT
    + " In addition, do not penalize off-by-one errors for the number of days. If the question asks "
    "for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., "
    "predicting 19 days when the answer is 18), the model's response is still correct.",
    "knowledge-update": (
        "I will give you a question, a correct answer, and a response from a model. Please answer yes "
        "if the response contains the correct answer. Otherwise, answer no. If the response contains "
        "some previous information along with an updated answer, the response should be considered "
        "as correct as long as the updated answer is the required answer."
    ),
    "single-session-preference": (
        "I will give you a question, a rubric for desired personalized response, and a response from "
        "a model. Please answer yes if the response satisfies the desired response. Otherwise, answer "
        "no. The model does not need to reflect all the points in the rubric. The response is correct "
        "as long as it recalls and utilizes the user's personal information correctly."
    ),
}
ABSTENTION_RULE = (
    "I will give you an unanswerable question, an explanation, and a response from a model. Please "
    "answer yes if the model correctly identifies the question as unanswerable. The model could say "
    "that the information is incomplete, or some other information is given but the asked "
    "information is not."
)


def judge_prompt(qtype: str, question: str, answer: str, response: str, *, abstention: bool) -> str:
    """The judge's prompt for one question, by its type (LongMemEval's `get_anscheck_prompt`)."""
    if abstention:
        rule, label, ask = (
            ABSTENTION_RULE,
            "Explanation",
            "Does the model correctly identify the question as unanswerable?",
        )
    elif qtype in JUDGE_RULES:
        rule, ask = JUDGE_RULES[qtype], "Is the model response correct?"
        label = "Rubric" if qtype == "single-session-preference" else "Correct Answer"
    else:
        raise InputError(f"no judge rule for question type {qtype!r}", "types: " + ", ".join(JUDGE_RULES))
    body = _ASK.format(question=question, gold_label=label, answer=answer, response=response)
    return rule + " " + body + ask + " Answer yes or no only."


@dataclass
class QAQuestion:
    id: str
    type: str
    question: str
    answer: str
    asked_at: str  # LongMemEval's date text
    raws: list[RawInput]

    @property
    def abstention(self) -> bool:
        return self.id.endswith("_abs")


def parse_qa(rec: dict[str, Any]) -> QAQuestion:
    """A record as its question and every turn of its haystack, as a chat import stores them
    (assistant turns as context for extraction; recall searches them only for a question about
    what the assistant said), each session's turns a second apart."""
    from datetime import timedelta

    raws = []
    for sid, date, session in zip(
        rec["haystack_session_ids"], rec["haystack_dates"], rec["haystack_sessions"], strict=True
    ):
        start = parse_date(date)
        for i, t in enumerate(session):
            if t["content"].strip():
                raws.append(
                    RawInput(
                        text=t["content"],
                        role=t["role"],
                        session=sid,
                        source="longmemeval",
                        said_at=start + timedelta(seconds=i),
                    )
                )
    return QAQuestion(
        str(rec["question_id"]), rec["question_type"], rec["question"], str(rec["answer"]),
        rec["question_date"], raws,
    )  # fmt: skip


@dataclass
class QAResult:
    id: str
    type: str
    question: str
    answer: str
    hypothesis: str
    correct: bool
    judge_reply: str
    context: str
    seconds: dict[str, float]


@dataclass
class QABench:
    file: str
    reader: str
    judge: str
    ablation: str  # "" = raw memory, no LLM before the reader
    results: list[QAResult] = field(default_factory=list)
    memory_usage: Usage = field(default_factory=Usage)  # System 1 and 2 calls
    reader_usage: Usage = field(default_factory=Usage)
    judge_usage: Usage = field(default_factory=Usage)
    wall_seconds: float = 0.0

    def accuracy(
        self, qtype: str | None = None, *, abstention: bool | None = None
    ) -> tuple[float, int] | None:
        rows = [
            r
            for r in self.results
            if (qtype is None or r.type == qtype)
            and (abstention is None or r.id.endswith("_abs") == abstention)
        ]
        return (sum(r.correct for r in rows) / len(rows), len(rows)) if rows else None


def select(records: list[dict[str, Any]], limit: int | None, per_type: int | None) -> list[dict[str, Any]]:
    """The first `per_type` questions of each type (abstention ones count as their own type),
    in file order, then the first `limit` of those."""
    if per_type:
        taken: dict[str, int] = {}
        kept = []
        for rec in records:
            key = rec["question_type"] + ("_abs" if str(rec["question_id"]).endswith("_abs") else "")
            if taken.get(key, 0) < per_type:
                taken[key] = taken.get(key, 0) + 1
                kept.append(rec)
        records = kept
    return records[:limit] if limit else records


def run_qa(
    path: Path,
    embedder: Embedder,
    settings: Settings,
    reader: LLM,
    judge: LLM,
    *,
    limit: int | None = None,
    per_type: int | None = None,
    ablation: str | None = None,
    k: int = CONTEXT_K,
    out: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> QABench:
    """Answer and judge each selected question; `out` gets one JSON line per question as it is
    judged (LongMemEval's hypothesis format plus the label), so a stopped run keeps its work."""
    if ablation is not None and ablation not in ABLATIONS:
        raise InputError(f"unknown ablation {ablation!r}", "use one of: " + ", ".join(ABLATIONS))
    t_start = time.perf_counter()
    records = select(load(path), limit, per_type)
    bench = QABench(str(path), reader.name, judge.name, ablation or "")
    # LongMemEval's times are its own (UTC), whatever zone the user running the bench is in.
    settings = dataclasses.replace(settings, timezone="UTC")
    if ablation == "no-supersedes":
        settings = dataclasses.replace(settings, no_supersedes=True)
    try:
        with haystacks(out) as (workdir, write):
            for n, rec in enumerate(records, 1):
                q = parse_qa(rec)
                r = answer_one(q, embedder, settings, reader, judge, workdir / q.id, bench, ablation, k)
                shutil.rmtree(workdir / q.id, ignore_errors=True)
                bench.results.append(r)
                label = {"model": judge.name, "label": r.correct}
                write(
                    {
                        "question_id": r.id,
                        "question_type": r.type,
                        "hypothesis": r.hypothesis,
                        "autoeval_label": label,
                    }
                )
                if progress:
                    progress(n, len(records))
    finally:
        bench.wall_seconds = time.perf_counter() - t_start
    return bench


def answer_one(
    q: QAQuestion,
    embedder: Embedder,
    settings: Settings,
    reader: LLM,
    judge: LLM,
    where: Path,
    bench: QABench,
    ablation: str | None,
    k: int,
) -> QAResult:
    from dcpm_cli.read.recall import recall
    from dcpm_cli.store import Store
    from dcpm_cli.views import recall_prompt_text

    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    store = Store(str(where), embedder)
    _remember(q, store, embedder, settings, reader, ablation, bench)
    seconds["memory"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    found = recall(store, embedder, q.question, k=k, chains=not settings.no_supersedes)
    context = recall_prompt_text(found)
    seconds["recall"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    today = parse_date(q.asked_at).strftime("%Y-%m-%d (%A)")
    prompt = READER.format(today=today, memory=context.strip(), question=q.question)
    hypothesis = _ask(reader, prompt, bench.reader_usage).strip()
    seconds["reader"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    check = judge_prompt(q.type, q.question, q.answer, hypothesis, abstention=q.abstention)
    verdict = _ask(judge, check, bench.judge_usage).strip()
    seconds["judge"] = time.perf_counter() - t0
    correct = "yes" in verdict.lower()
    return QAResult(q.id, q.type, q.question, q.answer, hypothesis, correct, verdict, context, seconds)


def _remember(
    q: QAQuestion,
    store: Any,
    embedder: Embedder,
    settings: Settings,
    llm: LLM,
    ablation: str | None,
    bench: QABench,
) -> None:
    """The haystack into the store: raw, or through System 1 and 2 as the ablation row says."""
    from dcpm_cli.write.pipeline import Writer

    if ablation is None:
        Writer(store, embedder, None, settings).add(q.raws, extract=False)
        return
    from dcpm_cli.dream.run import DreamOptions, dream
    from dcpm_cli.ops.check import check

    before = dataclasses.replace(llm.usage)
    try:
        report = Writer(store, embedder, llm, settings).add(q.raws)
        if report.llm_error:
            from dcpm_cli.errors import LLMUnavailable

            raise LLMUnavailable(report.llm_error)
        if ablation != "lite":
            opts = DreamOptions(
                mode="no-collision" if ablation == "no-collision" else "full",
                core_schemas=ablation != "no-collision",
                no_supersedes=settings.no_supersedes,
                catch_up=False,
                retries=settings.llm_retries,
            )
            dream(store, embedder, llm, opts, repair=lambda s: check(s, repair=True))
    finally:
        used = llm.usage
        bench.memory_usage.add(
            Usage(
                used.calls - before.calls,
                used.prompt_tokens - before.prompt_tokens,
                used.completion_tokens - before.completion_tokens,
            )
        )


def _ask(llm: LLM, prompt: str, usage: Usage) -> str:
    before = dataclasses.replace(llm.usage)
    try:
        return llm.chat([{"role": "user", "content": prompt}]).content
    finally:
        usage.add(
            Usage(
                llm.usage.calls - before.calls,
                llm.usage.prompt_tokens - before.prompt_tokens,
                llm.usage.completion_tokens - before.completion_tokens,
            )
        )


# -- the printed table ----------------------------------------------------------------------


def report(bench: QABench) -> str:
    memory = f"ablation {bench.ablation}" if bench.ablation else "raw inputs (no System 1/2)"
    lines = [
        f"LongMemEval QA — {bench.file}",
        f"memory: {memory}; reader {bench.reader}; judge {bench.judge}; {len(bench.results)} questions",
        "",
        f"{'type':<28}{'n':>4}{'accuracy':>10}",
    ]
    seen = [t for t in TYPES if any(r.type == t for r in bench.results)]
    seen += sorted({r.type for r in bench.results} - set(seen))
    for t in seen:
        acc = bench.accuracy(t, abstention=False)
        if acc:
            lines.append(f"{t:<28}{acc[1]:>4}{acc[0]:>10.3f}")
    abst = bench.accuracy(abstention=True)
    if abst:
        lines.append(f"{'abstention':<28}{abst[1]:>4}{abst[0]:>10.3f}")
    overall = bench.accuracy()
    if overall:
        lines.append(f"{'overall':<28}{overall[1]:>4}{overall[0]:>10.3f}")
    lines += ["", _costs(bench)]
    return "\n".join(lines)


def _costs(bench: QABench) -> str:
    n = max(len(bench.results), 1)

    def per_q(key: str) -> float:
        return sum(r.seconds.get(key, 0.0) for r in bench.results) / n

    def calls(u: Usage) -> str:
        return f"{u.calls} calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens"

    lines = [
        f"wall {bench.wall_seconds:.0f} s; per question: memory {per_q('memory'):.1f} s, recall "
        f"{per_q('recall'):.2f} s, reader {per_q('reader'):.1f} s, judge {per_q('judge'):.1f} s",
        f"reader: {calls(bench.reader_usage)}; judge: {calls(bench.judge_usage)}",
    ]
    if bench.ablation:
        lines.append(f"memory (System 1 and 2): {calls(bench.memory_usage)}")
    return "\n".join(lines)
