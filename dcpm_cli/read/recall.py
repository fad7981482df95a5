"""The read path: vector + BM25 search over memory items, raw inputs not extracted yet and
passages, fused by normalised score; every hit's supersedes chain traversed; graph nodes reached
through evidence edges. Never calls an LLM (and never imports a client).

Scoring, for each candidate (an item, or a raw input not extracted yet):

    own     = α·cos/cos_max + (1 − α)·bm25/bm25_max     over this query's candidates
    context = the same fusion over passages (neighbouring user inputs of one session, see
              store/passages.py): the best passage that holds the candidate's input, on one
              scale with the inputs (cos_max and bm25_max over both)
    score   = own + context

Normalisation by a theoretical minimum (0) and the observed maximum keeps each signal's
strength, where reciprocal-rank fusion keeps only its order: a BM25 list whose best row shares
one filler word with the query ("tips", "suggest") would get the same say as one that matched
a name. Convex combination of scores normalised this way beats RRF in Bruch, Gai & Ingber,
"An Analysis of Fusion Functions for Hybrid Retrieval" (TOIS 2023); α = 0.75 leans on meaning
over shared words, as hybrid search engines do by default. Adding passage-level to turn-level
evidence, equally weighted, is Callan's passage + document combination ("Passage-level evidence
in document retrieval", SIGIR 1994). The maxima normalise, not the list lengths, so asking for
more hits (a larger k) does not rescale the first ones.

One exception to "extracted inputs are not searched": a query holding a rare token (a word of
5+ characters with a digit and a letter in it, or a number of 5+ digits: an order number, a
code) that an input holds word for word, and none of the facts found from it does, finds that
input, ranked above every other hit (score = the best other score + (1 − α) + its own). Extraction paraphrases
and drops such tokens; an exact match is the strongest evidence a query can give.

The question is searched twice: its vector is moved towards its three best candidates' mean and
searched again (pseudo-relevance feedback, Rocchio's): answers worded unlike the question but
like its first answers are found (a count over several conversations, "How many projects have
I been working on…?", finds the third project through the first two). BM25 keeps the
question's words.

The question is read first (read/question.py, rules only): BM25 matches it without the words
that say which end of a history it asks for or how far back ("current", "first", "so far": its
order, read as one; the vector keeps them); the things it names are searched each on their
own and a cue its best hits miss is brought into them; what was said in the time window it
names is lifted (a time counted from an event, "a week after dad's operation", counts from
the day the event's best match was said, which is shown beside what was said then); and hits
saying nearly the same are shown newest first, each naming the others, so a change of mind never
stored as a chain still reads as one (an exact-token hit keeps its first place); asked how things
are now ("am I still in the choir?"), the inputs among the best five that are about the same
thing are shown newest first too. In a conversation between people (turns stored as "Name: …"),
a question that names a speaker lifts that speaker's turns. A question about what the assistant
said ("what did you recommend…?", "in our previous conversation…", "remind me…") searches the
assistant's replies with the user's words (the user's a little below them, at REPLY_WEIGHT of
their score, when it names the assistant as the one who said it); a reply is in no passage
(those are the user's words), so its context is its conversation's best passage: the user's
words it answered. Any other question searches them too, a little below the user's own words
(at REPLY_WEIGHT of their score, searched apart so that they neither take the user's words'
places among the candidates nor rescale their scores): what the assistant told the user is found
when nothing the user said answers as well. Asked what the assistant said, or what someone told
the user ("where was I told to keep my emergency fund?"), a reply ranked below the user's turn
it answered trades places with it (`_answers_first`): the user's turn is worded like the
question, the reply holds what is asked for. Each reply hit names the turn it answered."""

from __future__ import annotations

import calendar
import dataclasses
import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from itertools import islice
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar

from dcpm_cli.embed import MINILM_ID
from dcpm_cli.errors import InputError, TextSearchFailed
from dcpm_cli.models import (
    CONTEXT,
    DONE,
    FAILED,
    ITEM_KINDS,
    NO_ITEMS,
    PENDING,
    REPLACED,
    Event,
    Hit,
    MemoryItem,
    Passage,
    Period,
    RawInput,
    Recall,
    speaker_of,
    utcnow,
)
from dcpm_cli.mpnet import MPNET_ID
from dcpm_cli.read.named_days import WEEKDAYS, day_said, months_planned, weekends_said
from dcpm_cli.read.question import (
    EARLIEST,
    NEWEST,
    SAYING,
    SENTENCE_END,
    Question,
    Window,
    content_words,
    matched_words,
    read_question,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from dcpm_cli.embed import Embedder
    from dcpm_cli.store import Found, Store

# all-MiniLM-L6-v2 puts unrelated sentences below ~0.2 and a question and its answer above ~0.35;
# another embedder needs its own floor (setting `recall_min_similarity`).
MIN_SIMILARITY = 0.2
ANSWER_SIMILARITY = 0.35  # and a question and its answer above it (the same model's)
SEMANTIC_WEIGHT = 0.75  # α: the share of meaning (cosine) against shared words (BM25)


class RawFilter(TypedDict):
    statuses: list[str]
    roles: list[str]


# Inputs not extracted yet, or from which no item came: their words are the memory.
RAW_SEARCHED: RawFilter = {"statuses": [PENDING, FAILED, NO_ITEMS], "roles": ["user"]}
# Inputs a rare token of the query finds word for word, extracted or not.
RAW_EXACT: RawFilter = {"statuses": [PENDING, FAILED, NO_ITEMS, DONE], "roles": ["user"]}
# The assistant's turns, stored raw as the conversation's context: they hold its answers, the
# user's turns the asking. Every question searches them (see `_search`).
REPLIES: RawFilter = {"statuses": [CONTEXT], "roles": ["assistant"]}
# A reply found by a question not about the assistant counts this share of its score: 1.0 (level
# with the user's words) crowded answers out of the top 5 in LongMemEval's chats, full of long
# replies (4 of dev100's 100 questions lower, 2 at 1 / (1 + SPEAKER_BOOST)); 0.7 left an answer
# only a reply holds below the top 5 (docs/benchmarks.md, "People's own questions"). Asked what
# the assistant said, the user's own words count this share instead.
REPLY_WEIGHT = 0.8
_RARE = re.compile(r"(?<!\w)(?=\w{5})(?=\w*\d)(?:\w*[^\W\d]\w*|\d{5,})(?!\w)")  # "UNIQ00005Z", "48213"
# A question about a time ("last Friday", "in June") lifts what was said then, or soon after
# (people tell what happened a little later): by this share of its score, never a filter, since
# people misremember dates.
TIME_BOOST = 0.3
TOLD_LATER = timedelta(days=3)
# A question asking only what was done at a time searches this far around it (or as far as the
# time is long), its NEAR_DEPTH inputs most like the question at least, for what was said
# nearest then: what comes next when little or nothing was said in it.
NEAR_TIME = timedelta(days=14)
NEAR_DEPTH = 100
FAR = 8  # × NEAR_TIME: the second, farther search around a time asked alone (16 weeks each side)
# A time asked alone before it comes ("what am I doing on 8 July?") searches what was said this
# long before it, as deep as NEAR_DEPTH, for the plans that name its days.
PLANNED_BEFORE = timedelta(weeks=8)
# In a plan: "a week on Saturday" (the Saturday after the coming one).
_A_WEEK_ON = re.compile(rf"\ba\s+week\s+(?:on|from)\s+({'|'.join(WEEKDAYS)})\b", re.I)
# A day of the month said alone in a plan, where a time ends ("haircut on the 8th, then…",
# "cancelled the ferry for the 8th"; not "on the 3rd floor", "for the 2nd time", "the 1st of May").
_ON_THE_NTH = re.compile(
    r"\b(?:on|for)\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|at|to|with|in|from|so|"
    r"but|then|too|as|because|when|while|before|after|instead|if|unless)\b)",
    re.I,
)
# A sentence that dates something else by the event ("got home Wednesday after the knee op")
# does not date the event.
_BY_THE_EVENT = r"\b(?:after|before|since|until|till|following|ahead\s+of)\s+(?:\S+\s+){0,3}?"
# Asked of the user's own event ("my op"), another's ("Mum's op", "her op") is not it.
_MY_EVENT = re.compile(r"^\s*(?:my|our)\b", re.I)
_ANOTHERS = r"(?:\b(?:his|her|their)|(?<!\bmy)\s\w+['’]s)\s+(?:\S+\s+){0,2}?"

# A sentence telling of the user's own doing: "I" (or, typed in lowercase, "i went", "i'd") or
# "we" in it, or, as a journal writes, a verb in the past first ("Went to the rally on Saturday",
# "Spent yesterday at the allotment").
_PAST = (
    r"(?:\w+ed|went|got|had|spent|took|made|did|saw|met|ran|came|ate|drove|flew|bought|caught|left|"
    r"sat|swam|rode|won|lost|gave|found|kept|began|brought|sang|wrote|slept|woke|built|paid|sold|"
    r"taught|heard|wore|spoke|threw|fell|hit|put|set|read|cut)"
)
_MY_DOING = re.compile(rf"(?-i:\bI\b)|\bi(?=\s+[a-z]|['’])|\bwe\b|^\W*{_PAST}\b", re.I)
# A time that is the subject of its sentence is one of the user's days, as a journal tells them:
# "The weekend just gone was the cottage", "This past weekend was spent de-Christmassing the
# flat", "Saturday was just the big Tesco shop" (not another's, "Sue said Saturday was a washout",
# nor what was not done, "Saturday was supposed to be the car boot").
_MY_TIME = re.compile(
    r"^\W*(?:(?:the|this|last|this\s+past|the\s+past)\s+)?"
    r"(?:weekend(?:\s+just\s+gone)?|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s+(?:was|were)\b"
    r"(?!\s+(?:supposed|meant|going|due|when|planned|cancell?ed|called\s+off|rained\s+off)\b)",
    re.I,
)
# What another did, told in a clause of its own after a verb of telling or knowing, is theirs:
# "I heard my neighbour Dave went to the rally on Saturday", "I think Sue flew out on Friday"
# (not "I heard the band on Saturday": no verb of its own; "Mum said we went on Saturday" says we).
# (A clause's subject is not joined by these: "I heard a noise and went downstairs on Saturday".)
_NOT_A_SUBJECT = r"(?:and|then|but|so|or|to|in|at|on|for|with|from|about|into|of|up|out|off|back|home)"
_REPORTED = re.compile(
    r"\b(?:heard|said|says|told(?:\s+\w+)?|tells(?:\s+\w+)?|mentioned|reckons?|thinks?|thought|"
    r"read|learned|learnt|found\s+out|guess(?:ed)?)\s+(?:that\s+)?"
    rf"(?=(?:(?!{_NOT_A_SUBJECT}\b)[\w'’-]+\s+){{1,3}}?(?:{_PAST}|was|were|is|are|has|been|gone|will)\b)",
    re.I,
)
# A question naming a speaker of a conversation ("What did Maya say about the flat?") lifts that
# speaker's turns by this share of their score: a preference, never a filter (the other person
# may have said it, or said it back).
SPEAKER_BOOST = 0.1
SPEAKER_PROBE = 100  # the BM25 hits of a name looked through for that person's own turns
# Words before a name that make its person the one spoken to or of, not the one who said it:
# "what did I tell Ola about Tariq?" asks of neither's words.
_OF = r"about|regarding|for|of"
_SPOKEN_OF = re.compile(rf"\b(?:{_OF})\s+$", re.I)
_SPOKEN_TO_OR_OF = re.compile(rf"\b(?:{_OF}|{SAYING}|telling|asking|to)\s+$", re.I)
# A question naming several things: a cue none of whose CUE_DEPTH best hits is among the
# question's CUE_HEAD best gets its best hit raised to CUE_WEIGHT × the question's top score,
# so every cue is represented near the top.
CUE_WEIGHT = 0.9
CUE_HEAD = 5
CUE_DEPTH = 1
# Two hits this similar, said by the same speaker, say nearly the same thing (a change of mind
# stored twice, an update never chained): shown newest first, each with when it was said.
NEAR_DUPLICATE = 0.8
# A question asking how things are now ("am I still in the choir?") shows its SAME_THING_DEPTH
# best newest first when they are about the same thing: this alike, as about 1 pair in 200 of
# one person's inputs are, by encoder (another gets MiniLM's); two entries telling one change of
# mind had a median of 0.51 under MiniLM on the people sets (docs/benchmarks.md "Now, not then").
SAME_THING = {MINILM_ID: 0.6, MPNET_ID: 0.65}
SAME_THING_DEPTH = 5
# A question about what the assistant said: a reply among this many best hits (it matched in
# its own right) takes the place of the user's turn it answered, when that ranks above it.
ANSWERED_DEPTH = 10
# Pseudo-relevance feedback (Rocchio, on dense vectors as in Li et al., "Pseudo Relevance
# Feedback with Deep Language Models and Dense Retrievers", TOIS 2023): the question's vector
# moves towards the mean of its FEEDBACK_DEPTH best-scored candidates by FEEDBACK_WEIGHT, and is
# searched again. Some answers share few words and little meaning with the question but much
# with its first answers (docs/benchmarks.md, "Pseudo-relevance feedback").
FEEDBACK_DEPTH = 3
FEEDBACK_WEIGHT = 0.5
FEEDBACK_SEARCH = 20  # the depth of the first search (that of k ≤ 5)
RANKED_AT_LEAST = 10  # hits ranked whatever k is asked (`dcpm recall`'s default -k)
_LEAST = 1e-6  # the score of a hit that must be found whatever its cosine

K = TypeVar("K")
_ID = re.compile(r"[mr]_[0-9a-f]{6,}")  # an item's or a raw input's id
_LIKE_AN_ID = re.compile(r"[mr]_\w+")  # a word written as an id, perhaps mistyped
_IDS_HINT = "ids are in `dcpm recall --json`; `dcpm show ID` tells what one is"
Key = tuple[str, str]  # ("items" | "raw", id)
Candidate = MemoryItem | RawInput
# A time searched for what was said then: [start, end), and how many of its best to take.
# [start, end), how many to find said then, and of which raw inputs (None: those searched).
Span = tuple[datetime, datetime, int, RawFilter | None]


def recall(
    store: Store,
    embedder: Embedder,
    query: str,
    *,
    k: int = 10,
    kinds: list[str] | None = None,
    as_of: datetime | None = None,
    min_similarity: float = MIN_SIMILARITY,
    chains: bool = True,
    now: datetime | None = None,
    zone: tzinfo = UTC,
    date_order: str = "",
    me: str = "",
) -> Recall:
    """The k best memories for `query`: current beliefs (or those valid at `as_of`) first.
    A memory counts as found when its text shares words with the query or its cosine
    similarity reaches `min_similarity`: a query about nothing stored finds nothing.
    `chains=False` is the no-supersedes ablation: every item stands alone, no arcs.
    Time words in the query ("last weekend") are read against `now` (default: `as_of`, else the
    current time), in `zone`'s days: a benchmark asks as of a question's date without hiding
    what came later. `date_order` ("dmy", "mdy"): how the user writes a date in numbers
    ("on 3/4"), where its numbers do not tell; `me`: the name the user's chat turns begin with
    ("Kasia: …"), whose turns "what did I tell Maya?" asks of, with the user's own notes."""
    if not re.search(r"\w", query):
        # "*", "?!.": no word to share, and the cosine of their vector with short texts passes
        # the floor by accident (`forget --query '*'` planned to delete three inputs).
        return Recall(
            query=query,
            hits=[],
            as_of=as_of,
            warnings=["the query has no words: nothing to match"],
            zone=str(zone),
        )
    asked_at = now or as_of or utcnow()
    asked = dataclasses.replace(read_question(query, asked_at, zone, date_order), me=me)
    # Fewer hits asked for are the first of RANKED_AT_LEAST, not others: every search, cue and
    # ordering sees as many (a deeper search for -k 10 found replies that -k 5 never met).
    ranked = max(k, RANKED_AT_LEAST)
    depth = max(4 * ranked, 20)
    kept = _KEPT.set(_Kept(depth, {}))
    try:
        return _recall(
            store, embedder, query, asked, asked_at, ranked, depth, kinds, as_of, min_similarity, chains,
            zone, shown=k,
        )  # fmt: skip
    finally:
        _KEPT.reset(kept)


def _recall(
    store: Store,
    embedder: Embedder,
    query: str,
    asked: Question,
    asked_at: datetime,
    k: int,
    depth: int,
    kinds: list[str] | None,
    as_of: datetime | None,
    min_similarity: float,
    chains: bool,
    zone: tzinfo,
    shown: int,
) -> Recall:
    """The `shown` first of the k best hits (`recall`)."""
    item_kinds = [x for x in (kinds or ITEM_KINDS) if x in ITEM_KINDS]
    raw = _raw_searched(asked) if not kinds or "raw" in kinds else None
    anchor: tuple[Key, Candidate | None] | None = None
    if asked.anchor is not None:
        asked, anchor = _anchored(
            store, embedder, asked, asked_at, item_kinds, raw, as_of, min_similarity, zone
        )  # fmt: skip
    if raw is not None and asked.window is not None and not asked.only_time:
        asked = _naming_speakers(store, asked, raw)
    vectors = embedder.embed([asked.search_text, *asked.cues])

    if FEEDBACK_DEPTH and not asked.only_time:
        # (What was said at a time answers a question about that time alone, whatever it says.)
        # The first search is the same whatever k is asked, so the top hits do not depend on k.
        first = _candidates(
            store, vectors, asked, FEEDBACK_DEPTH, FEEDBACK_SEARCH, item_kinds, raw, as_of,
            min_similarity, [],
        )  # fmt: skip
        # Towards what answered, not what asked (`_answers_first`).
        _answers_first(store, first, asked, as_of)
        vectors = _with_feedback(store, vectors, first, as_of, replies=asked.to_assistant)
    warnings: list[str] = []
    if asked.two_ways:
        warnings.append(
            f"'{asked.two_ways}' reads as two days (day or month first) and was read as no date: "
            "set DCPM_DATE_ORDER=dmy (day first) or mdy (month first)"
        )
    if asked.no_day:
        warnings.append(f"'{asked.no_day}' is no day of the calendar and was read as no date")
    while True:
        got = _candidates(
            store, vectors, asked, k, depth, item_kinds, raw, as_of, min_similarity, warnings, asked_at
        )
        _answers_first(store, got, asked, as_of)
        if anchor is not None:
            _beside_its_window(got, asked, *anchor)
        out = _ranked(store, got, asked, k, as_of, chains)
        # With `as_of`, the states said after it are dropped only once ranked: in a store with
        # many later matches the ones valid then lie deeper. Search deeper until k are found
        # or every row has been a candidate.
        if as_of is None or len(out) >= k or depth >= store.searchable_rows():
            break
        depth *= 4
        warnings.clear()
    out = out[:shown]
    _with_what_they_answered(store, out, got.found)
    stale = _attach_nodes(store, out, chains=chains, as_of=as_of)
    nodes = {n.id: n for h in out for n in h.nodes}
    period = None
    if (w := asked.window) is not None:
        planned = frozenset(h.id for h in out) & {key[1] for key in got.planned}
        period = Period(w.phrase, w.start, w.end, TOLD_LATER, zone=str(zone), noon=w.noon, planned=planned)
        # (A day is not a part of one: "yesterday's quiz" is not told of last night.)
        told_of = frozenset(
            h.id
            for h in out
            if w.noon is None
            and period.told_after(h.when)
            and _says_a_day_in(got.rows.get(("raw", h.id)), h.when, w)
        )
        period = dataclasses.replace(period, told_of=told_of)
        # (Nothing is said at a time still to come: asked of one, the hits are from before it,
        # and a reader is told when none plans for it.)
        to_come = w.start > asked_at
        if out and to_come and not planned:
            warnings.append(
                f"nothing found was planned for {w.phrase} ({period.days}): these hits are from other days"
            )
        elif (
            out
            and not to_come
            and not any(period.holds(h.when) or h.id in planned or h.id in told_of for h in out)
        ):
            planned_too = " or planned for it" if w.ahead else ""
            # Said after a day is not said on it: a reader (an agent reading --json too) is
            # told so, not left to count the hits marked "said just after".
            told = sum(period.told_after(h.when) for h in out)
            parts = [f"{told} said in the {TOLD_LATER.days} days after"] if told else []
            if told < len(out):
                parts.append("the rest from other days" if told else "these hits are from other days")
                if asked.only_when:
                    parts[-1] += ", the nearest first"  # (`_nearest_next`)
            found = ", ".join(parts)
            warnings.append(f"nothing found was said {w.said_when}{planned_too} ({period.days}): {found}")
    return Recall(
        query=query,
        hits=out,
        as_of=as_of,
        nodes=list(nodes.values()),
        warnings=warnings,
        stale_nodes=stale,
        period=period,
        zone=str(zone),
    )


def _naming_speakers(store: Store, asked: Question, raw: RawFilter) -> Question:
    """The question with the names it gives of people whose turns the store holds ("what did Ana
    say on Tuesday?": turns "Ana: …"): who said it, not what was said, so a question of a time
    and such a person alone asks of what was said then (`Question.only_time`)."""
    people: set[str] = set()
    rest = asked.text.replace(asked.window.phrase, " ") if asked.window else asked.text  # ("in June")
    for word in set(re.findall(r"[^\W\d_][\w'’-]*", rest)):
        if word[0].isupper() and content_words(word):  # (not "What", "I'm", "Monday")
            hits = _text_search(store, [], "raw", word, SPEAKER_PROBE, **raw)
            speakers = (speaker_of(row.text) for row, _ in hits)
            # (one spoken to takes part: "did I text Ana on Friday?" asks what was said then)
            people.update(s for s in speakers if s and _names(rest, s, but=_SPOKEN_OF))
    if asked.asks_what_i_said:
        people.add(asked.me)  # (the user's own words are in any store)
    return dataclasses.replace(asked, people=frozenset(people)) if people else asked


def _anchored(
    store: Store,
    embedder: Embedder,
    asked: Question,
    asked_at: datetime,
    item_kinds: list[str],
    raw: RawFilter | None,
    as_of: datetime | None,
    min_similarity: float,
    zone: tzinfo,
) -> tuple[Question, tuple[Key, Candidate | None] | None]:
    """The question with the window its anchor counts from the event it names ("a week after
    dad's operation": the week around seven days after the day of the best match of "dad's
    operation": the day it says, "the operation was on Tuesday", else the day it was said), and
    that match (its key, and its row when the search met one). Where the best match says no
    day ("Home. The op went fine"), told, as people tell things, up to TOLD_LATER after, a day
    another match says in those days before its telling dates it ("the hip op is on 24 July",
    in a letter weeks before), the latest told of them (a plan moved: "now on the 25th"); a day
    further off, or after it, is another time (the op pencilled in for June, a follow-up). A
    day after `asked_at` is counted from only when the window it gives has begun by then ("the
    week before my op", asked the day before it); asked then, the day after an op to come had
    not happened. An event found nowhere gives no window: the question is asked as it is."""
    assert asked.anchor is not None
    event = asked.anchor.event
    rows: dict[Key, Candidate] = {}
    found: dict[Key, MemoryItem | RawInput] = {}
    said: dict[Key, datetime] = {}
    target = embedder.embed([event])[0]
    scores = _scored(
        store, target, event, FEEDBACK_SEARCH, item_kinds, raw, as_of, min_similarity, [], rows,
        found, said, None,
    )  # fmt: skip
    credible = _credible_events(store, target, event, scores, rows, said, as_of)
    if not credible:
        return dataclasses.replace(asked, anchor=None), None
    best = credible[0]
    row = found.get(best) or rows.get(best)
    when = said[best].astimezone(zone)
    asked_on = asked_at.astimezone(zone).date()
    anchor = asked.anchor

    def counts(day: date) -> bool:
        """Asked then, the day had come, or the window it gives had begun."""
        return day <= asked_on or day + timedelta(days=anchor.days(day)[0]) <= asked_on

    told: list[tuple[datetime, date]] = []  # (when said, the day it says)
    for n, key in enumerate(credible):
        other = found.get(key) or rows.get(key)
        if not isinstance(other, RawInput):
            continue
        day = _day_it_says(other.text, event, said[key].astimezone(zone), zone, counts)
        if day is not None and n == 0:
            told = [(said[key], day)]
            break
        if day is not None and timedelta(0) <= when.date() - day <= TOLD_LATER:
            told.append((said[key], day))
    if told:
        day = max(told)[1]
        when = when.replace(year=day.year, month=day.month, day=day.day)
    window = asked.anchor.window(when, zone)
    phrase = f"{asked.anchor.phrase}, counted from {when:%Y-%m-%d}"
    return dataclasses.replace(asked, window=dataclasses.replace(window, phrase=phrase)), (best, row)


def _day_it_says(
    text: str, event: str, said: datetime, zone: tzinfo, counts: Callable[[date], bool]
) -> date | None:
    """The day an input says the event it names happens on, where a sentence naming the event
    says one ("Home. The knee replacement was on Monday", said on the Thursday: the Monday; "the
    Cycle Tour is this Sunday", said on the Monday: that Sunday): counted from the day said,
    the window would start before the event or miss it. The sentences naming the event's head
    (its last word: "op" of "my knee op") are read first, then those naming most of it ("My
    knee was bad yesterday. The op is on Tuesday": the Tuesday); of a sentence's days, the
    one nearest the event's words (`day_said`). An input found by meaning alone (no word of
    the event in it), or whose days cannot be told, is counted from the day said; so is one
    whose day the question does not count from (`counts`: after it, with a window not begun
    by then). Asked of the user's own ("my op"), a sentence naming another's ("Mum's op went fine on
    Monday") is not read."""
    words = content_words(event)
    head = next((w for w in reversed(re.findall(r"[\w'’]+", event.lower())) if w in words), None)
    naming = [(s, got) for s in SENTENCE_END.split(text) if (got := words & content_words(s))]
    naming.sort(key=lambda x: (head not in x[1], -len(x[1])))
    # ("my interview for Lorraine's job": the possessive is the event's own, and says nothing)
    my_head = head if _MY_EVENT.match(event) and head and not _anothers(event, head) else None
    for sentence, got in naming:
        if any(re.search(_BY_THE_EVENT + rf"{re.escape(w)}\b", sentence, re.I) for w in got):
            continue
        if my_head and _anothers(sentence, my_head):
            continue
        if (day := day_said(sentence, said, zone, near=words)) is not None:
            return day if counts(day) else None
    return None


def _anothers(text: str, head: str) -> bool:
    """Whether `text` names `head` as another's ("Mum's op", "her op")."""
    return re.search(_ANOTHERS + rf"{re.escape(head)}\b", " " + text, re.I) is not None


def _credible_events(
    store: Store,
    target: np.ndarray,
    event: str,
    scores: dict[Key, float],
    rows: dict[Key, Candidate],
    said: dict[Key, datetime],
    as_of: datetime | None,
) -> list[Key]:
    """Of the FEEDBACK_DEPTH best-scored candidates for `event` said by `as_of`, those that name
    it, best first: that share a word with it, or are as near as an answer is to its question
    (cosine ≥ ANSWER_SIMILARITY). A weak best match (a chat that only comes near in meaning)
    would count the time from the wrong day, and a question asked as it is beats one asked
    about the wrong days."""
    import numpy as np

    words = content_words(event)
    ranked = sorted(
        (x for x in scores if x in said and x in rows and (as_of is None or said[x] <= as_of)),
        key=lambda x: (-scores[x], x),
    )[:FEEDBACK_DEPTH]
    vectors = _vectors_of(store, ranked)

    def names_it(key: Key) -> bool:
        if words & content_words(rows[key].text):
            return True
        v = vectors.get(key[1])
        if v is None:
            return False
        return float(np.dot(v, target)) / max(float(np.linalg.norm(v)), 1e-12) >= ANSWER_SIMILARITY

    return [key for key in ranked if names_it(key)]


def _beside_its_window(got: _Candidates, asked: Question, key: Key, row: Candidate | None) -> None:
    """The event a question's time was counted from ranks just below the best hit said then:
    "the day before my doctor's appointment" is read beside the appointment, which says when."""
    assert asked.window is not None
    then = [v for x, v in got.scores.items() if x in got.said and asked.window.holds(got.said[x], TOLD_LATER)]
    below = max(then, default=max(got.scores.values(), default=1.0))
    got.scores[key] = max(got.scores.get(key, 0.0), below * (1 - 1e-6))
    if row is not None:
        got.rows.setdefault(key, row)
        if isinstance(row, MemoryItem):
            got.found.setdefault(key, row)


def _raw_searched(asked: Question) -> RawFilter:
    """The raw inputs a question searches as the user's words: those not extracted, and the
    assistant's replies when it asks what the assistant said (other questions search the
    replies beside them: `_search`)."""
    return _joined(RAW_SEARCHED, REPLIES) if asked.to_assistant else RAW_SEARCHED


def _is_reply(row: Candidate | None) -> bool:
    return isinstance(row, RawInput) and row.role != "user"


def _session_of(row: Candidate | None) -> str:
    """A raw input's session ("" for none, and for an item: a fact is no turn of a chat)."""
    return (row.session or "") if isinstance(row, RawInput) else ""


def _joined(a: RawFilter, b: RawFilter) -> RawFilter:
    """Both filters' inputs (a role's statuses are its own: a reply is never pending)."""
    return {"statuses": [*a["statuses"], *b["statuses"]], "roles": [*a["roles"], *b["roles"]]}


def _with_feedback(
    store: Store, vectors: np.ndarray, first: _Candidates, as_of: datetime | None, *, replies: bool
) -> np.ndarray:
    """`vectors` with the question's (the first) moved towards the mean vector of its
    FEEDBACK_DEPTH best-scored candidates (said by `as_of`, when given; an assistant's reply
    only with `replies`): q' = q + FEEDBACK_WEIGHT · mean(d), normalised. The cues' stay as
    they are."""
    import numpy as np

    said = first.said
    ranked = sorted(
        (x for x in first.scores if replies or not _is_reply(first.rows.get(x))),
        key=lambda x: (-first.scores[x], x),
    )
    best = [key for key in ranked if as_of is None or key not in said or said[key] <= as_of][:FEEDBACK_DEPTH]
    found = _vectors_of(store, best)
    near = [found[i] for _, i in best if i in found]
    if not near:
        return vectors
    matrix = np.stack(near).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    moved = vectors[0] + FEEDBACK_WEIGHT * matrix.mean(axis=0)
    out = np.array(vectors, dtype=np.float32, copy=True)
    out[0] = moved / max(float(np.linalg.norm(moved)), 1e-12)
    return out


def _vectors_of(store: Store, keys: list[Key]) -> dict[str, np.ndarray]:
    """The stored vectors of candidates (raw inputs and items), by id."""
    out = store.vectors_of("raw", [i for kind, i in keys if kind == "raw"])
    out.update(store.vectors_of("items", [i for kind, i in keys if kind != "raw"]))
    return out


def _ranked(
    store: Store, got: _Candidates, asked: Question, k: int, as_of: datetime | None, chains: bool
) -> list[Hit]:
    """The k best hits among the candidates (`_candidates`), near-duplicates ordered (those
    about the same thing among the SAME_THING_DEPTH best too, asked how things are now, whatever
    k: the first hit of k = 1 is the first of k = 5)."""
    wanted = max(k, SAME_THING_DEPTH) if asked.order == NEWEST else k
    hits = _best_hits(store, got.scores, got.rows, got.found, wanted, as_of, chains)
    pinned = {key[1] for key in got.exact}
    same = SAME_THING.get(store.embedder_id, SAME_THING[MINILM_ID])
    return _near_duplicates_ordered(
        store, hits, got.found, order=asked.order, pinned=pinned, same_thing=same
    )[:k]


@dataclass
class _Candidates:
    scores: dict[Key, float]
    rows: dict[Key, Candidate]
    found: dict[Key, MemoryItem | RawInput]
    said: dict[Key, datetime]
    exact: dict[Key, Candidate]
    planned: set[Key] = dataclasses.field(default_factory=set)  # told before the time asked, naming its day


def _candidates(
    store: Store,
    vectors: np.ndarray,
    asked: Question,
    k: int,
    depth: int,
    item_kinds: list[str],
    raw: RawFilter | None,
    as_of: datetime | None,
    min_similarity: float,
    warnings: list[str],
    asked_at: datetime | None = None,
) -> _Candidates:
    """The `depth` best candidates of each search, scored: of the question, and of each cue it
    names, fused (a cue missing from the question's k best brought in); lifted in the
    question's time window; an input holding a rare token of the question word for word first."""
    rows: dict[Key, Candidate] = {}
    found: dict[Key, MemoryItem | RawInput] = {}
    said: dict[Key, datetime] = {}
    exact: dict[Key, Candidate] = {}
    lists = []
    # A question about a time and nothing else searches what was said then, however unlike the
    # question's words ("what did I do" is like no input): below the similarity floor too.
    w = asked.window
    # A part of a day searches from that day's noon too, where an input dated by day alone is.
    during: list[Span] = []
    if w is not None and asked.only_time:
        during.append((min(w.start, w.noon or w.start), w.end + TOLD_LATER, depth, None))
        if asked.by_assistant and raw is not None:
            # "What did the assistant say last month?": its replies said then, however many of
            # the user's own words were said then too (as deep whatever k is).
            during.append((w.start, w.end + TOLD_LATER, depth, REPLIES))
        if w.ahead:
            # "What am I doing on 8 July?": what was said in the weeks before, for its plans; of a
            # time further off than those weeks ("what am I doing in March?" asked in December:
            # "booked flights to Seville for 12-16 March" in November), the weeks before the asking.
            told_by = asked_at if asked_at is not None and asked_at <= w.start - PLANNED_BEFORE else w.start
            during.append((told_by - PLANNED_BEFORE, told_by, max(depth, NEAR_DEPTH), None))
        if asked.only_when:
            # What was said nearest then comes next (`_nearest_next`): searched as deep whatever
            # k is, so the top hits do not depend on it.
            during.append((*_near(w, as_of), max(depth, NEAR_DEPTH), None))
            # and, where little was said near it (a journal kept now and then), farther off
            during.append((*_near(w, as_of, FAR), NEAR_DEPTH, None))
    # (BM25 matches the question's words without its order and scope: `matched_words`.)
    texts = [asked.words, *map(matched_words, asked.cues)]
    worded: list[set[Key]] = [set() for _ in asked.cues]  # what each cue's words found
    for n, (vector, text) in enumerate(zip(vectors, texts, strict=True)):
        # A rare token is looked for in the question's search only: a cue is a part of it.
        got = _scored(
            store,
            vector,
            text,
            depth,
            item_kinds,
            raw,
            as_of,
            min_similarity,
            warnings,
            rows,
            found,
            said,
            exact if n == 0 and raw else None,
            during if n == 0 else (),
            REPLIES if raw is not None and not asked.to_assistant else None,
            worded[n - 1] if n else None,
        )
        lists.append(got)
    named = [
        _names_the_cue(store, cue, vector, near)
        for cue, vector, near in zip(lists[1:], vectors[1:], worded, strict=True)
    ]
    scores = _fuse_cues(lists[0], list(zip(lists[1:], named, strict=True)), k)
    # A question not about what the assistant said prefers the user's own words: a reply is
    # found when nothing the user said answers as well ("what's that underground walkway in
    # Montreal called?"), below the user's words when they do ("where did I have lunch with my
    # sister?"). One naming it as the one who said it prefers its replies as much: the journal's
    # "I need a proper paint set" comes after "Get a Cotman half-pan set". One asking of a chat
    # ("remind me what I said about boilers") holds both level.
    # Named as the one who said it, the assistant's conversations met hold its answer: the user's
    # words it never answered (a journal note, a chat with a friend) are a step further from it
    # than the user's turns it answered ("what did the assistant suggest for Pickle's kidney
    # disease?": six notes naming Pickle came before the reply to "my cat was just diagnosed").
    answered = {_session_of(row) for row in rows.values() if asked.by_assistant and _is_reply(row)} - {""}
    for key in scores:
        reply = _is_reply(rows.get(key))  # (one found by its passage alone is the user's)
        if (reply and not asked.to_assistant) or (not reply and asked.by_assistant):
            scores[key] *= REPLY_WEIGHT
        if answered and not reply and _session_of(rows.get(key)) not in answered:
            scores[key] *= REPLY_WEIGHT
    alone: set[Key] | None = None  # a time and a person alone asked of: what was said then
    planned: set[Key] = set()  # told before a time asked before it comes, naming its day
    if asked.window is not None:
        then = {key for key in scores if key in said and asked.window.holds(said[key], TOLD_LATER)}
        # (told in the days after it, but of another time: "booked the YHA for the weekend")
        then -= {
            key
            for key in then
            if not asked.window.holds(said[key], timedelta(0))
            and _told_of_another_time(rows.get(key), said[key], asked.window)
        }
        for key in then:
            scores[key] *= 1 + TIME_BOOST
        if asked.window.ahead:
            # Asked on its day or before: a plan told before it that names one of its days is
            # told of it, lifted as what was said then is.
            planned = {
                key
                for key in scores
                if key in said
                and said[key] < asked.window.start
                and _plans_a_day_in(rows.get(key), said[key], asked.window, months=asked.only_time)
            }
            for key in planned:
                scores[key] *= 1 + TIME_BOOST
        if asked.only_time:
            # "What did I do last weekend?": what was told in the days after it but says it
            # happened on one of its days ("went to the steam rally on Saturday", told on the
            # Monday) answers it first; then what was said then, above anything else; then the
            # rest told in the days after it. (What was said then and says "today" is said then.)
            proper = {key for key in then if asked.window.holds(said[key], timedelta(0))}
            top_else = max((v for key, v in scores.items() if key not in then), default=0.0)
            for key in then - proper:
                scores[key] += top_else
            top_told = max((scores[key] for key in then - proper), default=0.0)
            for key in proper:
                scores[key] += max(top_else, top_told)
            if asked.by_assistant:
                # "What did the assistant say last month?": its replies said then, above the
                # user's own words of then (a journal's day, however like the question's words).
                mine = max((scores[key] for key in proper if not _is_reply(rows.get(key))), default=0.0)
                for key in proper:
                    if _is_reply(rows.get(key)):
                        scores[key] += mine
            # (A day is not a part of one: "yesterday's quiz" is not "last night" by its words.)
            dated: set[Key] = set()
            if asked.window.noon is None:
                dated = {k for k in then - proper if _says_a_day_in(rows.get(k), said[k], asked.window)}
                top_then = max((scores[key] for key in then), default=0.0)
                for key in dated:
                    scores[key] += top_then
            if asked.only_when:
                # (the days each of the rest tells of as done, read once for both)
                zone = asked.window.start.tzinfo or UTC
                told = {
                    key: list(_days_told(rows.get(key), said[key], zone))
                    for key in scores
                    if key not in then and key in said
                }
                _nearest_next(scores, rows, said, then, told, asked.window)
                _weekends_beside(scores, told, proper | dated, asked.window)
            # Asked of a day to come (or today): what was told before it and names one of its
            # days ("booked the ferry for the 8th of July", "mum wants us for lunch on Sunday")
            # above all but what was said then.
            top_rest = max((v for key, v in scores.items() if key not in proper), default=0.0)
            for key in planned:
                scores[key] += top_rest
            if asked.people:
                alone = proper  # (what she said then, not what she told after)
    _prefer_named_speaker(store, asked.text, scores, rows, found, alone, me=asked.asks_what_i_said)
    top = max((v for key, v in scores.items() if key not in exact), default=0.0)
    for key in exact:
        scores[key] = top + (1 - SEMANTIC_WEIGHT) + scores.get(key, 0.0)
    return _Candidates(scores, rows, found, said, exact, planned)


def _nearest_next(
    scores: dict[Key, float],
    rows: dict[Key, Candidate],
    said: dict[Key, datetime],
    then: set[Key],
    told: dict[Key, list[date]],
    window: Window,
) -> None:
    """Below what was said in the window (and told in the days after it), the rest by how many
    days from the window the day it is about lies, either side: the day an input tells of as the
    day of the user's own doing ("went climbing on Saturday", said on Monday: Saturday), else a
    day of the window it planned ("booked the YHA in Edale for the weekend", said before it: of
    it), else the day it was said (an item's: its event's); a day's by their scores. A question
    asking only what was done then meets the time beside it next, not whatever is worded like
    "what did I do": of a weekend, the weekends before and after it, as near as the days next to
    it (people count "two weekends ago" differently; the weekdays between are no weekend).
    `told`: the days each input not said then tells of as done (`_days_told`)."""
    zone = window.start.tzinfo or UTC
    first, after = _window_days(window)
    weekend = _a_weekend(window)

    def days_off(key: Key) -> int:
        when = said.get(key)
        if when is None:
            return sys.maxsize
        day = next(iter(told.get(key, ())), None)
        if day is None:  # (the plans it names are read only for an input that tells no day done)
            planned = (day for day in _days_planned(rows.get(key), when, zone) if first <= day < after)
            day = next(planned, when.astimezone(zone).date())
        off = (first - day).days if day < first else (day - after).days + 1 if day >= after else 0
        return 1 if weekend and day.weekday() >= 5 and 0 < off <= 7 else off

    rest = sorted((key for key in scores if key not in then), key=lambda key: (days_off(key), -scores[key]))
    top = max((scores[key] for key in rest), default=0.0)
    for n, key in enumerate(rest):
        scores[key] = top * (len(rest) - n) / len(rest)


def _weekends_beside(
    scores: dict[Key, float],
    told: dict[Key, list[date]],
    first: set[Key],
    window: Window,
) -> None:
    """Asked of a weekend gone by alone ("what did I do two weekends ago?"), what the user told
    of as done on the weekend before or after it ("this past weekend I went up to Hay-on-Wye",
    told on the Monday after the next one) comes right below what was said or told of that
    weekend (`first`), above what was said in the days after it and names no day: people count
    weekends differently, and a weekend's doings told in words are nearer an answer than the
    Monday's chatter, which may or may not be of it. What was told of that weekend itself later
    than the days after it ("last weekend I went to the steam rally", said on the Thursday) comes
    first of these. `told`: the days each input not said then tells of as done (`_days_told`)."""
    first_day, after = _window_days(window)
    if window.ahead or not _a_weekend(window):
        return

    def beside(day: date) -> bool:
        return day.weekday() >= 5 and (0 < (first_day - day).days <= 7 or 0 <= (day - after).days < 7)

    # (told of the weekend asked itself, later than the days after it: above the ones beside it)
    own = {key for key, days in told.items() if any(first_day <= day < after for day in days)}
    moved = sorted(
        (key for key, days in told.items() if key in own or any(map(beside, days))),
        key=lambda key: (key not in own, -scores[key]),
    )
    if not moved:
        return
    floor = min((scores[key] for key in first), default=math.inf)
    below = max(
        (v for key, v in scores.items() if key not in first and key not in moved and v < floor), default=0.0
    )
    floor = below + 1.0 if floor == math.inf else floor
    for n, key in enumerate(moved):
        scores[key] = below + (floor - below) * (len(moved) - n) / (len(moved) + 1)


def _window_days(window: Window) -> tuple[date, date]:
    """The first day of `window` and the day after its last, in its own zone."""
    zone = window.start.tzinfo or UTC
    return window.start.astimezone(zone).date(), window.end.astimezone(zone).date()


def _a_weekend(window: Window) -> bool:
    """Whether `window` is a weekend: a Saturday and the Sunday after it, in its own zone."""
    first, after = _window_days(window)
    return first.weekday() == 5 and after - first == timedelta(days=2)


def _near(window: Window, as_of: datetime | None, times: int = 1) -> tuple[datetime, datetime]:
    """Around a time asked alone: as far as it is long on either side, NEAR_TIME at least (`times`
    that); not past `as_of` (what was said later is not shown, and would take the search's places)."""
    reach = max(window.end - window.start, NEAR_TIME) * times
    end = window.end + TOLD_LATER + reach
    return window.start - reach, end if as_of is None else min(end, as_of)


def _answers_first(store: Store, got: _Candidates, asked: Question, as_of: datetime | None) -> None:
    """A question about what the assistant said ("what spray did the AI recommend for the
    blackfly?"), or what someone told the user ("where was I told to keep my emergency fund?"),
    ranks each reply among the ANSWERED_DEPTH best hits above the user's turn it answered: the
    two trade places, so nothing ranked between them moves (a doctor's words in the journal keep
    their place). The user's turn is worded like the question ("What can I use on the blackfly
    on my beans?"), the reply holds what is asked for. Any other question leaves them as they
    are: a turn that asks may tell the answer itself ("Rudy quoted me $860 for the alternator.
    Is that fair?" answers "what did the mechanic quote me?"), and no rule tried here told the
    two apart without sending such answers down (docs/benchmarks.md). A turn said after `as_of`
    is not a hit then, and moves nothing."""
    if not asked.told:
        return
    scores, rows = got.scores, got.rows
    ranked = [x for x in sorted(scores, key=lambda x: (-scores[x], x))[:ANSWERED_DEPTH] if x not in got.exact]
    if asked.by_assistant:
        _with_their_replies(store, got, ranked, as_of)
    place = {key: n for n, key in enumerate(ranked)}
    turns = {
        key: row
        for key in ranked
        if isinstance(row := rows.get(key), RawInput)
        and row.session
        and (as_of is None or row.said_at <= as_of)  # not a hit then
    }
    for key, reply in turns.items():
        if reply.role == "user":
            continue
        asking = _answered(store, reply)
        answered = ("raw", asking.id) if asking is not None else None
        if answered in turns and place[answered] < place[key]:
            scores[answered], scores[key] = scores[key], scores[answered]
            place[answered], place[key] = place[key], place[answered]


def _with_their_replies(store: Store, got: _Candidates, ranked: list[Key], as_of: datetime | None) -> None:
    """A question naming the assistant as the one who said it ("which book did the AI suggest?")
    finds the user's turn that asked ("What book should I read to focus better?") more often than
    the reply, which shares none of its words ("I recommend 'Deep Work' by Cal Newport"): each
    such turn among `ranked` brings in the reply to it, just above it, for `_answers_first` to
    rank (a reply is the turn after it, the assistant's; not one said after `as_of`)."""
    for key in list(ranked):
        turn = got.rows.get(key)
        if not isinstance(turn, RawInput) or turn.role != "user" or not turn.session:
            continue
        reply = _once("after", turn, store.turn_after)  # (both searches ask)
        if reply is None or reply.role != "assistant" or (as_of is not None and reply.said_at > as_of):
            continue
        if (there := ("raw", reply.id)) not in got.scores:
            got.rows[there] = reply
            got.said[there] = reply.said_at
            got.scores[there] = got.scores[key] * (1 + 1e-6)
            ranked.insert(ranked.index(key), there)


def _answered(store: Store, reply: RawInput) -> RawInput | None:
    """The user's turn `reply` answered: the input said just before it in its conversation,
    when that is the user's (read once per recall)."""
    turn = _once("before", reply, store.turn_before)
    return turn if turn is not None and turn.role == "user" else None


def _once(
    side: Literal["before", "after"], raw: RawInput, read: Callable[[RawInput], RawInput | None]
) -> RawInput | None:
    """The turn on one `side` of `raw` in its conversation, read once per recall (`_Kept`)."""
    kept = _KEPT.get()
    seen = None if kept is None else kept.before if side == "before" else kept.after
    if seen is not None and raw.id in seen:
        return seen[raw.id]
    turn = read(raw)
    if seen is not None:
        seen[raw.id] = turn
    return turn


def _with_what_they_answered(store: Store, hits: list[Hit], found: dict[Key, MemoryItem | RawInput]) -> None:
    """Each reply among the hits with the user's turn it answered (`_answered`): "Yes, you can
    drive round to the East Cliff…" means little to a reader without "Can I get up to the abbey
    without the steps?"."""
    for hit in hits:
        reply = found.get(("raw", hit.id))
        if hit.role == "assistant" and isinstance(reply, RawInput) and reply.session:
            hit.reply_to = _answered(store, reply)


def _scored(
    store: Store,
    vector: np.ndarray,
    query: str,
    depth: int,
    item_kinds: list[str],
    raw: RawFilter | None,
    as_of: datetime | None,
    min_similarity: float,
    warnings: list[str],
    rows: dict[Key, Candidate],
    found: dict[Key, MemoryItem | RawInput],
    said: dict[Key, datetime],
    exact: dict[Key, Candidate] | None,
    during: Sequence[Span] = (),
    beside: RawFilter | None = None,
    worded: set[Key] | None = None,
) -> dict[Key, float]:
    """Every candidate of one search text with its score (own + context); the rows, objects and
    times it met are added to `rows`, `found` and `said`. With `exact`, the inputs holding a rare
    token of `query` word for word are candidates too, and added to `exact`; with `during`, the
    nearest said in each of its spans (as many as each asks), with no floor; with `beside`, those
    inputs too, scored on the scale of the others (`_search`); with `worded`, the candidates the
    word search found, or found the passage of, are added to it."""
    mine_rows, own, scale = _search(
        store, vector, query, depth, item_kinds, raw, min_similarity, warnings, during, beside, worded
    )
    if exact is not None and raw:
        exact.update(_exact_inputs(store, query, depth, mine_rows, warnings, raw))
        mine_rows.update(exact)
    _drop_replaced(store, mine_rows)
    context, passage_at, conversation = _passage_context(
        store, vector, query, depth, as_of, min_similarity, warnings, scale, worded
    )
    scores: dict[Key, float] = {}
    sources_of: dict[Key, list[str]] = {}
    replies: dict[Key, float] = {}  # a reply's context: its conversation's best passage
    for key, row in mine_rows.items():
        rows.setdefault(key, row)
        if isinstance(row, MemoryItem):
            found[key] = row
            sources_of[key] = row.raw_ids
            said.setdefault(key, row.event_at)
        elif row.role != "user":
            replies[key] = conversation.get(row.session or "", 0.0)
            said.setdefault(key, row.said_at)
        else:
            sources_of[key] = [key[1]]
            said.setdefault(key, row.said_at)
    lone = _without_passage(store, mine_rows, sources_of)
    for key, sources in sources_of.items():
        mine = own.get(key, 0.0)
        # An input in no session has no passage: it is its own context (a window of one), so a
        # lone `dcpm add` is not outranked by weaker inputs that merely sit in a journal.
        best = max((mine if r in lone else context.get(r, 0.0) for r in sources), default=0.0)
        score = mine + best
        if score > 0:
            scores[key] = score
    for key, best in replies.items():
        # A reply is in no passage (those are the user's words): its context is the best
        # passage of its conversation, the user's words it answered, or, where those match
        # less than the reply itself ("what did you say about Sintra?", a word the user never
        # said; "quitline number", asked of a reply to "how do I bring it up with my son?"),
        # the reply itself: a window of one, as a journal entry in no session is its own.
        mine = own.get(key, 0.0)
        if (score := mine + max(best, mine)) > 0:
            scores[key] = score
    if raw:
        # An input can be found through its passage alone (the answer is in the next turn).
        for raw_id, score in context.items():
            scores.setdefault(("raw", raw_id), score)
            said.setdefault(("raw", raw_id), passage_at[raw_id])
    return scores


def _says_a_day_in(row: Candidate | None, said: datetime, window: Window) -> bool:
    """Whether the user's input names a day in `window` as the day of something they did ("went
    to the steam rally on Saturday", "my cousin and I went fishing on Saturday"; not "my
    neighbour Dave went to the rally on Saturday", nor "I heard Dave went…"), read against when
    it was said in the window's zone (`day_said`)."""
    days = _days_told(row, said, window.start.tzinfo or UTC)
    return any(window.start.date() <= day < window.end.date() for day in days)


def _plans_a_day_in(row: Candidate | None, said: datetime, window: Window, months: bool = False) -> bool:
    """Whether the user's input, said before `window`, names a day in it as a day to come,
    whoever's plan it is ("booked the ferry for the 8th of July", "the plumber is coming next
    Wednesday"), read against when it was said in the window's zone (`day_said`); with
    `months`, or a month all in it (a question of the time alone: a month is a plan's time too
    loosely to lift one of another thing above what a question of races asks of)."""
    zone = window.start.tzinfo or UTC
    first, end = window.start.date(), window.end.date()
    if any(first <= day < end for day in _days_planned(row, said, zone)):
        return True
    # A month planned alone ("our trip to Seville in March") plans the time asked when it is all
    # in it ("what am I doing in March?"), not a day of it ("…this weekend?", asked on 5 March).
    spans = _months_planned(row, said, zone) if months else []
    return any(first <= start and until <= end for start, until in spans)


def _told_of_another_time(row: Candidate | None, said: datetime, window: Window) -> bool:
    """Whether the user's input names days of what they did or plan, and none in `window`
    ("booked the YHA in Edale for the weekend", told on the Tuesday after the weekend asked of:
    the coming one's; `_days_told`, `_days_planned`)."""
    zone = window.start.tzinfo or UTC
    days = [*_days_told(row, said, zone), *_days_planned(row, said, zone)]
    return bool(days) and not any(window.start.date() <= day < window.end.date() for day in days)


def _days_planned(row: Candidate | None, said: datetime, zone: tzinfo) -> list[date]:
    """The days to come the user's input names, whoever's plan it is, read against when it was
    said in `zone`'s days (`day_said`, `weekends_said`)."""
    if not isinstance(row, RawInput) or row.role != "user":
        return []
    today = said.astimezone(zone).date()
    # ("a week on Saturday": the Saturday after the coming one, not it)
    text = _A_WEEK_ON.sub(" ", row.text)
    days = [today + timedelta(days=_ahead_to(m.group(1), today) + 7) for m in _A_WEEK_ON.finditer(row.text)]
    days += [day for clause in _clauses(text) if (day := day_said(clause, said, zone)) is not None]
    # ("haircut on the 8th": the coming 8th, within a month)
    days += [d for m in _ON_THE_NTH.finditer(text) if (d := _coming_nth(int(m.group(1)), today))]
    # ("the hen do is this weekend": the coming Saturday and Sunday; "next weekend": next week's)
    for clause in _clauses(text):
        for saturday in weekends_said(clause, said, zone):
            days += [saturday, saturday + timedelta(days=1)]
    return [day for day in days if day > today]


def _months_planned(row: Candidate | None, said: datetime, zone: tzinfo) -> list[tuple[date, date]]:
    """The months to come the user's input names alone as the time of their own plan
    (`months_planned`), each as its first day and the first of the next."""
    if not isinstance(row, RawInput) or row.role != "user":
        return []
    return [span for clause in _clauses(row.text) for span in months_planned(clause, said, zone)]


def _clauses(text: str) -> list[str]:
    """`text`'s sentences, each cut where what another said or did is reported (`_REPORTED`)."""
    return [c for s in SENTENCE_END.split(text) for c in _REPORTED.split(s)]


def _ahead_to(weekday: str, today: date) -> int:
    """How many days from `today` to the coming `weekday` (1 to 7: not today)."""
    return (WEEKDAYS.index(weekday.lower()) - today.weekday() - 1) % 7 + 1


def _coming_nth(n: int, today: date) -> date | None:
    """The first `n`th of a month after `today`, this month's or the next's, or None."""
    for year, month in ((today.year, today.month), (today.year + today.month // 12, today.month % 12 + 1)):
        if n <= calendar.monthrange(year, month)[1] and (day := date(year, month, n)) > today:
            return day
    return None


def _days_told(row: Candidate | None, said: datetime, zone: tzinfo) -> Iterator[date]:
    """The days the user's input names as the days of what they did, in `zone` (`_says_a_day_in`;
    a weekend gone by, `weekends_said`: its Saturday and Sunday); none for an item (its time is its
    event's already) or a reply (it tells of no day of mine)."""
    if not isinstance(row, RawInput) or row.role != "user":
        return
    for sentence in SENTENCE_END.split(row.text):
        for n, clause in enumerate(_REPORTED.split(sentence)):  # (`_clauses`)
            if _MY_DOING.search(clause) or (n == 0 and _MY_TIME.match(clause)):
                yield from _days_of(clause, said, zone)


def _days_of(clause: str, said: datetime, zone: tzinfo) -> Iterator[date]:
    """The days a clause of the user's doing names (`_days_told`)."""
    if (day := day_said(clause, said, zone)) is not None:
        yield day
    # ("the weekend just gone I had a stall at the flea market": its Saturday and Sunday; a
    # weekend to come is a plan's, not a day of what was done)
    for saturday in weekends_said(clause, said, zone):
        if saturday <= said.astimezone(zone).date():
            yield from (saturday, saturday + timedelta(days=1))


def _prefer_named_speaker(
    store: Store,
    question: str,
    scores: dict[Key, float],
    rows: dict[Key, Candidate],
    found: dict[Key, MemoryItem | RawInput],
    then: AbstractSet[Key] | None = None,
    *,
    me: str = "",
) -> None:
    """Lift the turns of a speaker the question names (by full or first name, capitalised; not
    as the one spoken to or of: `_names`) by SPEAKER_BOOST. Asked of a time and that person
    alone (`then`: what was said then; "what did Ana say on Tuesday?"), her turns come above
    every other, those said then first (the others nearest then first: `_nearest_next`). The
    speakers known are those of the candidates searched; inputs met through a passage alone are
    read (into `found`) only when the question names one of them. `me`: the user's chat name,
    when the question asks what the user said ("what did I tell Maya?"): the user's are those
    turns and the user's own words of no speaker (a journal, a note)."""
    if SPEAKER_BOOST <= 0:
        return
    texts = {key: row.text for key, row in rows.items() if isinstance(row, RawInput)}
    named = {s for s in map(speaker_of, texts.values()) if s and _names(question, s)}
    if not named and not me:
        return
    unread = [key for key in scores if key[0] == "raw" and key not in texts]
    _read_inputs(store, unread, rows, found)
    texts.update({key: found[key].text for key in unread if key in found})
    roles = {key: row.role for key, row in (*rows.items(), *found.items()) if isinstance(row, RawInput)}

    def said_by_them(key: Key) -> bool:
        speaker = speaker_of(texts[key])
        if speaker in named:
            return True
        return bool(me) and (_is(speaker, me) if speaker else roles.get(key) == "user")

    theirs = {key for key in scores if key in texts and said_by_them(key)}
    for key in theirs:
        scores[key] *= 1 + SPEAKER_BOOST
    # Asked what the user said ("what did I tell Maya about the flat?"), the user's words are
    # the answer and another's at most its context, as a reply is for "what did the assistant
    # say…?": the user's come first, whatever another's share of the question's words.
    lifts = [theirs] if me or then is not None else []
    if then is not None:
        lifts.append(theirs & then)
    for lifted in lifts:
        top = max((v for key, v in scores.items() if key not in lifted), default=0.0)
        for key in lifted:
            scores[key] += top


def _is(speaker: str, name: str) -> bool:
    """Whether a turn's `speaker` is the person called `name`: the same name, or one of the two a
    first name alone that is the other's first ("Kasia" is "Kasia Nowak", either way round; a
    phone's contact may carry a surname the setting does not). Two full names must agree."""
    if not speaker:
        return False
    said, called = speaker.casefold().split(), name.casefold().split()
    return said == called or (min(len(said), len(called)) == 1 and said[0] == called[0])


def _names(question: str, speaker: str, but: re.Pattern[str] = _SPOKEN_TO_OR_OF) -> bool:
    """Whether the question names `speaker` (whole, or by first name) as one who said something:
    not only as the one spoken to or of ("what did I tell Ola…", "…say about Ana"); with `but`
    _SPOKEN_OF, as one who took part ("did I text Ana on Friday?"), not only as the one spoken of."""
    names = "|".join(re.escape(n) for n in sorted({speaker, speaker.split()[0]}, key=len, reverse=True))
    return any(
        not but.search(question, 0, m.start())
        for m in re.finditer(rf"(?<![\w-])(?:{names})(?![\w-])", question)
    )


def _names_the_cue(store: Store, scores: dict[Key, float], vector: np.ndarray, worded: set[Key]) -> bool:
    """Whether a cue's best hit names it, as `_credible_events` asks of an event's: the cue's
    words found it (BM25, in it or its passage: `worded`), or it is as near the cue as an answer
    is to its question (cosine ≥ ANSWER_SIMILARITY: "the kayak" and "picked up a secondhand
    canoe")."""
    import numpy as np

    best = min(scores, key=lambda x: (-scores[x], x), default=None)
    if best is None or best in worded:
        return best is not None
    v = _vectors_of(store, [best]).get(best[1])
    return v is not None and float(np.dot(v, vector)) >= ANSWER_SIMILARITY * float(np.linalg.norm(v))


def _fuse_cues(
    question: dict[Key, float], cues: list[tuple[dict[Key, float], bool]], k: int
) -> dict[Key, float]:
    """The question's scores, with each cue the question's own head misses brought into it:
    when none of a cue's CUE_DEPTH best hits is among the question's best (its k best, at most
    CUE_HEAD), the cue's best hit is raised to CUE_WEIGHT × the question's top score, and into
    that head at least. A cue already represented changes nothing (lifting it anyway cost other
    gold a rank on the development set). Each cue comes with whether its best hit names it
    (`_names_the_cue`); one that does not is not lifted. A cue is a few words ("the Sungold",
    "the storm"), which the embedder may not know: its best cosine can be a filler's
    ("Continue", "the one with the word's we've substituted"), raised to the top because it is
    the best of weak ones, above the second thing the question named."""
    if not cues:
        return question
    ranked = sorted(question, key=lambda x: (-question[x], x))[: min(k, CUE_HEAD)]
    if not ranked:
        return question
    top, last = question[ranked[0]], question[ranked[-1]]
    fused = dict(question)
    for scores, names_it in cues:
        best = sorted(scores, key=lambda x: (-scores[x], x))[:CUE_DEPTH]
        if best and not set(ranked) & set(best) and names_it:
            fused[best[0]] = max(fused.get(best[0], 0.0), CUE_WEIGHT * top, last + 1e-6)
    return fused


def _near_duplicates_ordered(
    store: Store,
    hits: list[Hit],
    found: dict[Key, MemoryItem | RawInput],
    *,
    order: str | None,
    pinned: set[str],
    same_thing: float,
) -> list[Hit]:
    """Hits that say nearly the same (cosine ≥ NEAR_DUPLICATE, same speaker) keep the places
    they won, filled newest first (oldest first when the question asks for the first time);
    each names the others in `same_as`, so a reader sees that it changed and when. A question
    that asks how things are now (`order` NEWEST: "am I still…?", "…these days?") orders the
    inputs among the SAME_THING_DEPTH best the same way by a looser likeness, `same_thing`: about
    the same thing, not saying the same ("Auditioned for Harbour Voices, the community choir…"
    and "Sent Alistair an email saying I'm leaving Harbour Voices"), so they name no others. A
    `pinned` hit (an input holding a rare token of the question) neither moves nor is grouped."""
    if len(hits) < 2:
        return hits
    import numpy as np

    free = [h for h in hits if h.id not in pinned]
    vectors = {**store.vectors_of("raw", [h.id for h in free if h.kind == "raw"])}
    vectors.update(store.vectors_of("items", [h.id for h in free if h.kind != "raw"]))
    present = [i for i, h in enumerate(hits) if h.id in vectors and h.id not in pinned]
    if len(present) < 2:
        return hits
    matrix = np.stack([vectors[hits[i].id] for i in present])
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    sims = matrix @ matrix.T
    row = {hits[i].id: a for a, i in enumerate(present)}  # a hit's row in `sims`
    speakers = [_speaker(hits[i], found) for i in present]

    def alike(ranked: list[Hit], threshold: float, depth: int, inputs_only: bool = False) -> list[list[int]]:
        """Places (among the first `depth` of `ranked`) of hits alike by `threshold` and said
        by one speaker, linked in groups."""
        places = [
            n for n, h in enumerate(ranked[:depth]) if h.id in row and (h.kind == "raw" or not inputs_only)
        ]
        group = {n: n for n in places}  # union-find over places

        def root(n: int) -> int:
            while group[n] != n:
                group[n] = group[group[n]]
                n = group[n]
            return n

        for x, m in enumerate(places):
            a = row[ranked[m].id]
            for n in places[x + 1 :]:
                b = row[ranked[n].id]
                if sims[a, b] >= threshold and speakers[a] == speakers[b]:
                    group[root(n)] = root(m)
        members: dict[int, list[int]] = {}
        for n in places:
            members.setdefault(root(n), []).append(n)
        return [linked for linked in members.values() if len(linked) > 1]

    out = list(hits)
    for places in alike(hits, NEAR_DUPLICATE, len(hits)):
        same = sorted((hits[i] for i in places), key=lambda h: h.when, reverse=order != EARLIEST)
        for place, hit in zip(places, same, strict=True):
            hit.same_as = [hits[i].id for i in places if hits[i].id != hit.id]
            out[place] = hit
    if order == NEWEST:
        # inputs only: an item's time is when its event happened, not when it was told, and an
        # item's change of mind is its chain
        ranked = list(out)
        for places in alike(ranked, same_thing, SAME_THING_DEPTH, inputs_only=True):
            about = sorted((ranked[i] for i in places), key=lambda h: h.when, reverse=True)
            for place, hit in zip(places, about, strict=True):
                out[place] = hit
    return out


def _speaker(hit: Hit, found: dict[Key, MemoryItem | RawInput]) -> str:
    """Who said a hit: a named person, else the role; beliefs are the user's."""
    obj = found.get(("raw", hit.id))
    if isinstance(obj, RawInput):
        return speaker_of(obj.text) or obj.role
    return "user"


def _drop_replaced(store: Store, rows: dict[Key, Candidate]) -> None:
    """Facts that came only from replaced inputs (an edited note's old version) are not memory."""
    sources = {r for row in rows.values() if isinstance(row, MemoryItem) for r in row.raw_ids}
    replaced = {r.id for r in store.get_raw(sorted(sources)).values() if r.status == REPLACED}
    if not replaced:
        return
    for key in [k for k, row in rows.items() if isinstance(row, MemoryItem)]:
        item = rows[key]
        assert isinstance(item, MemoryItem)
        if item.raw_ids and set(item.raw_ids) <= replaced:
            del rows[key]


def _exact_inputs(
    store: Store,
    query: str,
    depth: int,
    rows: dict[Key, Candidate],
    warnings: list[str],
    searched: RawFilter,
) -> dict[Key, Candidate]:
    """Inputs that hold a rare token of the query word for word, where no fact found from them
    does (see the module docstring): the words extraction left out are still the memory."""
    tokens = {t.lower() for t in _RARE.findall(query)}
    if not tokens:
        return {}

    def holds(text: str) -> set[str]:
        return {t for t in tokens if re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text, re.IGNORECASE)}

    covered: dict[str, set[str]] = {}  # raw id → the tokens a fact found from it already holds
    for row in rows.values():
        if isinstance(row, MemoryItem):
            for raw_id in row.raw_ids:
                covered.setdefault(raw_id, set()).update(holds(row.text))
    out: dict[Key, Candidate] = {}
    among = _joined(RAW_EXACT, REPLIES) if "assistant" in searched["roles"] else RAW_EXACT
    for raw, _ in _text_search(store, warnings, "raw", " ".join(sorted(tokens)), depth, **among):
        assert isinstance(raw, RawInput)
        if holds(raw.text) - covered.get(raw.id, set()):
            out[("raw", raw.id)] = raw
    return out


def _without_passage(store: Store, rows: dict[Key, Candidate], sources_of: dict[Key, list[str]]) -> set[str]:
    """The source inputs that belong to no session, so to no passage."""
    sessions = {key[1]: row.session or "" for key, row in rows.items() if isinstance(row, RawInput)}
    unknown = sorted({r for rs in sources_of.values() for r in rs} - set(sessions))
    sessions.update({r.id: r.session for r in store.get_raw(unknown).values()} if unknown else {})
    return {r for r, session in sessions.items() if not session}


@dataclass
class _Kept:
    """What one `recall()` reads twice, kept for it: its BM25 searches (the feedback search asks
    the same words again, only the vector moves; each runs at `depth` at least, so a shallower
    ask is the head of it), the turn before each reply met (read for the ranking and again for
    the hit) and the turn after each user's turn a question naming the assistant met (`_once`)."""

    depth: int
    done: dict[tuple[Any, ...], tuple[int, list[tuple[Found, float]]]]  # search → (its depth, hits)
    before: dict[str, RawInput | None] = dataclasses.field(default_factory=dict)  # reply → its turn
    after: dict[str, RawInput | None] = dataclasses.field(default_factory=dict)  # turn → the next


_KEPT: ContextVar[_Kept | None] = ContextVar("dcpm_recall_kept", default=None)


def _text_search(
    store: Store, warnings: list[str], collection: str, query: str, k: int, **filters: Any
) -> list[tuple[Found, float]]:
    """BM25 hits, or none with a warning: a failure must not pass for "no word matched"."""
    if not re.search(r"\w", query):
        return []  # ("What's new lately?": no word left to match)
    kept = _KEPT.get()
    key = (collection, query, tuple(sorted((n, tuple(v or ())) for n, v in filters.items())))
    if kept is not None and key in kept.done and kept.done[key][0] >= k:
        return kept.done[key][1][:k]
    depth = max(k, kept.depth if kept else 0)
    try:
        got = store.text_search(collection, query, depth, **filters)
    except TextSearchFailed as e:
        warnings.append(f"{e.message}: these results come from vector search only ({e.hint})")
        return []
    if kept is not None:
        kept.done[key] = (depth, got)
    return got[:k]


def _search(
    store: Store,
    vector: np.ndarray,
    query: str,
    depth: int,
    item_kinds: list[str],
    raw: RawFilter | None,
    min_similarity: float,
    warnings: list[str],
    during: Sequence[Span] = (),
    beside: RawFilter | None = None,
    worded: set[Key] | None = None,
) -> tuple[dict[Key, Candidate], dict[Key, float], tuple[float, float]]:
    """Items and raw inputs found by vector or BM25 search, their fused scores, and the scale
    those were fused on (the best cosine and BM25 met, replies searched apart left out); with
    `during`, also the nearest said in each of its spans (as many as each asks), whatever
    their similarity. With `beside` (the assistant's replies, for a question not about them),
    those inputs are searched apart, as deep, and scored on the scale of the rest (divided by
    the others' best cosine and BM25): they neither take the others' places among the
    candidates nor rescale their scores. With `worded`, what BM25 found is added to it."""
    rows: dict[Key, Candidate] = {}
    dense: dict[Key, float] = {}
    lexical: dict[Key, float] = {}

    def take(
        source: str, hits: list[tuple[Found, float]], into: dict[Key, float], floor: float | None = -math.inf
    ) -> None:
        """`floor`: the least cosine a vector hit needs (text hits have none); None: every hit
        counts, a cosine of 0 or below as the least above it (a time alone finds what was said
        then in any words, "Kühlschrank kaputt" too)."""
        for row, score in hits:
            if floor is not None and score < floor:
                continue  # the nearest of unrelated texts is still unrelated
            assert isinstance(row, MemoryItem | RawInput)
            key = (source, row.id)
            into[key] = max(score, _LEAST) if floor is None else score
            rows.setdefault(key, row)

    if item_kinds:
        take("items", store.vector_search("items", vector, depth, kinds=item_kinds), dense, min_similarity)
        take("items", _text_search(store, warnings, "items", query, depth, kinds=item_kinds), lexical)
        for start, end, deep, _ in (span for span in during if span[3] is None):
            then = store.vector_search("items", vector, deep, during=(start, end), kinds=item_kinds)
            take("items", then, dense, None)
    if raw:
        # Inputs not extracted yet are memory too: dcpm is useful before any LLM has run.
        take("raw", store.vector_search("raw", vector, depth, **raw), dense, min_similarity)
        take("raw", _text_search(store, warnings, "raw", query, depth, **raw), lexical)
        for start, end, deep, only in during:
            said_then = store.vector_search("raw", vector, deep, during=(start, end), **(only or raw))
            take("raw", said_then, dense, None)
    own = _fuse(dense, lexical)
    scale = (max(dense.values(), default=0.0), max(lexical.values(), default=0.0))
    if beside:
        near: dict[Key, float] = {}
        words: dict[Key, float] = {}
        take("raw", store.vector_search("raw", vector, depth, **beside), near, min_similarity)
        take("raw", _text_search(store, warnings, "raw", query, depth, **beside), words)
        own.update(_fuse(near, words, scale))
        if worded is not None:
            worded.update(words)
    if worded is not None:
        worded.update(lexical)
    return rows, own, scale


def _best_hits(
    store: Store,
    scores: dict[Key, float],
    rows: dict[Key, Candidate],
    found: dict[Key, MemoryItem | RawInput],
    k: int,
    as_of: datetime | None,
    chains: bool = True,
) -> list[Hit]:
    """The k best-scored candidates as hits; raw inputs become objects only when they get
    there (those found through a passage alone are read from the store, a few at a time:
    the next 2 × (hits still wanted) unread ones, and twice as many as the last time, since
    inputs a passage holds may not be kept, such as the replies of a conversation)."""
    out: list[Hit] = []
    seen_chains: set[str] = set()
    read: set[Key] = set()
    size = 0
    ranked = sorted(scores, key=lambda x: (-scores[x], x))
    for n, key in enumerate(ranked):
        if len(out) >= k:
            break
        if key not in found and key not in read:
            size = max(2 * size, 2 * (k - len(out)))
            unread = (x for x in ranked[n:] if x[0] == "raw" and x not in found and x not in read)
            batch = list(islice(unread, size))
            read.update(batch)
            _read_inputs(store, batch, rows, found)
        obj = found.get(key)
        hit = _hit(store, obj, scores[key], as_of, seen_chains, chains) if obj is not None else None
        if hit is not None:
            out.append(hit)
    return out


def _fuse(
    dense: dict[K, float], lexical: dict[K, float], scale: tuple[float, float] | None = None
) -> dict[K, float]:
    """α·dense + (1 − α)·lexical, each divided by its best score in this query (floor 0), or by
    `scale`'s where it has one (another list's best cosine and BM25: scores on its scale)."""
    top_d, top_l = max(dense.values(), default=0.0), max(lexical.values(), default=0.0)
    if scale is not None:
        top_d, top_l = scale[0] or top_d, scale[1] or top_l

    def share(value: float | None, top: float) -> float:
        return max(value, 0.0) / top if value is not None and top > 0 else 0.0

    a = SEMANTIC_WEIGHT
    keys = dense.keys() | lexical.keys()
    return {x: a * share(dense.get(x), top_d) + (1 - a) * share(lexical.get(x), top_l) for x in keys}


def _passage_context(
    store: Store,
    vector: np.ndarray,
    query: str,
    depth: int,
    as_of: datetime | None,
    min_similarity: float,
    warnings: list[str],
    scale: tuple[float, float],
    worded: set[Key] | None = None,
) -> tuple[dict[str, float], dict[str, datetime], dict[str, float]]:
    """Raw input id → the fused score of the best passage that holds it, and when that passage
    was said (its last input: what a time window is checked against for an input met only
    here); and session → the fused score of its best passage (a reply's context). With
    `worded`, the inputs of the passages BM25 found are added to it.

    An input's passage is scored on one scale with the inputs (`scale`, their best cosine and
    BM25; or the passages' own best, where higher): divided by the passages' best alone, the
    best of a store's few conversations scored a whole point however weakly it matched, and
    lent it to a weak turn ("are there other beaches near Lisbon?"), which outranked the journal
    entry that said the answer ("I STOOD UP…", a window of one: its own score). A reply's
    context stays on the passages' own scale: its words are unlike the question, its
    conversation is all it has, and on one scale it lost the questions replies answer
    (docs/benchmarks.md)."""
    passages = {}
    dense: dict[str, float] = {}
    lexical: dict[str, float] = {}
    for into, hits in (
        (dense, store.vector_search("passages", vector, depth)),
        (lexical, _text_search(store, warnings, "passages", query, depth)),
    ):
        for row, score in hits:
            if into is dense and score < min_similarity:
                continue
            p = row
            assert isinstance(p, Passage)
            if as_of is not None and p.last_at > as_of:
                continue  # it holds inputs said after `as_of`: not a passage yet then
            passages[p.id] = p
            into[p.id] = score
    context: dict[str, float] = {}
    at: dict[str, datetime] = {}
    sessions: dict[str, float] = {}
    joint = (max(*dense.values(), scale[0], 0.0), max(*lexical.values(), scale[1], 0.0))
    own = _fuse(dense, lexical)
    if worded is not None:
        worded.update(("raw", raw_id) for pid in lexical for raw_id in passages[pid].raw_ids)
    for pid, score in _fuse(dense, lexical, joint).items():
        p = passages[pid]
        sessions[p.session] = max(own[pid], sessions.get(p.session, 0.0))
        for raw_id in p.raw_ids:
            if score > context.get(raw_id, -1.0):
                context[raw_id], at[raw_id] = score, p.last_at
    return context, at, sessions


def _read_inputs(
    store: Store, keys: list[Key], rows: dict[Key, Candidate], found: dict[Key, MemoryItem | RawInput]
) -> None:
    """Raw inputs as objects: from the rows a search returned, or read from the store when only
    their passage found them (and kept only if recall searches inputs like them)."""
    for key in keys:
        if key in rows:
            found[key] = rows[key]
    missing = [key[1] for key in keys if key not in rows]
    for raw in store.get_raw(missing).values():
        if raw.role in RAW_SEARCHED["roles"] and raw.status in RAW_SEARCHED["statuses"]:
            found[("raw", raw.id)] = raw


def _hit(
    store: Store,
    found: MemoryItem | RawInput,
    score: float,
    as_of: datetime | None,
    seen: set[str],
    chains: bool = True,
) -> Hit | None:
    if isinstance(found, RawInput):
        raw = found
        if as_of is not None and raw.said_at > as_of:
            return None
        return Hit("raw", raw.id, raw.text, raw.said_at, score, [raw.id], raw_ids=[raw.id], role=raw.role)
    item = found
    linked = chains and (item.supersedes or item.superseded_by)
    chain = store.chain(item.id) if linked else [item]
    root = chain[0].id
    if root in seen:  # a superseded state never shows up as a separate, stale hit
        return None
    seen.add(root)
    state = _state_at(chain, as_of)
    if state is None:
        return None
    return Hit(
        kind=state.kind, id=state.id, text=_text_at(store, state, as_of), when=state.event_at, score=score,
        matched=[item.id], chain=chain, raw_ids=state.raw_ids, topic=state.topic,
    )  # fmt: skip


def _state_at(chain: list[MemoryItem], as_of: datetime | None) -> MemoryItem | None:
    """The newest state of the chain, or the one that was valid at `as_of`."""
    if as_of is None:
        return chain[-1]
    valid = [c for c in chain if c.event_at <= as_of]
    return valid[-1] if valid else None


def _text_at(store: Store, state: MemoryItem, as_of: datetime | None) -> str:
    """The state's text as it read at `as_of`: an UPDATE said later (by the time of the input
    it came from) had not happened yet, and the event log keeps the text before it."""
    if as_of is None or state.updated_at <= state.created_at:
        return state.text  # never updated
    updates = [e for e in store.events_for(state.id) if e.op == "UPDATE" and e.item_id == state.id]
    sources = store.get_raw(sorted({e.raw_id for e in updates if e.raw_id}))
    later = [
        (sources[e.raw_id].said_at if e.raw_id in sources else e.at, e.at, e)
        for e in updates
        if (sources[e.raw_id].said_at if e.raw_id in sources else e.at) > as_of
    ]
    if not later:
        return state.text
    return min(later, key=lambda x: (x[0], x[1]))[2].previous_text


def _attach_nodes(
    store: Store, hits: list[Hit], *, chains: bool = True, as_of: datetime | None = None
) -> set[str]:
    """Graph nodes reached from the hits: schemas and intentions whose evidence edges hold a
    hit's facts (any state of its arc), then the core schemas those schemas are members of.
    Returns the ids of stale nodes: every evidence fact superseded (for a core schema: every
    member stale), so the pattern rests only on beliefs the user has since changed. Without
    `chains` (the no-supersedes ablation) nothing is stale."""
    fact_hits: dict[str, list[Hit]] = {}
    for h in hits:
        for c in h.chain:
            fact_hits.setdefault(c.id, []).append(h)
    by_node = store.nodes_with_evidence(list(fact_hits))
    if not by_node:
        return set()
    reached: dict[str, list[Hit]] = {}
    for node_id, facts in by_node.items():
        reached[node_id] = list({id(h): h for f in facts for h in fact_hits[f]}.values())
    cores = store.members_for(schemas=list(reached))
    for core, members in cores.items():
        reached[core] = list({id(h): h for m in members for h in reached.get(m, [])}.values())
    nodes = store.get_nodes(list(reached))
    for node_id, node_hits in reached.items():
        if node_id in nodes:
            for hit in node_hits:
                hit.nodes.append(nodes[node_id])
    return stale_nodes(store, list(by_node), cores, as_of) if chains else set()


def stale_nodes(
    store: Store, node_ids: list[str], cores: dict[str, list[str]], as_of: datetime | None = None
) -> set[str]:
    """Of these schemas/intentions and these cores (→ all their members), the stale ones; with
    `as_of`, stale then: a fact superseded by a state said later was still believed."""
    evidence = store.evidence_for(node_ids)
    superseded = store.superseded_ids(sorted({f for fs in evidence.values() for f in fs}))
    if as_of is not None and superseded:
        facts = store.get_items(sorted(superseded))
        later = store.get_items(sorted({f.superseded_by for f in facts.values() if f.superseded_by}))
        superseded = {
            i for i, f in facts.items() if (nxt := later.get(f.superseded_by or "")) and nxt.event_at <= as_of
        }
    stale = {n for n, fs in evidence.items() if fs and all(f in superseded for f in fs)}
    # A member not reached from the hits may be stale too: ask for those a core needs.
    others = sorted({m for ms in cores.values() for m in ms} - set(node_ids))
    if others:
        stale |= stale_nodes(store, others, {}, as_of)
    stale |= {core for core, members in cores.items() if members and all(m in stale for m in members)}
    return stale


# -- history, show, stats ------------------------------------------------------------------


@dataclass
class ArcState:
    item: MemoryItem
    sources: list[RawInput]
    events: list[Event]


def arcs(
    store: Store,
    embedder: Embedder,
    target: str,
    *,
    k: int = 3,
    min_similarity: float = MIN_SIMILARITY,
    chains: bool = True,
) -> list[list[ArcState]]:
    """Revision arcs, oldest state first: of an item id, of a raw input's items, or of the
    beliefs that best match a query (found as `recall` finds them, with its floor). An id that
    is not in the store is an error, not a query. `chains=False` is the no-supersedes
    ablation: each belief stands alone."""
    target = target.strip()
    if not target:
        raise InputError("give an item id (m_...) or a query", 'dcpm history "what do I eat?"')
    if _LIKE_AN_ID.fullmatch(target) and not _ID.fullmatch(target):
        # "m_doesnotexist", a mistyped id: no query anyone asks, and a search for it finds
        # nothing, which would read as "no belief yet" to a script checking the exit code
        raise InputError(f"no item with id {target!r}", _IDS_HINT)
    if not _ID.fullmatch(target):
        result = recall(
            store, embedder, target, k=k, kinds=list(ITEM_KINDS), min_similarity=min_similarity, chains=chains
        )
        arcs_of = [h.chain for h in result.hits]
    elif target.startswith("m_"):
        if not (item := store.get_items([target]).get(target)):
            raise InputError(f"no item with id {target!r}", _IDS_HINT)
        arcs_of = [store.chain(target) if chains else [item]]
    else:
        if not store.get_raw([target]):
            raise InputError(f"no input with id {target!r}", _IDS_HINT)
        items = store.items_from_raw(target)
        arcs_of = distinct_chains(store, [i.id for i in items]) if chains else [[i] for i in items]
    return arc_states(store, arcs_of)


def arc_states(store: Store, chains: list[list[MemoryItem]]) -> list[list[ArcState]]:
    """Each chain's states with the inputs they came from and their events."""
    out = []
    for chain in chains:
        raws = store.get_raw(sorted({r for c in chain for r in c.raw_ids}))
        out.append(
            [ArcState(c, [raws[r] for r in c.raw_ids if r in raws], store.events_for(c.id)) for c in chain]
        )
    return out


def distinct_chains(store: Store, ids: list[str]) -> list[list[MemoryItem]]:
    chains, seen = [], set()
    for i in ids:
        chain = store.chain(i)
        if chain and chain[0].id not in seen:
            seen.add(chain[0].id)
            chains.append(chain)
    return chains


def describe(store: Store, ident: str) -> dict[str, Any]:
    """Everything known about one id: an item, a raw input or a graph node."""
    if item := store.get_items([ident]).get(ident):
        raws = store.get_raw(item.raw_ids)
        return {
            "type": "item",
            "item": item,
            "chain": [c.id for c in store.chain(ident)],
            "sources": [raws[r] for r in item.raw_ids if r in raws],
            "events": store.events_for(ident),
            "nodes": list(store.get_nodes(list(store.nodes_with_evidence([ident]))).values()),
        }
    if raw := store.get_raw([ident]).get(ident):
        # (a reply: the user's turn it answered, as recall shows it)
        answered = _answered(store, raw) if raw.role != "user" and raw.session else None
        return {"type": "raw", "raw": raw, "items": store.items_from_raw(ident), "reply_to": answered}
    if node := store.get_nodes([ident]).get(ident):
        evidence = store.get_items(store.evidence_of(ident))
        raws = store.get_raw(sorted({r for i in evidence.values() for r in i.raw_ids}))
        return {
            "type": "node",
            "node": node,
            "evidence": [
                {"item": i, "sources": [raws[r] for r in i.raw_ids if r in raws]} for i in evidence.values()
            ],
            "members": list(store.get_nodes(store.members_of(ident)).values()),
        }
    raise InputError(f"no item, raw input or node with id {ident!r}", "ids look like m_…, r_… or n_…")


def empty_stats(uri: str, embedder_id: str) -> dict[str, Any]:
    """`store_stats` of a store not created yet."""
    return {
        "store": uri, "embedder": embedder_id, "raw_inputs": 0, "raw_by_status": {}, "pending": 0,
        "failed": 0, "items": {}, "chains": {"count": 0, "mean_length": 0.0, "max_length": 0},
        "nodes": {}, "dream_runs": [], "disk_bytes": 0,
    }  # fmt: skip


def store_stats(store: Store) -> dict[str, Any]:
    links = store.chain_links()
    nxt = {i: after for i, _, after in links}
    lengths = []
    for i, before, _ in links:
        if before is None:  # a chain's first state
            n, cur = 1, i
            while nxt.get(cur) and n <= len(links):
                cur, n = nxt[cur], n + 1  # type: ignore[assignment]
            lengths.append(n)
    raw = store.count_by_kind("raw")
    return {
        "store": store.uri,
        "embedder": store.embedder_id,
        "raw_inputs": sum(raw.values()),
        "raw_by_status": raw,
        "pending": raw.get(PENDING, 0),
        "failed": raw.get(FAILED, 0),
        "items": store.count_by_kind("items"),
        "chains": {
            "count": len(lengths),
            "mean_length": round(sum(lengths) / len(lengths), 2) if lengths else 0.0,
            "max_length": max(lengths, default=0),
        },
        "nodes": store.count_by_kind("nodes"),
        "dream_runs": store.last_dream_runs(3),
        "disk_bytes": store.disk_bytes(),
    }
