"""LongMemEval's retrieval protocol on dcpm, beside plain BM25, plain dense retrieval and their RRF.

    dcpm bench longmemeval FILE [--limit N] [--out ranks.jsonl] [--granularity session|turn]

Protocol (LongMemEval `src/retrieval`): the keys are the user turns of each question's haystack
(assistant turns are not keys, so they are not ingested); abstention questions (`_abs`) are
skipped; metrics are recall_any@k, recall_all@k and ndcg_any@k, per question type and overall.
`--assistant-turns` stores the assistant's turns in dcpm's stores too, as `dcpm import` of a chat
does (recall searches them only for a question about what the assistant said); the baselines
keep the protocol's user turns.

- dcpm: every question is its own haystack, ingested through the writer users run
  (`Writer.add(raws, extract=False)`, i.e. `dcpm add --no-extract`) into a fresh store in a temp
  dir (one session per haystack session, `said_at` from `haystack_dates`), then searched with
  `recall()` asked at the question's date (its time words read against it; nothing hidden) —
  the code path of `dcpm recall`, nothing else.
- bm25: Okapi BM25 (k1 = 1.2, b = 0.75, Lucene idf) over the same user turns, lower-cased
  alphanumeric tokens, no stemming or stop list; computed here, not by LanceDB.
- dense: cosine between the question and each user turn, same embedder and same vectors (the
  embedder is memoised, so each text is embedded once for all the systems).
- rrf: reciprocal-rank fusion of the bm25 and dense rankings, Σ 1/(60 + rank): the plain hybrid
  a page of code gives, the bar any cleverness in dcpm's read path has to clear.

Every system ranks turns. Session granularity ranks a session by its best turn (max-pooling;
LongMemEval's turn→session conversion), for every system; gold = `answer_session_ids`.
(LongMemEval's own script counts an answer session as gold only if one of its *user* turns has
`has_answer`; that leaves single-session-assistant questions without gold. We keep them, with the
answer session as gold.) Turn granularity: gold = user turns with `has_answer`; questions with
none (single-session-assistant) are skipped. ndcg_any uses LongMemEval's DCG (the first two
ranks undiscounted) and its ideal (all gold ranked first).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import InputError
from dcpm_cli.models import RawInput

if TYPE_CHECKING:
    import numpy as np

    from dcpm_cli.config import Settings
    from dcpm_cli.embed import Embedder

KS = (1, 3, 5, 10)
SYSTEMS = ("dcpm", "bm25", "dense", "rrf")
RRF_K = 60  # reciprocal-rank fusion's constant (Cormack, Clarke & Büttcher, SIGIR 2009)
METRICS = ("recall_any", "recall_all", "ndcg_any")
TYPES = {
    "single-session-user": "ss-user",
    "single-session-assistant": "ss-asst",
    "single-session-preference": "ss-pref",
    "multi-session": "multi",
    "temporal-reasoning": "temporal",
    "knowledge-update": "k-update",
}
OUT_DEPTH = 50  # ranked ids kept per system in --out


# -- the data -------------------------------------------------------------------------------


@dataclass
class Turn:
    key: str  # LongMemEval's turn id: <session id>_<1-based index among all the session's turns>
    session: str
    text: str
    said_at: datetime
    has_answer: bool


@dataclass
class Question:
    id: str
    type: str
    text: str
    asked_at: datetime
    sessions: list[str]  # haystack order
    turns: list[Turn]  # user turns only
    gold_sessions: list[str]
    replies: list[Turn] = field(default_factory=list)  # the assistant's turns

    @property
    def abstention(self) -> bool:
        return self.id.endswith("_abs")

    @property
    def gold_turns(self) -> list[str]:
        return [t.key for t in self.turns if t.has_answer]


def load(path: Path) -> list[dict[str, Any]]:
    """The records of a LongMemEval file (.json or .json.gz)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open() as f:
            data = json.load(f)
    except FileNotFoundError as e:
        raise InputError(f"no such file: {path}") from e
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {path}: {e}", "give a LongMemEval .json or .json.gz file") from e
    if not isinstance(data, list) or not all(isinstance(r, dict) and "question_id" in r for r in data):
        raise InputError(f"{path} is not a LongMemEval file", "expected a JSON list of question records")
    return data


def parse_date(value: str) -> datetime:
    """LongMemEval's '2023/05/20 (Sat) 02:21' as an aware UTC datetime."""
    m = re.match(r"\s*(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s*(\d{1,2}):(\d{2})", value)
    if not m:
        raise InputError(f"cannot read LongMemEval date {value!r}")
    y, mo, d, h, mi = (int(x) for x in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


def parse_question(rec: dict[str, Any]) -> Question:
    turns: dict[str, list[Turn]] = {"user": [], "assistant": []}
    ids = rec["haystack_session_ids"]
    for sid, date, session in zip(ids, rec["haystack_dates"], rec["haystack_sessions"], strict=True):
        start = parse_date(date)
        for i, t in enumerate(session):
            if t["role"] in turns and t["content"].strip():
                # A turn a second after the one before: order within a session is kept.
                when = start + timedelta(seconds=i)
                turn = Turn(f"{sid}_{i + 1}", sid, t["content"], when, bool(t.get("has_answer")))
                turns[t["role"]].append(turn)
    gold = [s for s in rec["answer_session_ids"] if s in set(ids)]
    return Question(
        rec["question_id"], rec["question_type"], rec["question"], parse_date(rec["question_date"]),
        list(ids), turns["user"], gold, turns["assistant"],
    )  # fmt: skip


# -- metrics (LongMemEval's definitions) ----------------------------------------------------


def recall_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 if any gold id is in the top k."""
    top = set(ranked[:k])
    return float(any(g in top for g in gold))


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 if every gold id is in the top k."""
    top = set(ranked[:k])
    return float(all(g in top for g in gold))


def _dcg(relevances: Sequence[float]) -> float:
    # LongMemEval's form: rel_1 + Σ_{i≥2} rel_i / log2(i), so ranks 1 and 2 are undiscounted.
    return sum(r if i == 0 else r / math.log2(i + 1) for i, r in enumerate(relevances))


def ndcg_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """DCG of the top k (binary relevance) over that of the ideal ranking (all gold first)."""
    gold = set(gold)
    ideal = _dcg([1.0] * min(len(gold), k))
    if ideal == 0:
        return 0.0
    return _dcg([1.0 if r in gold else 0.0 for r in ranked[:k]]) / ideal


METRIC_FNS: dict[str, Callable[[Sequence[str], Iterable[str], int], float]] = {
    "recall_any": recall_any,
    "recall_all": recall_all,
    "ndcg_any": ndcg_any,
}


def sessions_from_turns(
    turn_keys: Iterable[str], session_of: dict[str, str], all_sessions: list[str]
) -> list[str]:
    """Sessions ranked by their best turn; sessions no turn reached follow in haystack order."""
    out = list(dict.fromkeys(session_of[t] for t in turn_keys))
    seen = set(out)
    return out + [s for s in all_sessions if s not in seen]


def score(ranked: Sequence[str], gold: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
    return {f"{m}@{k}": fn(ranked, gold, k) for m, fn in METRIC_FNS.items() for k in ks}


# -- the baselines --------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class BM25:
    """Okapi BM25 with Lucene's idf, over a fixed list of documents."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(tokens(d)) for d in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avgdl = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        self.df: Counter[str] = Counter(t for tf in self.tfs for t in tf)

    def scores(self, query: str) -> list[float]:
        n = len(self.tfs)
        out = [0.0] * n
        for term in tokens(query):
            df = self.df.get(term)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, tf in enumerate(self.tfs):
                f = tf.get(term)
                if f:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / (self.avgdl or 1.0))
                    out[i] += idf * f * (self.k1 + 1) / (f + norm)
        return out


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Ids by Σ 1/(k + rank) over the rankings (rank from 1); ties keep the first ranking's order."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            fused[key] = fused.get(key, 0.0) + 1 / (k + rank)
    return sorted(fused, key=lambda x: -fused[x])


def _argsort_desc(values: Sequence[float]) -> list[int]:
    return sorted(range(len(values)), key=lambda i: (-values[i], i))


class MemoEmbedder:
    """An embedder that embeds each distinct text once (dcpm and the dense baseline share it)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dim = inner.model_id, inner.dim
        self._memo: dict[str, np.ndarray] = {}
        self.seconds = 0.0  # time spent in the inner embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            t0 = time.perf_counter()
            for text, vec in zip(todo, self.inner.embed(todo), strict=True):
                self._memo[text] = vec
            self.seconds += time.perf_counter() - t0
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])

    def forget(self) -> None:
        self._memo.clear()


# -- one question ---------------------------------------------------------------------------


@dataclass
class QuestionResult:
    id: str
    type: str
    gold: list[str]
    ranked: dict[str, list[str]]  # system → ids (sessions or turns), best first
    metrics: dict[str, dict[str, float]]  # system → metric@k → value
    seconds: dict[str, float]  # ingest / embed / per-system query time


def raws_of(q: Question, replies: bool = False) -> list[RawInput]:
    """The haystack's user turns as raw inputs, one session per haystack session; with
    `replies`, the assistant's turns after them, as a chat import stores them."""
    return [
        RawInput(text=t.text, role=role, session=t.session, source="longmemeval", said_at=t.said_at)
        for role, turns in (("user", q.turns), ("assistant", q.replies if replies else []))
        for t in turns
    ]


def run_question(
    q: Question,
    embedder: MemoEmbedder,
    settings: Settings,
    workdir: Path,
    granularity: str,
    ks: Sequence[int],
    replies: bool = False,
) -> QuestionResult:
    from dcpm_cli.read.recall import recall
    from dcpm_cli.store import Store
    from dcpm_cli.write.pipeline import Writer

    seconds: dict[str, float] = {}
    raws = raws_of(q, replies)
    stored = [*q.turns, *(q.replies if replies else [])]
    turn_of = {r.id: t.key for r, t in zip(raws, stored, strict=True)}
    session_of = {t.key: t.session for t in stored}

    # dcpm: the writer and the read path users run, on a store of this haystack alone.
    embed_before = embedder.seconds
    t0 = time.perf_counter()
    store = Store(str(workdir / q.id), embedder)
    Writer(store, embedder, None, settings).add(raws, extract=False)
    seconds["ingest"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    # Not as of the question's date: LongMemEval's dates are day-accurate only (43 of the 500
    # questions have evidence sessions stamped later on the day they are asked). But asked then:
    # "last Friday" in the question is read against the question's date.
    result = recall(store, embedder, q.text, k=len(q.turns), now=q.asked_at)
    seconds["dcpm"] = time.perf_counter() - t0
    turn_rank = {"dcpm": [turn_of[h.id] for h in result.hits if h.id in turn_of]}
    del store

    texts = [t.text for t in q.turns]
    t0 = time.perf_counter()
    bm25 = BM25(texts).scores(q.text)
    turn_rank["bm25"] = [q.turns[i].key for i in _argsort_desc(bm25)]
    seconds["bm25"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    sims = (embedder.embed(texts) @ embedder.embed([q.text])[0]).tolist()
    turn_rank["dense"] = [q.turns[i].key for i in _argsort_desc(sims)]
    seconds["dense"] = time.perf_counter() - t0
    turn_rank["rrf"] = rrf([turn_rank["bm25"], turn_rank["dense"]])
    seconds["embed"] = embedder.seconds - embed_before

    if granularity == "turn":
        gold, ranked = q.gold_turns, turn_rank
    else:
        gold = q.gold_sessions
        ranked = {s: sessions_from_turns(r, session_of, q.sessions) for s, r in turn_rank.items()}
    metrics = {s: score(r, gold, ks) for s, r in ranked.items()} if gold else {}
    return QuestionResult(q.id, q.type, gold, ranked, metrics, seconds)


# -- the whole file -------------------------------------------------------------------------


@dataclass
class BenchResult:
    file: str
    embedder: str
    granularity: str
    ks: list[int]
    replies: bool = False
    questions: list[QuestionResult] = field(default_factory=list)
    skipped_abstention: int = 0
    skipped_no_gold: int = 0
    wall_seconds: float = 0.0

    def scored(self) -> list[QuestionResult]:
        return [r for r in self.questions if r.metrics]

    def mean(self, system: str, metric: str, qtype: str | None = None) -> float | None:
        vals = [r.metrics[system][metric] for r in self.scored() if qtype is None or r.type == qtype]
        return sum(vals) / len(vals) if vals else None


def run(
    path: Path | Sequence[Path],
    embedder: Embedder,
    settings: Settings,
    *,
    limit: int | None = None,
    granularity: str = "session",
    ks: Sequence[int] = KS,
    out: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    replies: bool = False,
) -> BenchResult:
    """Run the protocol over `path` (or several files, pooled: the halves of a built set, the
    rounds of fresh questions); write each question's rankings to `out` as JSONL. With
    `replies`, dcpm's stores hold the assistant's turns too (the baselines keep the protocol's
    user turns)."""
    if granularity not in ("session", "turn"):
        raise InputError(f"unknown granularity {granularity!r}", "use session or turn")
    t_start = time.perf_counter()
    paths = [Path(path)] if isinstance(path, str | Path) else list(path)
    records = [rec for p in paths for rec in load(p)]
    seen: set[str] = set()
    for rec in records:
        if (qid := str(rec["question_id"])) in seen:  # (`load` checked every record has one)
            raise InputError(f"question {qid!r} is given twice", "give each question once, across the files")
        seen.add(qid)
    named = ", ".join(map(str, paths))
    result = BenchResult(named, embedder.model_id, granularity, list(ks), replies=replies)
    questions = []
    for rec in records:
        if str(rec["question_id"]).endswith("_abs"):
            result.skipped_abstention += 1
        else:
            questions.append(rec)
    questions = questions[:limit] if limit else questions
    memo = MemoEmbedder(embedder)
    with haystacks(out) as (workdir, write):
        for n, rec in enumerate(questions, 1):
            q = parse_question(rec)
            r = run_question(q, memo, settings, workdir, granularity, ks, replies)
            memo.forget()  # haystacks are independent; keep memory flat
            shutil.rmtree(workdir / q.id, ignore_errors=True)
            if not r.metrics:
                result.skipped_no_gold += 1
            result.questions.append(r)
            write(
                {
                    "question_id": r.id,
                    "question_type": r.type,
                    "granularity": granularity,
                    "assistant_turns": replies,
                    "gold": r.gold,
                    **{s: r.ranked[s][:OUT_DEPTH] for s in SYSTEMS},
                }
            )
            if progress:
                progress(n, len(questions))
    result.wall_seconds = time.perf_counter() - t_start
    return result


@contextlib.contextmanager
def haystacks(out: Path | None) -> Iterator[tuple[Path, Callable[[dict[str, Any]], None]]]:
    """A temp dir for the questions' stores (removed at the end, whatever happens) and a writer
    of one JSON line per question to `out`, flushed at once so a stopped run keeps its work."""
    workdir = Path(tempfile.mkdtemp(prefix="dcpm-longmemeval-"))
    sink = out.open("w", encoding="utf-8") if out else None

    def write(line: dict[str, Any]) -> None:
        if sink:
            sink.write(json.dumps(line) + "\n")
            sink.flush()

    try:
        yield workdir, write
    finally:
        if sink:
            sink.close()
        shutil.rmtree(workdir, ignore_errors=True)


# -- the printed table ----------------------------------------------------------------------


def report(result: BenchResult) -> str:
    """Rows system × metric@k; columns overall and each question type; then timing."""
    scored = result.scored()
    types = [t for t in TYPES if any(r.type == t for r in scored)]
    types += sorted({r.type for r in scored} - set(types))
    cols = [None, *types]
    heads = ["overall", *(TYPES.get(t, t) for t in types)]
    counts = [len(scored), *(sum(r.type == t for r in scored) for t in types)]
    lines = [
        f"LongMemEval retrieval — {result.file}",
        f"granularity {result.granularity}, embedder {result.embedder}, {len(scored)} questions scored "
        f"({result.skipped_abstention} abstention skipped"
        + (f", {result.skipped_no_gold} without gold {result.granularity}s" if result.skipped_no_gold else "")
        + ")"
        + (", dcpm's stores hold the assistant's turns too" if result.replies else ""),
        "",
    ]
    width = 9
    lines.append(f"{'system':<7}{'metric':<15}" + "".join(f"{h:>{width}}" for h in heads))
    lines.append(f"{'':<22}" + "".join(f"{'n=' + str(c):>{width}}" for c in counts))
    for system in SYSTEMS:
        lines.append("")
        for metric in METRICS:
            for k in result.ks:
                name = f"{metric}@{k}"
                cells = []
                for t in cols:
                    v = result.mean(system, name, t)
                    cells.append(f"{v:>{width}.3f}" if v is not None else f"{'–':>{width}}")
                lines.append(f"{system:<7}{name:<15}" + "".join(cells))
    lines += ["", _timing(result)]
    return "\n".join(lines)


def _timing(result: BenchResult) -> str:
    qs = result.questions
    if not qs:
        return "no questions run"

    def total(key: str) -> float:
        return sum(r.seconds.get(key, 0.0) for r in qs)

    def per_q_ms(key: str) -> str:
        return f"{1000 * total(key) / len(qs):.0f} ms"

    return "\n".join(
        [
            f"timing ({len(qs)} haystacks, wall {result.wall_seconds:.0f} s):",
            f"  dcpm ingest (Writer.add, embedding included)  {total('ingest'):.0f} s total, "
            f"of which embedding {total('embed'):.0f} s",
            f"  per query: dcpm recall {per_q_ms('dcpm')}, bm25 {per_q_ms('bm25')} (index included), "
            f"dense {per_q_ms('dense')} (vectors shared with dcpm)",
        ]
    )
