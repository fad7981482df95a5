"""System 1 performance: overhead per `add` excluding LLM time, and bulk raw-ingest throughput.

    python -m benchmarks.system1 [--sizes 1000 10000 100000] [--turns 10000]

1. Stores pre-filled with N memory items (plus N/2 raw inputs and N events), then ~40
   `Writer.add([RawInput])` calls through the whole pipeline with a scripted LLM that answers
   instantly (canned extraction of 1–3 items; judgements that give ADD / SUPERSEDE / UPDATE
   aimed at the neighbours the store actually returned). Time spent inside `llm.chat` is
   measured and subtracted: what is left is dcpm's own cost (embedding, neighbour search,
   LanceDB reads and writes, prompts, validation). Each size is timed warm (one Store and
   Writer inside one group of staged writes, as in `dcpm add --file` or an agent's server;
   `--no-group`: each input committed on its own) and per call (a new Store and Writer per add,
   as each `dcpm add TEXT` process makes). On the first size, a longer run then shows how the
   cost moves as small commits pile up.
   Then the goals of #10 for a warm process: p50 ≤ 30 ms at 10k items and ≤ 60 ms at 100k,
   p95 ≤ 2× p50, flat over 1,000 adds (`--sustained 1000`: last block's p50 ÷ the first's).
2. Cold start: `dcpm add --no-extract "text"` in a fresh process against `python -c "import
   lancedb"` in the same run (median of `--cold` runs each; goal ≤ 1.5×).
3. A synthetic chat log (10k turns) ingested raw (`ingest.parse` + `Writer.add(...,
   extract=False)`, the path of `dcpm add --no-extract --file log.jsonl`), against the
   embedder's own throughput on the same texts in the same process; and once through the CLI.

Timings are measured, never asserted. The text is templated but varied; to fill 100k items
quickly, a pool of a few thousand sentences is embedded once and stored items reuse those
vectors with a little noise (renormalised), which keeps the neighbour structure realistic.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dcpm_cli.config import Settings
from dcpm_cli.embed import Embedder, get_embedder
from dcpm_cli.ingest import formats as ingest
from dcpm_cli.ingest.text import read_file
from dcpm_cli.llm import Reply, ScriptedLLM
from dcpm_cli.models import DONE, Event, MemoryItem, RawInput, short_hash
from dcpm_cli.prompts.judge import scripted_reply
from dcpm_cli.store import Store
from dcpm_cli.write.pipeline import Writer

# -- synthetic but varied text ------------------------------------------------------------

_FILL = """
km: 3|4|5|6|7|8|10|12|15|21
n: 2|3|4|5|6|7|8|20|30|45
freq: every morning|twice a week|on weekends|three times a week|most evenings|every other day
freq: once a week|on weekdays|whenever the weather is good
when: before work|after dinner|at lunch|at dawn|on the way home|late at night
sport: yoga|pilates|spinning|climbing|boxing|swimming|tennis|rowing|salsa|kettlebell training
sport: trail running|badminton
place: community centre|gym near the office|park by the river|university sports hall|local club
place: studio downstairs|public pool
reason: the knee injury flared up again|mornings got too busy|the doctor suggested it
reason: it started to feel boring|the old gym closed|they want to sleep better|it is cheaper
reason: a friend recommended it|the new job has longer hours|they moved house
race: half marathon|10k race|sprint triathlon|charity walk|trail ultra
who: a friend from work|their sister Hanna|a running club|their partner|two neighbours
who: an online group|their father
month: January 2024|March 2024|May 2024|July 2024|September 2024|November 2024
month: January 2025|March 2025|May 2025|July 2025|September 2025|November 2025
diet: vegetarian|vegan|pescatarian|low-carb|Mediterranean|gluten-free
food: dairy|refined sugar|red meat|gluten|caffeine after noon|fried food|alcohol on weekdays
food: spicy food
dish: lentil curry|pasta with pesto|a big salad|miso soup|stir-fried tofu|oatmeal with berries
dish: grilled fish|bean chili
drink: espresso|oat-milk latte|decaf|green tea|black coffee|matcha|rooibos|cold brew
part: morning|afternoon|evening
job: data analyst|nurse|software engineer|teacher|product manager|carpenter|UX designer
job: accountant|physiotherapist|translator
company: a logistics startup|the city hospital|a regional bank|a design studio|a large retailer
company: a school in the centre|a public library|an energy company
team: platform|customer support|research|sales|operations|mobile
where: home|the office|a co-working space|cafés|the library
hour: 7:00|7:30|8:00|8:30|9:00|10:00
bed: 22:00|22:30|23:00|23:30|midnight|1:00
supp: vitamin D|magnesium|iron tablets|omega-3|a probiotic
condition: mild asthma|a lactose intolerance|migraines|high blood pressure|lower back pain
city: Porto|Leipzig|Gdańsk|Lyon|Valencia|Tallinn|Bologna|Ghent|Bergen|Graz
home: small flat|shared house|two-room apartment|studio|terraced house
pct: 5|10|15|20|25
goal: a new bike|a trip to Japan|an emergency fund|a deposit on a flat|a sabbatical
sub: streaming|gym|meal-kit|music|news|cloud storage
lang: Spanish|Portuguese|Japanese|German|Italian|Korean
app: a flashcard app|a weekly tutor|podcasts|a textbook|evening classes
instrument: guitar|piano|cello|drums|ukulele|violin
genre: crime|science fiction|history|poetry|biographies|fantasy
plant: tomatoes|basil|chillies|strawberries|succulents
"""

# topic | attribute | kind | subject, then its templates. A later change of the same attribute
# uses the same words, as the extraction prompt asks, so SUPERSEDE has something to match.
_SLOTS = """
fitness | exercise routine | fact | user
  Runs {km} km {freq} {when}
  Goes to {sport} classes {freq} at the {place}
  Stopped {sport} because {reason}
  Trains for a {race} with {who} {freq}
  Switched from {sport} to {sport} in {month} because {reason}
fitness | gym | fact | user
  Lifts weights {freq} at the {place}
  Cancelled the gym membership in {month} because {reason}
  Does a {n}-minute circuit workout {freq} {when}
food | diet | identity | user
  Has eaten a {diet} diet since {month}
  Avoids {food} because {reason}
  Went back to a {diet} diet in {month}
  Is trying a {diet} diet with {who}
food | cooking | fact | user
  Cooks {dish} for dinner {freq}
  Meal-preps {dish} on Sundays for the week
  Learned to make {dish} from {who}
food | coffee habit | fact | user
  Drinks {n} cups of {drink} a day
  Switched to {drink} in the {part} because {reason}
  Only drinks {drink} {when}
work | job | identity | user
  Works as a {job} at {company}
  Started a new job as a {job} at {company} in {month}
  Moved to the {team} team at {company} in {month}
work | work schedule | fact | user
  Works from {where} {freq}
  Starts work at {hour} {freq}
  Stopped working late after {month} because {reason}
sleep | sleep schedule | fact | user
  Goes to bed around {bed} {freq}
  Sleeps about {n} hours a night since {month}
  Stopped using the phone in bed because {reason}
health | supplements | fact | user
  Takes {supp} {freq} on the doctor's advice
  Stopped taking {supp} in {month}
health | condition | identity | user
  Has {condition} and avoids {food}
  Was diagnosed with {condition} in {month}
family | home city | fact | user's sister Hanna
  Lives in {city} and works as a {job}
  Moved to {city} in {month} because {reason}
home | home city | identity | user
  Lives in a {home} in {city}
  Moved to a {home} in {city} in {month}
money | savings | fact | user
  Saves {pct}% of the salary each month for {goal}
  Cancelled the {sub} subscription in {month} to save for {goal}
learning | language study | fact | user
  Studies {lang} for {n} minutes {freq} with {app}
  Gave up {lang} in {month} because {reason}
  Started learning {lang} with {who} in {month}
hobbies | music | fact | user
  Plays {instrument} {freq} with {who}
  Started {instrument} lessons in {month}
hobbies | reading | fact | user
  Reads {genre} books {when} {freq}
  Joined a {genre} book club with {who} in {month}
hobbies | gardening | fact | user
  Grows {plant} on the balcony
  Gave up growing {plant} because {reason}
travel | travel plans | fact | user
  Plans a trip to {city} in {month} with {who}
  Cancelled the trip to {city} because {reason}
"""

_ASSISTANT = """
That sounds like a sensible change.
Consistency usually matters more than intensity.
Have you thought about what made the old routine hard to keep?
A gradual transition tends to stick better than a sudden one.
It might help to write down how you feel after a couple of weeks.
Here are a few options you could try, from the easiest to the most ambitious.
First, pick a fixed time of day so it becomes a habit rather than a decision.
Second, keep the first sessions short enough that skipping them feels silly.
Third, tell someone about the plan; a little accountability goes a long way.
If money is the constraint, many cities have free community programmes.
Sleep and food affect each other more than most people expect.
Let me know how it goes, and we can adjust the plan.
Would you like a simple weekly schedule to start with?
That is a big move; it is normal for the first months to feel unsettled.
"""

OPENERS = ["", "Quick update: ", "So, ", "Honestly, ", "By the way, ", "Something changed: ", "Small thing: "]


class Slot(NamedTuple):
    topic: str
    attribute: str
    kind: str
    subject: str
    templates: list[str]


def _parse_fill(text: str) -> dict[str, list[str]]:
    fill: dict[str, list[str]] = defaultdict(list)
    for line in filter(str.strip, text.splitlines()):
        key, _, values = line.partition(": ")
        fill[key].extend(values.split("|"))
    return dict(fill)


def _parse_slots(text: str) -> list[Slot]:
    slots: list[Slot] = []
    for line in filter(str.strip, text.splitlines()):
        if line.startswith(" "):
            slots[-1].templates.append(line.strip())
        else:
            topic, attribute, kind, subject = (x.strip() for x in line.split("|"))
            slots.append(Slot(topic, attribute, kind, subject, []))
    return slots


FILL = _parse_fill(_FILL)
SLOTS = _parse_slots(_SLOTS)
ASSISTANT = [x for x in _ASSISTANT.splitlines() if x]


def sentence(rng: random.Random, slot: int) -> str:
    out, rest = [], rng.choice(SLOTS[slot].templates)
    while "{" in rest:
        head, _, tail = rest.partition("{")
        key, _, rest = tail.partition("}")
        out += [head, rng.choice(FILL[key])]
    return "".join([*out, rest])


def distinct_sentences(rng: random.Random, n: int) -> list[tuple[int, str]]:
    seen: set[str] = set()
    out: list[tuple[int, str]] = []
    while len(out) < n:
        slot = rng.randrange(len(SLOTS))
        s = sentence(rng, slot)
        if s not in seen:
            seen.add(s)
            out.append((slot, s))
    return out


# -- timing wrappers (edge fakes; the real Writer and Store run unchanged) ------------------


class Clock:
    """Wall and CPU time. CPU time (all threads of this process, or of finished children) is
    the steadier figure on a shared machine."""

    def __init__(self, children: bool = False) -> None:
        self.children = children
        self.t0, self.c0 = time.perf_counter(), self._cpu()

    def _cpu(self) -> float:
        if self.children:
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            return ru.ru_utime + ru.ru_stime
        return time.process_time()

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self.t0, self._cpu() - self.c0


class TimedEmbedder:
    """Delegates to a real embedder and adds up the time spent in it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t0


# Store methods that are plumbing, not verbs: never timed.
_PLUMBING = {"table", "has_table", "create_table_if_missing", "meta", "disk_bytes"}
_PLUMBING |= {"applied_migrations", "record_migration", "dream_lock", "write", "drop_table"}
_WRITE_PREFIXES = ("add_", "set_", "replace_", "log_", "note_", "index_", "upsert", "link", "delete")
_WRITE_PREFIXES += ("remove", "maintain", "repair", "ensure_", "save_")


def _verbs() -> dict[str, tuple[str, ...]]:
    """Every public Store verb by group, found by name, so verbs added later are timed too."""
    names = sorted(
        n for n in dir(Store)
        if not n.startswith("_") and n not in _PLUMBING and not n.endswith("_from_row")
        and callable(getattr(Store, n)) and not isinstance(getattr(Store, n), type)
    )  # fmt: skip
    search = tuple(n for n in names if "nearest" in n or n.endswith("_search"))
    writes = tuple(n for n in names if n.startswith(_WRITE_PREFIXES) and n not in search)
    reads = tuple(n for n in names if n not in search and n not in writes)
    return {"search": search, "reads": reads, "writes": writes}


VERBS = _verbs()


class TimedStore(Store):
    """The real Store; its verbs also add up their wall time (the outermost call only)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._depth = 0
        super().__init__(*args, **kwargs)


def _timed(name: str) -> Callable[..., Any]:
    inner = getattr(Store, name)

    def verb(self: TimedStore, *args: Any, **kwargs: Any) -> Any:
        if self._depth:  # e.g. chain() calls get_items(): count the outer call only
            return inner(self, *args, **kwargs)
        self._depth += 1
        t0 = time.perf_counter()
        try:
            return inner(self, *args, **kwargs)
        finally:
            self._depth -= 1
            self.seconds[name] += time.perf_counter() - t0
            self.calls[name] += 1

    verb.__name__ = name
    return verb


for _name in (v for group in VERBS.values() for v in group):
    setattr(TimedStore, _name, _timed(_name))


@dataclass
class BenchLLM(ScriptedLLM):
    """ScriptedLLM that times its own calls and answers each pairwise judgement from `plan`
    (which op the LATER statement's item wants: the first candidate asked gets it)."""

    plan: dict[str, str] = field(default_factory=dict)  # item text → ADD | SUPERSEDE | UPDATE
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def chat(self, messages: list[dict[str, str]], *, schema: dict[str, Any] | None = None) -> Reply:
        clock = Clock()
        try:
            if schema is not None and schema.get("title") == "Judgement":
                self.enqueue(self._judge(messages[-1]["content"]))
            return super().chat(messages, schema=schema)
        finally:
            wall, cpu = clock.stop()
            self.seconds += wall
            self.cpu_seconds += cpu

    def _judge(self, prompt: str) -> dict[str, Any]:
        later = prompt.split("\nLATER (said ", 1)[1].split("): ", 1)[1]
        op = self.plan.get(later, "ADD")
        return scripted_reply({"SUPERSEDE": "replaces", "UPDATE": "adds_detail"}.get(op, "unrelated"))


# -- part 1: overhead per add -------------------------------------------------------------


@dataclass
class Pool:
    vectors: np.ndarray
    by_slot: dict[int, list[int]]


def make_pool(embedder: Embedder, size: int, rng: random.Random) -> Pool:
    pairs = distinct_sentences(rng, size)
    by_slot: dict[int, list[int]] = defaultdict(list)
    for i, (slot, _) in enumerate(pairs):
        by_slot[slot].append(i)
    return Pool(embedder.embed([t for _, t in pairs]), dict(by_slot))


def _noisy(rng: np.random.Generator, base: np.ndarray, sigma: float = 0.35) -> np.ndarray:
    v = base + rng.normal(0.0, sigma / np.sqrt(base.shape[-1]), size=base.shape).astype(np.float32)
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def fill_store(store: Store, pool: Pool, n_items: int, seed: int, chunk: int = 5000) -> None:
    """N items over ~2 years (a fifth of them superseded, in chains), N/2 raw inputs, N events,
    written in bulk through the store's own verbs."""
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    start, span = datetime(2024, 1, 1, tzinfo=UTC), timedelta(days=700)
    n_raw = max(1, n_items // 2)
    raws: list[RawInput] = []
    raw_rows: list[int] = []
    items: list[MemoryItem] = []
    rows: list[int] = []
    events: list[Event] = []
    heads: dict[int, MemoryItem] = {}
    for j in range(n_items):
        slot = rng.randrange(len(SLOTS))
        s = SLOTS[slot]
        when = start + span * (j / n_items)
        if j * n_raw // n_items == len(raws):
            r = len(raws)
            raws.append(RawInput(text="", session=f"chat-{r // 40:05d}", source="seed", said_at=when,
                                 created_at=when, status=DONE, position=f"seed#{r}"))  # fmt: skip
            raw_rows.append(j)
        raw = raws[-1]
        item = MemoryItem(
            id="m_" + short_hash("seed", str(j)), kind=s.kind, text=sentence(rng, slot), topic=s.topic,
            subject=s.subject, attribute=s.attribute, salience=round(rng.uniform(0.2, 0.9), 2),
            event_at=when, created_at=when, updated_at=when, raw_ids=[raw.id],
        )  # fmt: skip
        raw.text = f"{raw.text} {item.text}.".strip()
        head = heads.get(slot)
        if head is not None and rng.random() < 0.2:
            head.superseded_by, item.supersedes = item.id, head.id
            events.append(Event("SUPERSEDE", item.id, raw.id, head.id, "", item.text, at=when))
        else:
            events.append(Event("ADD", item.id, raw.id, "", "", item.text, at=when))
        heads[slot] = item
        items.append(item)
        rows.append(rng.choice(pool.by_slot.get(slot) or range(len(pool.vectors))))
    vectors = _noisy(nrng, pool.vectors[rows])
    with store.write():
        for a in range(0, n_items, chunk):
            store.add_items(items[a : a + chunk], vectors[a : a + chunk])
            store.log_events(events[a : a + chunk])
        for a in range(0, n_raw, chunk):
            store.add_raw(raws[a : a + chunk], vectors[raw_rows[a : a + chunk]])


@dataclass
class Script:
    """The timed inputs and what the scripted LLM extracts from each."""

    raws: list[RawInput]
    extractions: list[dict[str, Any]]
    plan: dict[str, str]


def make_script(n: int, seed: int) -> Script:
    rng = random.Random(seed)
    ops = ["SUPERSEDE", "ADD", "UPDATE", "SUPERSEDE", "ADD"]
    t0 = datetime(2026, 1, 5, 8, tzinfo=UTC)
    script = Script([], [], {})
    for i in range(n):
        when = t0 + timedelta(hours=7 * i)
        items = []
        if i % 10 == 9:  # a diffuse input: one summary item, so no judgement
            text = f"Long week {i}. Tired, a bit restless, nothing in particular, just a lot of small things."
            items.append({"kind": "summary", "text": f"Felt tired and restless in week {i}", "topic": "mood",
                          "subject": "user", "attribute": "", "salience": 0.3})  # fmt: skip
        else:
            for _ in range(1 + (i % 3 != 0) + (i % 4 == 1)):  # 1–3 items
                slot = rng.randrange(len(SLOTS))
                s = SLOTS[slot]
                t = f"{sentence(rng, slot)} (as of {when:%B %-d})"
                items.append({"kind": s.kind, "text": t, "topic": s.topic, "subject": s.subject,
                              "attribute": s.attribute, "salience": 0.6})  # fmt: skip
                script.plan[t] = ops[len(script.plan) % len(ops)]
            text = rng.choice(OPENERS) + " ".join(x["text"] + "." for x in items)
        script.raws.append(RawInput(text=text, session="bench", source="bench", said_at=when))
        script.extractions.append({"items": items})
    return script


@dataclass
class Run:
    """Per-add measurements of a sequence of Writer.add calls."""

    wall_ms: list[float] = field(default_factory=list)  # LLM time subtracted
    cpu_ms: list[float] = field(default_factory=list)
    parts_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    verb_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    verb_calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    llm_s: float = 0.0
    ops: dict[str, int] = field(default_factory=lambda: defaultdict(int))


class Bench:
    """A Writer over a TimedStore with a BenchLLM, fed the script's inputs one `add` at a time."""

    def __init__(self, path: Path, embedder: Embedder, script: Script) -> None:
        self.path, self.script, self.next = path, script, 0
        self.emb = TimedEmbedder(embedder)
        self.llm = BenchLLM(name="bench", plan=script.plan)
        self._open()

    def _open(self) -> None:
        self.store = TimedStore(str(self.path), self.emb, create=False)
        self.writer = Writer(self.store, self.emb, self.llm, Settings(store=str(self.path), llm="scripted"))

    def add(self, run: Run | None, *, fresh: bool = False) -> None:
        """One input; `fresh`: a new Store and Writer first, as each `dcpm add` process makes."""
        i, self.next = self.next, self.next + 1
        self.llm.enqueue(self.script.extractions[i])
        llm0, llm_cpu0, emb0 = self.llm.seconds, self.llm.cpu_seconds, self.emb.seconds
        clock = Clock()
        if fresh:
            self._open()
        verbs0, calls0 = dict(self.store.seconds), dict(self.store.calls)
        report = self.writer.add([self.script.raws[i]])
        wall, cpu = clock.stop()
        if report.llm_error or report.failed or self.llm.replies or not report.stored:
            raise RuntimeError(f"bench input {i} did not go through: {report}")
        if run is None:
            return
        llm_s, embed_s = self.llm.seconds - llm0, self.emb.seconds - emb0
        run.llm_s += llm_s
        run.wall_ms.append((wall - llm_s) * 1000)
        run.cpu_ms.append((cpu - (self.llm.cpu_seconds - llm_cpu0)) * 1000)
        run.parts_s["embed"] += embed_s
        run.parts_s["other"] += wall - llm_s - embed_s
        for group, names in VERBS.items():
            for name in names:
                d = self.store.seconds.get(name, 0.0) - verbs0.get(name, 0.0)
                run.parts_s[group] += d
                run.parts_s["other"] -= d
                run.verb_s[name] += d
                run.verb_calls[name] += self.store.calls.get(name, 0) - calls0.get(name, 0)
        run.ops["ADD"] += report.added - report.superseded
        run.ops["SUPERSEDE"] += report.superseded
        run.ops["UPDATE"] += report.updated
        run.ops["DUPLICATE"] += report.duplicates
        run.ops["refused"] += sum(len(o.rejected) for o in report.outcomes)


@dataclass
class SizeResult:
    size: int
    build_s: float
    maintain: str  # what Store.maintain() did after the bulk fill, and how long it took
    open_ms: float
    warm: Run
    per_call: Run
    fragments: str
    sustained: list[tuple[int, float, float, str]] = field(default_factory=list)  # adds, p50 wall, cpu


def bench_size(
    size: int,
    args: argparse.Namespace,
    embedder: Embedder,
    pool: Pool,
    script: Script,
    root: Path,
    sustained: int,
) -> SizeResult:
    path = root / f"store-{size}"
    clock = Clock()
    store = Store(str(path), embedder)
    fill_store(store, pool, size, seed=args.seed)
    build_s = clock.stop()[0]
    maintain = "no Store.maintain()"
    if hasattr(store, "maintain"):  # a real store of this size has had its upkeep
        clock = Clock()
        done = store.maintain()
        maintain = f"maintain() {clock.stop()[0]:.1f} s: " + (
            "; ".join(f"{t} {', '.join(steps)}" for t, steps in done.items()) or "nothing due"
        )
    opens = []
    for _ in range(5):
        clock = Clock()
        Store(str(path), embedder, create=False)
        opens.append(clock.stop()[0] * 1000)

    bench = Bench(path, embedder, script)

    # A warm process groups the derived writes of its inputs (store/staging.py), as the MCP
    # server's worker and `dcpm add --file` do; `--no-group` commits each input on its own.
    def grouped() -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext() if args.no_group else bench.writer.group()

    warm, per_call = Run(), Run()
    with grouped():
        for _ in range(args.warmup):
            bench.add(None)
        for _ in range(args.adds):
            bench.add(warm)
    for _ in range(args.adds):
        bench.add(per_call, fresh=True)
    result = SizeResult(
        size, build_s, maintain, statistics.median(opens), warm, per_call, _fragments(bench.store)
    )
    done = args.warmup + 2 * args.adds
    with grouped():
        while done < sustained:
            r = Run()
            for _ in range(min(max(10, args.adds), sustained - done)):
                bench.add(r)
            done += len(r.wall_ms)
            result.sustained.append((done, _pct(r.wall_ms, 50), _pct(r.cpu_ms, 50), _fragments(bench.store)))
    return result


def _fragments(store: Store) -> str:
    """Fragments/versions of the tables System 1 writes: both grow with every small commit."""
    out = []
    for name in ("raw_inputs", "items", "events"):
        t = store.table(name)
        out.append(f"{name} {t.stats()['fragment_stats']['num_fragments']}f/{t.version}v")
    return ", ".join(out)


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


# -- part 2: bulk raw ingest --------------------------------------------------------------


def make_chat_log(path: Path, turns: int, seed: int) -> None:
    rng = random.Random(seed)
    t = datetime(2025, 3, 1, 9, tzinfo=UTC)
    with path.open("w", encoding="utf-8") as f:
        for i in range(turns):
            t += timedelta(minutes=rng.choice((1, 2, 3, 5, 30, 240)))
            if i % 2 == 0:
                parts = [
                    sentence(rng, rng.randrange(len(SLOTS))) for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))
                ]
                content, role = (
                    rng.choice(OPENERS) + " ".join(f"I {p[0].lower()}{p[1:]}." for p in parts),
                    "user",
                )
            else:
                content, role = " ".join(rng.sample(ASSISTANT, rng.choice((1, 2, 3, 4, 6, 8)))), "assistant"
            f.write(json.dumps({"role": role, "content": content, "timestamp": t.isoformat()}) + "\n")


@dataclass
class IngestResult:
    turns: int
    mean_chars: float
    embed: list[tuple[float, float]]  # (wall, CPU) seconds, before and after the ingest
    ingest: tuple[float, float]
    ingest_embed_s: float
    stored: int
    cli: tuple[float, float] | None
    cli_summary: str

    @property
    def embed_mean(self) -> tuple[float, float]:
        return statistics.fmean(w for w, _ in self.embed), statistics.fmean(c for _, c in self.embed)


def bench_ingest(args: argparse.Namespace, embedder: Embedder, root: Path) -> IngestResult:
    log = root / "chat.jsonl"
    make_chat_log(log, args.turns, args.seed)
    texts = [r.text for r in ingest.parse(log.read_text(encoding="utf-8"), ingest.Format.jsonl)]
    embedder.embed(texts[:64])  # first-call allocations are not throughput

    def embed_alone() -> tuple[float, float]:
        clock = Clock()
        embedder.embed(texts)
        return clock.stop()

    embed = [embed_alone()]
    emb = TimedEmbedder(embedder)
    path = root / "ingest-store"
    writer = Writer(Store(str(path), emb), emb, None, Settings(store=str(path)))
    clock = Clock()
    raws = ingest.parse(read_file(log), ingest.default_format_for(log), session=log.stem, source=log.name)
    report = writer.add(raws, extract=False)
    ingested = clock.stop()
    embed.append(embed_alone())  # before and after: the machine's load drifts

    cli, summary = None, "skipped (--no-cli)"
    if not args.no_cli:
        store = ["--store", str(root / "cli-store"), "--embedder", args.embedder]
        cmd = [sys.executable, "-m", "dcpm_cli", *store, "add", "--no-extract", "--file", str(log)]
        env = {**os.environ, "DCPM_HOME": str(root / "cli-home")}  # no user config, no user data
        clock = Clock(children=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        cli = clock.stop()
        last = (proc.stdout.strip() or proc.stderr.strip()).splitlines()[-1:] or [""]
        summary = last[0] + ("" if proc.returncode == 0 else f" (exit {proc.returncode})")
    return IngestResult(
        turns=len(texts), mean_chars=sum(map(len, texts)) / len(texts), embed=embed, ingest=ingested,
        ingest_embed_s=emb.seconds, stored=report.stored, cli=cli, cli_summary=summary,
    )  # fmt: skip


# -- cold start ---------------------------------------------------------------------------


@dataclass
class ColdResult:
    runs: int
    lancedb: tuple[float, float]  # median (wall, CPU) seconds of `python -c "import lancedb"`
    add: tuple[float, float]  # ... of `dcpm add --no-extract TEXT` on an existing store


def bench_cold(args: argparse.Namespace, root: Path) -> ColdResult:
    """Fresh processes, alternated so that the machine's load drifts over both alike."""
    home = root / "cold-home"
    env = {**os.environ, "DCPM_HOME": str(home)}
    add = [sys.executable, "-m", "dcpm_cli", "--embedder", args.embedder, "add", "--no-extract"]
    subprocess.run([*add, "the store exists before the timed runs"], env=env, check=True, capture_output=True)

    def timed(cmd: list[str]) -> tuple[float, float]:
        clock = Clock(children=True)
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        return clock.stop()

    lancedb, adds = [], []
    for i in range(args.cold):
        lancedb.append(timed([sys.executable, "-c", "import lancedb"]))
        adds.append(timed([*add, f"cold start number {i}: tea, not coffee, after noon"]))

    def median(xs: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(w for w, _ in xs), statistics.median(c for _, c in xs)

    return ColdResult(args.cold, median(lancedb), median(adds))


GOALS_P50_MS = {10_000: 30.0, 100_000: 60.0}  # #10: a warm process, dcpm's own overhead per add


def print_goals(results: list[SizeResult], cold: ColdResult | None) -> None:
    print("\n== Goals (#10): warm overhead per add, steadiness, cold start ==")
    for r in results:
        p50, p95 = _pct(r.warm.wall_ms, 50), _pct(r.warm.wall_ms, 95)
        cpu = _pct(r.warm.cpu_ms, 50)
        goal = GOALS_P50_MS.get(r.size)
        vs = f"{p50 / goal:.2f}× the goal of {goal:.0f} ms" if goal else "no goal at this size"
        print(f"  {r.size:>7} items: p50 {p50:.0f} ms ({vs}); CPU p50 {cpu:.0f} ms; "
              f"p95/p50 {p95 / p50:.2f} (goal ≤ 2)")  # fmt: skip
        if len(r.sustained) >= 2:
            # The median block p50 of the first and of the last three blocks: one block is noisy.
            head, tail = r.sustained[:3], r.sustained[-3:]
            w0, w1 = (statistics.median(b[1] for b in bs) for bs in (head, tail))
            c0, c1 = (statistics.median(b[2] for b in bs) for bs in (head, tail))
            print(f"  {'':>7}        over {r.sustained[-1][0]} adds: p50 {w0:.0f} → {w1:.0f} ms wall, "
                  f"{c0:.0f} → {c1:.0f} ms CPU (last ÷ first {w1 / w0:.2f}, CPU {c1 / max(c0, 1e-9):.2f}; "
                  "flat = 1)")  # fmt: skip
    if cold is not None:
        (lw, lc), (aw, ac) = cold.lancedb, cold.add
        print(f"  cold `dcpm add --no-extract TEXT`: {aw:.2f} s wall, {ac:.2f} s CPU; `python -c \"import "
              f"lancedb\"`: {lw:.2f} s wall, {lc:.2f} s CPU — {aw / lw:.2f}× wall, {ac / lc:.2f}× CPU "
              f"(goal ≤ 1.5×; medians of {cold.runs})")  # fmt: skip


# -- report -------------------------------------------------------------------------------


def print_part1(results: list[SizeResult], adds: int) -> None:
    print(f"\n== System 1 overhead per add, LLM time excluded ({adds} adds per row) ==")
    head = (f"{'items':>7} {'mode':<8} | {'p50':>5} {'p95':>5} {'mean':>5} {'CPU p50':>7} | {'embed':>5} "
            f"{'search':>6} {'reads':>5} {'writes':>6} {'other':>5} | {'llm':>4}")  # fmt: skip
    print(head)
    print("-" * len(head))
    for r in results:
        for mode, run in (("warm", r.warm), ("per call", r.per_call)):
            n = len(run.wall_ms)
            p = {k: v * 1000 / n for k, v in run.parts_s.items()}
            print(f"{r.size:>7} {mode:<8} | {_pct(run.wall_ms, 50):>5.0f} {_pct(run.wall_ms, 95):>5.0f} "
                  f"{statistics.fmean(run.wall_ms):>5.0f} {_pct(run.cpu_ms, 50):>7.0f} | {p['embed']:>5.0f} "
                  f"{p['search']:>6.0f} {p['reads']:>5.0f} {p['writes']:>6.0f} {p['other']:>5.0f} | "
                  f"{run.llm_s * 1000 / n:>4.1f}")  # fmt: skip
    print("ms per add, wall clock with the scripted LLM's time (llm column) subtracted. warm: one Store and")
    print("Writer for all adds (an agent, `dcpm add --file`); per call: a new Store and Writer per add, as")
    print("each `dcpm add TEXT` process makes (interpreter start and model load not included). CPU = process")
    print("CPU time over all threads, steadier on a busy machine. embed…other: mean wall ms per add.")
    for r in results:
        ops = ", ".join(f"{k} {v}" for k, v in r.warm.ops.items())
        print(f"  {r.size:>7}: built in {r.build_s:.1f} s; {r.maintain}; Store() open {r.open_ms:.0f} ms")
        print(f"  {'':>7}  warm ops: {ops}; after both runs: {r.fragments}")

    for mode in ("warm", "per call"):
        runs = [r.warm if mode == "warm" else r.per_call for r in results]
        names = sorted(
            {k for run in runs for k, c in run.verb_calls.items() if c}, key=lambda k: -runs[-1].verb_s[k]
        )
        print(f"\nstore verbs, {mode}: mean wall ms per add (calls per add)")
        print(f"{'':<22}" + "".join(f"{r.size:>16}" for r in results))
        for k in names:
            per = [
                (run.verb_s[k] * 1000 / len(run.wall_ms), run.verb_calls[k] / len(run.wall_ms))
                for run in runs
            ]
            cells = "".join(f"{ms:>9.1f} ({calls:>4.1f})" for ms, calls in per)
            print(f"{k:<22}{cells}")

    for r in results:
        if r.sustained:
            print(f"\nsustained warm adds on the {r.size}-item store, with whatever upkeep Writer.add does:")
            print("  p50 wall / CPU ms per add over each block, then fragments/versions per table")
            for done, wall, cpu, frags in r.sustained:
                print(f"  up to {done:>5} adds: {wall:>5.0f} / {cpu:>4.0f}   {frags}")


def print_part2(r: IngestResult, embedder_id: str) -> None:
    print(f"\n== Bulk raw ingest: {r.turns} turns (mean {r.mean_chars:.0f} chars), embedder {embedder_id} ==")
    print(f"{'':<32}{'wall s':>7}{'turns/s':>9}{'ratio':>7} |{'CPU s':>7}{'/CPU s':>8}{'ratio':>7}")
    base = r.embed_mean

    def row(label: str, t: tuple[float, float]) -> None:
        wall, cpu = t
        print(f"{label:<32}{wall:>7.1f}{r.turns / wall:>9.1f}{base[0] / wall:>7.3f} |"
              f"{cpu:>7.1f}{r.turns / cpu:>8.1f}{base[1] / cpu:>7.3f}")  # fmt: skip

    row("embedder.embed(texts), before", r.embed[0])
    row("ingest.parse + Writer.add", r.ingest)
    row("embedder.embed(texts), after", r.embed[1])
    if r.cli is not None:
        row("dcpm add --no-extract --file", r.cli)
    print("ratio = turns/s ÷ the embedder's texts/s on the same texts (mean of before and after);")
    print("1.0 means ingest is all embedding. CPU = CPU seconds of all threads (of the child, for the CLI).")
    print(f"inside Writer.add, embedding took {r.ingest_embed_s:.1f} s wall; {r.stored} turns stored")
    if r.cli is not None:
        print(f"the CLI run includes interpreter start, imports, model load, store creation: {r.cli_summary}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.system1", description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 100000],
                    help="stored items before the timed adds (default: 1000 10000 100000)")  # fmt: skip
    ap.add_argument("--adds", type=int, default=40, help="timed adds per size (default: 40)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed adds first (default: 3)")
    ap.add_argument("--sustained", type=int, default=300,
                    help="on the first size, go on adding up to this many (0: off; default 300)")  # fmt: skip
    ap.add_argument(
        "--turns", type=int, default=10000, help="chat-log turns to ingest (0: skip; default 10000)"
    )
    ap.add_argument(
        "--pool", type=int, default=2000, help="distinct sentences embedded for filling (default 2000)"
    )
    ap.add_argument("--embedder", default="minilm", help="embedder spec (default: minilm)")
    ap.add_argument("--store-dir", type=Path, default=None,
                    help="where stores go (default: a new temp dir in $TMPDIR, removed after)")  # fmt: skip
    ap.add_argument("--keep", action="store_true", help="keep the temp dir afterwards")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI subprocess run")
    ap.add_argument("--no-group", action="store_true",
                    help="warm adds commit each input on its own (no group commit)")  # fmt: skip
    ap.add_argument(
        "--cold", type=int, default=5, help="cold-start runs of each command (0: skip; default 5)"
    )
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    command = "python -m benchmarks.system1 " + shlex.join(sys.argv[1:] if argv is None else argv)
    root = args.store_dir or Path(tempfile.mkdtemp(prefix="dcpm-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(command)
    print(f"stores under {root}; {os.cpu_count()} CPUs, load average {load}; python {sys.version.split()[0]}")
    clock = Clock()
    embedder = get_embedder(args.embedder)
    print(f"embedder {embedder.model_id} loaded in {clock.stop()[0]:.2f} s")
    try:
        if args.sizes:
            clock = Clock()
            pool = make_pool(embedder, args.pool, random.Random(args.seed))
            print(f"pool of {args.pool} sentences embedded in {clock.stop()[0]:.1f} s", flush=True)
            script = make_script(max(args.warmup + 2 * args.adds, args.sustained), args.seed + 1)
            results = []
            for n, size in enumerate(args.sizes):
                results.append(
                    bench_size(size, args, embedder, pool, script, root, args.sustained if n == 0 else 0)
                )
                r = results[-1]
                warm, per_call = _pct(r.warm.wall_ms, 50), _pct(r.per_call.wall_ms, 50)
                print(f"  {size} items: p50 {warm:.0f} ms warm, {per_call:.0f} ms per call", flush=True)
            print_part1(results, args.adds)
        else:
            results = []
        cold = bench_cold(args, root) if args.cold else None
        if results or cold:
            print_goals(results, cold)
        if args.turns:
            print_part2(bench_ingest(args, embedder, root), embedder.model_id)
    finally:
        if args.store_dir is None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nload average at the end {load}\nreproduce: {command}")


if __name__ == "__main__":
    main()
