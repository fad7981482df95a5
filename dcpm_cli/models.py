"""The nouns of dcpm, as plain dataclasses: what the core returns and the CLI renders."""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any

from dcpm_cli.dates import wall_clock_in


# The one vocabulary: every flag, setting and check that names a kind or a mode uses these.
class ItemKind(StrEnum):
    """What System 1 extracts."""

    fact = "fact"
    identity = "identity"
    summary = "summary"


class NodeKind(StrEnum):
    """What System 2 builds."""

    schema = "schema"
    intention = "intention"
    core_schema = "core_schema"


class Mode(StrEnum):
    """The dream modes (the paper's ablation rows of System 2)."""

    full = "full"
    no_collision = "no-collision"
    lite = "lite"


# The benchmark's ablation rows: the dream modes, and the one without revision chains.
Ablation = StrEnum(  # type: ignore[misc]  # built from Mode: mypy cannot list its members
    "Ablation", [(m.name, m.value) for m in Mode] + [("no_supersedes", "no-supersedes")]
)

ITEM_KINDS: tuple[str, ...] = tuple(ItemKind)
NODE_KINDS: tuple[str, ...] = tuple(NodeKind)
RAW = "raw"  # recall's name for a raw input among its hits

# Raw input extraction status.
PENDING, DONE, FAILED, CONTEXT = "pending", "done", "failed", "context"
# Extracted, but nothing memorable came out: the input itself stays searchable as memory.
NO_ITEMS = "no_items"
# The event that records one pairwise judgement (#18): the new item, the candidate it was
# compared with, the relation and the model's reason; a pair so recorded is never asked again.
JUDGED = "JUDGED"
# The events that change an arc: a link (the writer's, a dream's, the user's) and the user's cut.
SUPERSEDE, UNLINK = "SUPERSEDE", "UNLINK"
CHAIN_OPS = (SUPERSEDE, UNLINK)
# A newer version of the same daily note was stored: kept (`dcpm show`, export), never
# recalled, and neither are the facts that came from it alone.
REPLACED = "replaced"
RAW_STATUSES = (PENDING, DONE, FAILED, CONTEXT, NO_ITEMS, REPLACED)


def utcnow() -> datetime:
    return datetime.now(UTC)


def short_hash(*parts: str, n: int = 12) -> str:
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return h[:n]


def normalise(text: str) -> str:
    """Case, whitespace and trailing punctuation folded: what counts as the 'same' text."""
    return re.sub(r"\s+", " ", text).strip().strip(".!;,").casefold()


# A turn of a conversation between people is stored as "Name: what they said": the speaker is
# part of the text every search indexes (no column of its own, so no store format change), and
# the read path reads the name back to prefer a speaker the question names.
_SPEAKER = re.compile(r"^([^\W\d_][\w'’.-]*(?: [\w'’.-]+){0,5}): ")
# Lower-case words a name may hold between its capitalised ones ("Mary Ann de la Cruz").
_PARTICLES = frozenset(
    {"de", "la", "le", "da", "di", "du", "del", "della", "van", "von", "der", "den", "ter"}
    | {"bin", "ibn", "al", "el", "y", "dos", "das"}
)
_CASELESS_WORD = 6  # a name in a script without case (李雷, タナカ) is short; a sentence is not
# Transcripts number the people they do not name ("Speaker 2"); "Step 2:" or "Day 5:" is no one.
_NUMBERED = frozenset(
    {"Speaker", "User", "Person", "Participant", "Interviewer", "Interviewee", "Guest", "Caller"}
    | {"Agent", "Customer", "Host"}
)


def _name_word(word: str) -> bool:
    """A word of a name: it starts with a capital letter, or is a short word of a script without
    case (Chinese, Japanese, Korean, Arabic...)."""
    first = word[0]
    if first.isupper():
        return True
    return first.isalpha() and not first.islower() and len(word) <= _CASELESS_WORD


def spoken_by(name: str, text: str) -> str:
    """A turn's text as stored: its speaker's name first."""
    return f"{name}: {text}"


def speaker_of(text: str) -> str:
    """The name a turn's text starts with ("Maya: …" → "Maya", "Élodie Roux: …", "李雷: …",
    "Speaker 2: …", "Mary Ann de la Cruz: …"), or "": one to three name words, lower-case
    particles between them, a number last."""
    m = _SPEAKER.match(text)
    if not m:
        return ""
    words = m.group(1).split(" ")
    if words[-1].isdigit():
        return m.group(1) if len(words) == 2 and words[0] in _NUMBERED else ""
    named = [w for w in words if w not in _PARTICLES]
    if not 1 <= len(named) <= 3 or words[0] in _PARTICLES or words[-1] in _PARTICLES:
        return ""
    return m.group(1) if all(_name_word(w) for w in named) else ""


def moment(said_at: datetime) -> datetime:
    """The time a log gave a turn, to the millisecond: without the microseconds that keep the
    order of turns logged at one time (`ingest.formats.parse_jsonl`), which a log cut inside
    that time (`tail`) numbers from its cut."""
    return said_at.replace(microsecond=said_at.microsecond // 1000 * 1000)


def place(said_at: datetime) -> int:
    """A turn's place among the turns logged at its `moment` (the microseconds that keep their
    order)."""
    return said_at.microsecond % 1000


@dataclass
class RawInput:
    """One input as the user gave it; immutable once stored (only its status moves)."""

    text: str
    role: str = "user"
    session: str = ""
    source: str = "cli"
    said_at: datetime = field(default_factory=utcnow)
    id: str = ""
    created_at: datetime = field(default_factory=utcnow)
    status: str = PENDING
    error: str = ""
    attempts: int = 0
    content_hash: str = ""
    position: str = ""  # where in its source an input without a time of its own stood
    # said_at was written without an offset (a day, a time of day): a time of the user's zone,
    # read as UTC until it is stored, so that its identity never depends on the zone setting.
    wall_clock: bool = False

    def __post_init__(self) -> None:
        if not self.content_hash:
            # Same text, role, session and time (or place in its log) = the same input:
            # adding it twice changes nothing.
            when = self.position or self.said_at.isoformat()
            self.content_hash = short_hash(self.text, self.role, self.session, when, n=64)
        if not self.id:
            self.id = "r_" + self.content_hash[:12]

    @property
    def said_key(self) -> str:
        """Its words, speaker and moment (`moment`), wherever it came from (a session, a file, a
        pipe), and its place among the turns of that moment: what a forget keeps besides its id,
        so the same turn piped again in another session, or by a `tail` cut inside its minute
        (`Writer._cut_and_forgotten`), stays forgotten. "digest+place"; a digest, as the id is:
        no text."""
        words = short_hash(self.text, self.role, moment(self.said_at).astimezone(UTC).isoformat(), n=16)
        return f"{words}+{place(self.said_at)}"

    @property
    def said_key_before(self) -> str:
        """`said_key` as the forgets of the dcpm before places were kept wrote it (its words,
        speaker and exact time): what they forgot stays forgotten."""
        return short_hash(self.text, self.role, self.said_at.astimezone(UTC).isoformat(), n=16)

    def in_zone(self, zone: tzinfo) -> RawInput:
        """This input as stored for a user in `zone`: a wall-clock time is that zone's (noon of
        a named day is noon there); its identity stays what it was read as UTC, so adding a
        file again after the `timezone` setting changed still changes nothing."""
        if not self.wall_clock:
            return self
        return replace(self, said_at=wall_clock_in(self.said_at, zone), wall_clock=False)


@dataclass
class Passage:
    """Neighbouring user inputs of one session, searched as one text: the read path's
    context-level key. Derived from raw inputs without an LLM, and rebuilt as a session grows."""

    id: str
    session: str
    text: str
    raw_ids: list[str]  # in the order they were said
    first_at: datetime
    last_at: datetime


@dataclass
class MemoryItem:
    """A fact, identity item or summary in the flat store, with its revision pointers."""

    id: str
    kind: str
    text: str
    topic: str = ""
    subject: str = "user"
    attribute: str = ""
    salience: float = 0.5
    event_at: datetime = field(default_factory=utcnow)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    raw_ids: list[str] = field(default_factory=list)
    supersedes: str | None = None
    superseded_by: str | None = None

    @property
    def is_current(self) -> bool:
        return self.superseded_by is None

    @property
    def content_hash(self) -> str:
        return short_hash(self.kind, normalise(self.subject), normalise(self.text), n=32)


@dataclass
class Event:
    """One line of the append-only event log: what changed, and the text it had before."""

    op: str  # ADD | SUPERSEDE | UPDATE | DROP_DUPLICATE | REJECTED | JUDGED
    item_id: str
    raw_id: str = ""
    target_id: str = ""
    previous_text: str = ""
    new_text: str = ""
    detail: str = ""
    at: datetime = field(default_factory=utcnow)
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = "e_" + short_hash(self.op, self.item_id, self.target_id, self.raw_id)


@dataclass
class Node:
    """A graph node: a within-domain schema, an intention, or a cross-domain core schema."""

    id: str
    kind: str
    text: str
    domain: str = ""
    behaviour: str = ""
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


@dataclass
class Edge:
    """`evidence` (node → fact id) or a structural edge between two nodes."""

    kind: str
    src: str
    dst: str
    created_at: datetime = field(default_factory=utcnow)
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = "g_" + short_hash(self.kind, self.src, self.dst)


@dataclass
class InputOutcome:
    """What System 1 did with one raw input."""

    raw_id: str
    status: str
    added: list[str] = field(default_factory=list)
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old, new)
    updated: list[str] = field(default_factory=list)
    duplicates: int = 0
    rejected: list[str] = field(default_factory=list)  # LLM decisions refused, with why
    error: str = ""
    new_input: bool = True


@dataclass
class AddReport:
    """Summary of one `dcpm add` or `dcpm process` run."""

    stored: int = 0  # raw inputs newly on disk
    already_stored: int = 0  # identical inputs seen before (idempotent)
    forgotten: int = 0  # inputs the user had forgotten (`dcpm forget`): not stored again
    extracted: int = 0
    pending: int = 0
    failed: int = 0
    added: int = 0
    superseded: int = 0
    updated: int = 0
    duplicates: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_error: str = ""
    repaired: str = ""  # what finishing writes a crash cut short did first
    interrupted: bool = False  # Ctrl-C: what is above was done; the rest stays pending
    raw_ids: list[str] = field(default_factory=list)
    outcomes: list[InputOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files of a notes folder with no date in their name

    def absorb(self, o: InputOutcome) -> None:
        self.outcomes.append(o)
        self.added += len(o.added)
        self.superseded += len(o.superseded)
        self.updated += len(o.updated)
        self.duplicates += o.duplicates

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Hit:
    """One recalled memory: a belief with its whole revision arc, or a not-yet-extracted input."""

    kind: str  # fact | identity | summary | raw
    id: str  # the state shown: the current one, or the one valid at --as-of
    text: str
    when: datetime
    score: float
    matched: list[str] = field(default_factory=list)  # ids the query actually hit
    chain: list[MemoryItem] = field(default_factory=list)  # oldest → newest; empty for raw
    raw_ids: list[str] = field(default_factory=list)
    topic: str = ""
    nodes: list[Node] = field(default_factory=list)  # schemas/intentions with evidence here
    same_as: list[str] = field(default_factory=list)  # other hits saying nearly the same thing
    role: str = ""  # a raw input's speaker: user, or assistant (a reply); "" for a belief
    reply_to: RawInput | None = None  # a reply's: the user's turn it answered, just before it

    @property
    def superseded(self) -> bool:
        """True when the shown state is not the newest (an --as-of view)."""
        return bool(self.chain) and self.chain[-1].id != self.id


@dataclass
class Recall:
    query: str
    hits: list[Hit]
    as_of: datetime | None = None
    nodes: list[Node] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. full-text search failed
    stale_nodes: set[str] = field(default_factory=set)  # every piece of evidence since superseded
    period: Period | None = None  # the time the question asks about, as read
    zone: str = "UTC"  # whose days its times are shown in: the `timezone` setting


@dataclass(frozen=True)
class Period:
    """The time a question asks about ("last weekend"), as the read path read it: [start, end)."""

    phrase: str
    start: datetime
    end: datetime
    told: timedelta = timedelta(0)  # what is said this soon after it counts as told of it
    zone: str = "UTC"  # whose days: the `timezone` setting
    noon: datetime | None = None  # a part of one day: that day's noon (an input dated by day alone)
    # Asked before it: the hits told before it that name one of its days ("booked the ferry for
    # the 8th of July"), a plan for it.
    planned: frozenset[str] = frozenset()
    # Said in the days after it (`told`), the hits whose words say the user did it on one of its
    # days ("went to the rally on Saturday", told on the Monday): told of it, not just said after.
    told_of: frozenset[str] = frozenset()

    def holds(self, when: datetime) -> bool:
        return self.start <= when < self.end or when == self.noon

    def told_after(self, when: datetime) -> bool:
        return self.end <= when < self.end + self.told and when != self.noon

    @property
    def days(self) -> str:
        """The days it covers: "2026-11-28 to 2026-11-29", or one day; a part of a day with
        its hours, in the user's zone: "2026-11-28 18:00 to 2026-11-29 06:00"."""
        start, last = self.start, self.end - timedelta(microseconds=1)  # in the user's zone
        if self.noon is not None:
            end = f"{self.end:%H:%M}" if last.date() == start.date() else f"{self.end:%Y-%m-%d %H:%M}"
            return f"{start:%Y-%m-%d %H:%M} to {end}"
        return f"{start:%Y-%m-%d}" + ("" if last.date() == start.date() else f" to {last:%Y-%m-%d}")


@dataclass
class DreamRun:
    """One `dcpm dream` run, as kept in the store's run log (and returned by `dream()`).

    status: running (or killed while running) | ok | failed (every LLM reply was invalid) |
    budget (a --max-calls/--max-seconds budget stopped it; the rest waits for the next run) |
    llm_unavailable | dry_run | lite."""

    id: str
    started_at: datetime = field(default_factory=utcnow)
    ended_at: datetime | None = None
    status: str = "running"
    mode: str = "full"
    core_schemas: bool = False
    extracted: int = 0  # pending raw inputs extracted first (System 1 catching up)
    facts: int = 0  # facts triaged (not yet evidence of any schema or intention)
    clusters: int = 0
    clusters_done: int = 0
    clusters_skipped: int = 0  # same fact set declined by the model on an earlier night
    clusters_failed: int = 0  # no valid reply after the retries
    nodes_created: int = 0
    evidence_added: int = 0
    edges_added: int = 0
    behaviours: int = 0  # Phase 3 behavioural descriptions written
    collisions: int = 0
    core_created: int = 0
    actions_applied: int = 0
    actions_rejected: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    rejections: list[str] = field(default_factory=list)  # why each rejected action was refused
    declined: list[str] = field(default_factory=list)  # signatures of clusters the model declined
    note: str = ""
    settings: str = ""  # JSON: eps, thresholds, budgets, switches used


@dataclass
class Calibration:
    """Per-embedder System 2 thresholds: DBSCAN radii and the collision test of Phase 3."""

    embedder: str
    eps1: float
    eps2: float
    theta_beh: float
    theta_sem: float
    method: str = "default"  # paper | builtin-set | calibrated (…)
    detail: str = ""
    created_at: datetime = field(default_factory=utcnow)
