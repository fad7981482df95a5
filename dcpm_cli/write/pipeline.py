"""System 1, the synchronous writer: persist → extract → reconcile → upsert + chain.

1. Raw persist: every input is on disk (embedded, searchable) before any LLM is called; if the
   embedder fails, the words are stored without a vector, filled in by the next write.
2. Extraction (write/extract.py): one structured call per user input (per bounded piece of a
   long one), with the conversation it ends; items the input does not say are dropped.
3. Reconciliation (write/reconcile.py): an item whose input names what it replaced supersedes
   the memory that says so; else it meets its nearest current facts (at most `judge_k`), and
   the model judges each pair, nearest first, until one judgement stands: SUPERSEDE / UPDATE /
   DUPLICATE, else ADD; exact duplicates are dropped before any call.
4. Upsert and chain (here): SUPERSEDE links `supersedes` / `superseded_by` and never deletes;
   UPDATE keeps the previous text in the event log.

One process extracts an input at a time (write/claims.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from dcpm_cli.embed import Memo
from dcpm_cli.errors import DcpmError, LLMError, LLMUnavailable
from dcpm_cli.ingest.formats import said_words
from dcpm_cli.models import (
    CONTEXT,
    DONE,
    FAILED,
    JUDGED,
    NO_ITEMS,
    PENDING,
    AddReport,
    Event,
    InputOutcome,
    MemoryItem,
    RawInput,
    moment,
    normalise,
    place,
    short_hash,
    utcnow,
)
from dcpm_cli.store.base import Write
from dcpm_cli.write import extract, reconcile
from dcpm_cli.write.claims import Claims, new_owner
from dcpm_cli.write.reconcile import Plan
from dcpm_cli.write.words import words

if TYPE_CHECKING:
    import numpy as np

    from dcpm_cli.config import Settings
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store

Progress = Callable[[int, int], None]
# Called with the name of each step of a multi-step write as it is reached ("reconciled",
# "items", "updates", "links"): the seam fault tests use to cut a write short.
Checkpoint = Callable[[str], None]
FINISHED = (DONE, NO_ITEMS)  # an input in one of these needs no more extraction


def _no_checkpoint(step: str) -> None:
    return None


# What a failing embedder raises: a down Ollama (DcpmError), onnxruntime (RuntimeError), a
# model file gone (OSError), a bad reply (ValueError), an input too large (MemoryError).
EMBEDDER_FAILURES = (DcpmError, RuntimeError, OSError, ValueError, MemoryError)


def _embedder_failed(e: BaseException) -> str:
    return f"the embedder failed: {getattr(e, 'message', None) or e}"


@dataclass
class Writer:
    store: Store
    embedder: Embedder
    llm: LLM | None
    settings: Settings
    checkpoint: Checkpoint = _no_checkpoint
    owner: str = field(default_factory=new_owner)
    repaired: str = ""  # what finishing an interrupted write did at the start of this command
    embed_problem: str = ""  # why the last persist stored inputs without vectors
    claims: Claims = field(init=False, repr=False)  # the inputs this writer is extracting

    def __post_init__(self) -> None:
        # Every embedding goes through one memo: the same texts come back within an input
        # (its vector, the attributes near it) and across inputs (attribute names).
        self._embed = Memo(self.embedder).embed
        self.claims = Claims(self.store, self.settings, self.owner)

    def _similar(self, a: str, b: str) -> float:
        va, vb = self._embed([a, b])
        return float(va @ vb)

    def group(self) -> contextlib.AbstractContextManager[None]:
        """Keep one group of staged writes open across calls (an agent's stream of inputs): the
        derived writes of the inputs extracted inside are committed together, every
        GROUP_INPUTS inputs or GROUP_SECONDS and when the block ends (store/staging.py)."""
        return self.store.group()

    def finish_interrupted(self) -> str:
        """Finish what a write cut short left (chain back-pointers, passages): run at the
        start of every write command; one directory listing when nothing was cut short."""
        if not self.store.unfinished_writes():
            return ""
        with self.store.write():
            done = self.store.recover()
        return done.summary() if done else ""

    # -- step 1 ---------------------------------------------------------------------------

    def persist(self, raws: Sequence[RawInput], *, claim: bool = False) -> tuple[list[RawInput], int, int]:
        """Store the inputs not stored before; return them, how many were already there and how
        many the user had forgotten (`dcpm forget`), which are not stored again. With `claim`,
        the new inputs to extract are claimed for this writer in the same lock. Nothing the
        embedder does can stop the words reaching the disk."""
        unique: dict[str, RawInput] = {}
        for r in (r.in_zone(self.settings.zone) for r in raws):
            if r.role != "user":
                r.status = CONTEXT  # assistant/system turns: stored raw, context for extraction
            unique.setdefault(r.content_hash, r)
        # A batch is looked up first, so a re-import embeds nothing; a single input is embedded
        # at once (cheaper than the lookup): the check under the lock below decides.
        batch = list(unique.values())
        if len(batch) > 1:
            known = self._known(batch)[0]
            fresh = [r for r in batch if r.content_hash not in known]
        else:
            fresh = batch
        self.embed_problem = ""
        vectors = None
        if fresh:
            try:
                self.fill_vectors()  # inputs an embedder failure left without one
                vectors = self._embed([said_words(r.text) for r in fresh])
            except EMBEDDER_FAILURES as e:
                self.embed_problem = _embedder_failed(e)
        with self.store.write(Write.INPUTS):  # raw inputs: no staged write depends on them
            # Re-check under the lock: a concurrent `dcpm add` may have stored the same input.
            known, forgotten = self._known(batch, self.store.forgotten_inputs(fresh))
            keep = [i for i, r in enumerate(fresh) if r.content_hash not in known]
            gone = {fresh[i].id for i in keep if fresh[i].id in forgotten}
            keep = [i for i in keep if fresh[i].id not in gone]
            new = [fresh[i] for i in keep]
            if new:
                with self.store.staging():  # in a group, their passages wait for the flush
                    self.store.add_raw(new, None if vectors is None else vectors[keep], self.embed_problem)
            todo = [r for r in new if r.status == PENDING]
            if claim and todo and not self.embed_problem:  # no extraction without the embedder
                self.claims.take(todo)
        return new, len(raws) - len(new) - len(gone), len(gone)

    def fill_vectors(self) -> int:
        """Embed the inputs stored without a vector (the embedder had failed); how many."""
        missing = self.store.raw_without_vectors()
        if missing:
            vectors = self._embed([said_words(r.text) for r in missing])
            with self.store.write():
                self.store.set_raw_vectors(missing, vectors)
        return len(missing)

    def _known(self, raws: list[RawInput], gone: set[str] | None = None) -> tuple[set[str], set[str]]:
        """The content hashes of `raws` stored before: the same input, or one of a session that
        is what was stored before, from another source or in another session, or goes on from it
        (`_goes_on_from_what_was_stored`); a note typed alone as an argument is its own lookup by
        hash (a lone entry piped is looked for as any: a one-entry journal imported, then piped).
        A chat log's turn stored with no session (piped before a piped chat was given one) is
        known turn by turn: each was its own input. And the ids of those the user forgot:
        `gone` (`Store.forgotten_inputs`, when the caller has them) and those a log cut inside
        their moment brings back at another place (`_cut_and_forgotten`)."""
        known = self.store.known_raw_hashes([r.content_hash for r in raws])
        rest = [r for r in raws if r.content_hash not in known]
        if gone is None:  # (stored no more: a log's turns go on from what is left)
            gone = self.store.forgotten_inputs(rest)
        if not rest or (len(raws) == 1 and not rest[0].session and rest[0].source in ("cli", "mcp")):
            return known, gone  # (a note typed as an argument or told by an agent: no log's)
        # Each input stored as it is, in its own session at its own time, unless it shares a
        # moment with a new one: the turns of a moment are matched together, in their order.
        before = {r.content_hash: (r.session, r.source, r.said_at) for r in raws if r.content_hash in known}
        new_moments = {moment(r.said_at) for r in rest}
        sharing = [r for r in raws if moment(r.said_at) in new_moments]
        places = self.store.forgotten_places(sharing)  # (read once: for the pairing and the cut)
        before.update(self.store.said_before(sharing, places))
        if len(raws) == 1:
            # A lone line is the stored one only at its own place in its moment: `tail -n1` of a
            # log whose minute holds a second "ok" cannot be told from a pipe of the first, and
            # a wrong "already stored" loses it, where storing it again only repeats it.
            lone = raws[0]
            if lone.content_hash in before and place(before[lone.content_hash][2]) != place(lone.said_at):
                del before[lone.content_hash]
        goes_on = {r.session for r in raws if r.content_hash in before}
        gone = gone | self._cut_and_forgotten(rest, before, gone, goes_on, places)
        sessions: dict[str, list[RawInput]] = {}
        for r in sorted(raws, key=lambda r: r.said_at):
            sessions.setdefault(r.session, []).append(r)
        for group in sessions.values():
            if self._goes_on_from_what_was_stored(group, before, gone):
                known.update(r.content_hash for r in group if r.content_hash in before)
            if group[0].session and len(group) > 1:  # a chat log's turns, once stored with no session
                known.update(r.content_hash for r in group if before.get(r.content_hash, ("-",))[0] == "")
        return known, gone

    def _cut_and_forgotten(
        self,
        rest: list[RawInput],
        before: dict[str, tuple[str, str, datetime]],
        gone: set[str],
        goes_on: set[str],
        places: dict[str, set[int]],
    ) -> set[str]:
        """The ids of new turns that are forgotten ones at another place in their moment: a log
        cut inside a minute numbers its turns there from the cut (`ingest.formats.parse_jsonl`),
        by as many places as the turns of that moment matched with stored ones moved, or, for the
        first turn of its moment in a log that goes on from stored ones (`goes_on`: the sessions
        of the logs with turns known), as many as puts it on the next forgotten one with its
        words (the cut opens on it). A turn said after others at its moment is never moved onto
        an earlier place, nor a new chat's first turn onto a forgotten one: two "Yes" of one day
        in two chats stay two. `places`: `Store.forgotten_places` of them."""
        if not places:
            return set()
        out = set()
        moments: dict[tuple[datetime, str], list[RawInput]] = {}
        for r in sorted(rest, key=lambda r: r.said_at):
            moments.setdefault((moment(r.said_at), r.session), []).append(r)
        for (_, session), turns in moments.items():
            shift = next(
                (
                    place(before[r.content_hash][2]) - place(r.said_at)
                    for r in turns
                    if r.content_hash in before
                ),
                None,
            )
            for n, r in enumerate(turns):
                mine = place(r.said_at)
                unknown = r.id not in gone and r.content_hash not in before
                forgotten = places.get(r.id, set()) if unknown else set()
                later = [p - mine for p in forgotten if p >= mine]
                if shift is None and n == 0 and session in goes_on and later:
                    shift = min(later)
                if shift is not None and mine + shift in forgotten:
                    out.add(r.id)
        return out

    def _goes_on_from_what_was_stored(
        self, group: list[RawInput], before: dict[str, tuple[str, str, datetime]], gone: set[str]
    ) -> bool:
        """Whether `group` (a session's inputs, in the order said) is what was stored before or
        goes on from it: its first inputs are stored ones or the same words by the same speaker
        at the same moments as stored ones (`before`), the rest none, and in each stored session
        those are its last inputs, and either all of it or (a log cut inside it: `tail`) the
        group's first. So a log stored whole (renamed, piped again under another `-s`), a log
        grown since (piped again each night, a journal with a new entry), `tail` with lines
        stored before and a log whose parts were piped apart store only what is new; a
        conversation that opens as another did ("Hi", at a day's noon) but goes on otherwise, a
        day two journals share, or a copy with an entry edited is new. (A chat that opens, in
        one minute, on the words another ended on, by the same speaker, is taken for that chat's
        tail: from the words alone the two cannot be told apart, and a nightly `tail` cutting
        there is the common case; a turn stored twice would have every later log stored again.)
        One input alone from the same source is its own ("Yes." typed in two
        sessions at one time is two). Its inputs the user forgot (`gone`) are not stored again,
        and the rest goes on from what was left."""
        if len(group) == 1 and before.get(group[0].content_hash, ("", "", None))[1] == group[0].source:
            return False
        group = [r for r in group if r.id not in gone]  # (forgotten: a log goes on from the rest)
        matched = [r for r in group if r.content_hash in before]
        if not matched or matched != group[: len(matched)]:
            return False
        if any(before[r.content_hash][0] == "" for r in matched):
            if group[0].session:  # (a log's turns stored with no session: known turn by turn)
                return False
            # A journal piped with no session: its entries stored so are each the same input
            # (known by their words, date and source); the rest of what it shares decides.
            matched = [r for r in matched if before[r.content_hash][0] != ""]
        stored: dict[str, list[RawInput]] = {}
        for r in matched:
            stored.setdefault(before[r.content_hash][0], []).append(r)
        for session, turns in stored.items():
            if self.store.said_since(session, before[turns[0].content_hash][2]) != len(turns):
                return False  # not its last inputs
            cut = turns == matched[: len(turns)]
            if not cut and self.store.said_in(session) != len(turns):
                return False  # neither all of it nor a log cut inside it
        return True

    # -- the whole pipeline ---------------------------------------------------------------

    def add(
        self,
        raws: Sequence[RawInput],
        *,
        extract: bool = True,
        progress: Progress | None = None,
        on_stored: Callable[[], None] | None = None,
    ) -> AddReport:
        report = AddReport()
        report.repaired = self.finish_interrupted()
        claim = extract and self.llm is not None
        new, report.already_stored, report.forgotten = self.persist(raws, claim=claim)
        if on_stored:
            on_stored()  # every input is on disk: what fails from here on loses nothing
        report.stored = len(new)
        report.raw_ids = [r.id for r in new]
        todo = [r for r in new if r.status == PENDING]
        if self.embed_problem:  # reconciling needs vectors too: everything waits for the embedder
            report.llm_error = self.embed_problem
        elif extract and todo:
            self._extract_all(todo, report, progress)
        # This run's inputs only: a concurrent `dcpm add` has pending inputs of its own.
        report.pending = len(todo) - report.extracted - report.failed
        if not report.interrupted and not self.store.grouped:  # in a group: at its flushes
            self.store.maintain()  # compaction and indices when due; a few ms when nothing is
        return report

    def extract(self, raws: Sequence[RawInput]) -> AddReport:
        """Extract these stored inputs, the ones still pending (the MCP server's background
        worker: it stored them itself a moment before)."""
        report = AddReport()
        todo = [r for r in raws if r.status == PENDING]
        self._extract_all(todo, report, None)
        report.pending = len(todo) - report.extracted - report.failed
        if not self.store.grouped:  # in a group: at its flushes
            self.store.maintain()
        return report

    def process_pending(
        self,
        *,
        limit: int | None = None,
        progress: Progress | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> AddReport:
        """Extract every pending (or failed) input, oldest first; `stop` (a dream's budget) is
        asked before each input, and the rest stay pending once it says so."""
        report = AddReport()
        report.repaired = self.finish_interrupted()
        try:
            self.fill_vectors()  # reconciling needs them; an embedder still down stops it here
        except EMBEDDER_FAILURES as e:
            report.llm_error = _embedder_failed(e)
            report.pending = self.store.count_by_kind("raw").get(PENDING, 0)
            return report
        todo = self.store.raw_by_status([PENDING, FAILED], limit)
        self._extract_all(todo, report, progress, stop)
        report.pending = self.store.count_by_kind("raw").get(PENDING, 0)
        if not report.interrupted:
            self.store.maintain()
        return report

    def _extract_all(
        self,
        todo: list[RawInput],
        report: AddReport,
        progress: Progress | None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        todo = sorted(todo, key=lambda r: (r.said_at, r.created_at))
        # Many inputs: their derived writes are committed in groups (store/staging.py); one is
        # committed step by step (`Writer.group` keeps a group open across calls).
        with self.store.group() if len(todo) > 1 else contextlib.nullcontext():
            try:
                self._extract_claimed(todo, report, progress, stop)
            finally:
                self.claims.release()

    def _extract_claimed(
        self,
        todo: list[RawInput],
        report: AddReport,
        progress: Progress | None,
        stop: Callable[[], bool] | None,
    ) -> None:
        llm = self.llm
        for n, listed in enumerate(todo, 1):
            if llm is None or (stop is not None and stop()):
                break
            raw = listed if listed.id in self.claims else self.claims.claim(listed)
            if raw is None:  # finished, or being extracted, by another process
                if progress:
                    progress(n, len(todo))
                continue
            before = replace(llm.usage)
            try:
                outcome = self.process_one(raw)
            except KeyboardInterrupt:
                # Ctrl-C: stop between writes and report what was done; this input and the
                # rest stay pending for `dcpm process`.
                report.interrupted = True
                break
            except LLMUnavailable as e:
                # Stop here: the rest stay pending rather than each waiting for a dead server.
                self._set_status(raw.id, PENDING, e.message, raw.attempts + 1)
                waiting = [r.id for r in todo[n:] if r.status == PENDING]  # a failed one keeps its why
                self.store.note_raw_error(waiting, f"not tried yet: {e.message}")
                report.llm_error = e.message + (f" ({e.hint})" if e.hint else "")
                break
            except LLMError as e:
                self._set_status(raw.id, FAILED, e.message, raw.attempts + 1)
                report.failed += 1
                report.absorb(InputOutcome(raw.id, FAILED, error=e.message))
            else:
                report.extracted += 1
                report.absorb(outcome)
            finally:
                report.llm_calls += llm.usage.calls - before.calls
                report.prompt_tokens += llm.usage.prompt_tokens - before.prompt_tokens
                report.completion_tokens += llm.usage.completion_tokens - before.completion_tokens
            if progress:
                progress(n, len(todo))

    def _set_status(self, raw_id: str, status: str, error: str, attempts: int) -> None:
        """A failure's status, unless another process has finished the input meanwhile."""
        with self.store.write(Write.GROUP):
            self.store.set_raw_status(raw_id, status, error, attempts, unless=FINISHED)

    # -- steps 2–4 for one input ----------------------------------------------------------

    def process_one(self, raw: RawInput) -> InputOutcome:
        assert self.llm is not None
        history = extract.conversation(
            self.store.recent_raw(raw.session, raw.said_at, self.settings.history_window),
            raw.said_at,
            timedelta(minutes=self.settings.history_gap_minutes),
        )
        near = self.store.nearest_items(self._embed([said_words(raw.text)])[0], extract.KNOWN_ATTRIBUTES)
        known = extract.offered_attributes(near, self.settings.recall_min_similarity)
        found = extract.ask(
            self.llm,
            raw,
            history,
            known,
            retries=self.settings.llm_retries,
            ask_ended=self.settings.named_ends,
            zone=self.settings.zone,
        )
        outcome = InputOutcome(raw.id, DONE)
        grounded, outcome.rejected = extract.ground(found, raw.text, history)
        items = [extract.to_item(raw, i, x, self.settings.zone) for i, x in grounded]

        # Exact duplicates of current beliefs (or of each other) are dropped without a call.
        existing = self.store.current_items_by_hash([i.content_hash for i in items])
        seen: set[str] = set()
        kept = []
        for item in items:
            if item.content_hash in existing or item.content_hash in seen:
                outcome.duplicates += 1
            else:
                seen.add(item.content_hash)
                kept.append(item)
        if not kept:
            # Nothing new: covered by existing items (DONE), or nothing extracted at all, in
            # which case the words themselves remain what recall finds (NO_ITEMS).
            status = DONE if items else NO_ITEMS
            with self.store.write(Write.GROUP), self.store.staging():
                self.store.set_raw_status(raw.id, status, "", raw.attempts + 1)
            outcome.status = status
            return outcome

        vectors = self._embed([i.text for i in kept])
        # With named ends on: what the input says each item took the place of, in its words,
        # and their vectors. Off, a model's `instead_of` is not read (nor embedded).
        ended: list[tuple[str, np.ndarray | None]] = []
        if self.settings.named_ends:
            said = set(words(raw.text))
            pairs = zip(grounded, items, strict=True)
            named = {item.id: extract.ended_words(x, said) for (_, x), item in pairs}
            phrases = [named[i.id] for i in kept]
            said_ended = [p for p in phrases if p]
            phrase_vectors = iter(self._embed(said_ended) if said_ended else [])
            ended = [(p, next(phrase_vectors) if p else None) for p in phrases]
        plan = reconcile.plan(
            kept,
            vectors,
            store=self.store,
            llm=self.llm,
            settings=self.settings,
            similar=self._similar,
            said_at=raw.said_at,
            words=raw.text,
            ended=ended,
        )
        self.checkpoint("reconciled")
        if self.settings.no_supersedes:  # the paper's ablation: no chains, a change of mind is new
            plan = [Plan("ADD") if p.op == "SUPERSEDE" else p for p in plan]
        with self.store.write(Write.GROUP):
            # Still our claim: no other process has taken the input over, so none finished it.
            if not self.claims.still_ours(raw.id):
                current = self.store.get_raw([raw.id]).get(raw.id)
                if current is None:  # forgotten meanwhile (`dcpm forget` drops its claims)
                    return InputOutcome(raw.id, NO_ITEMS, error="forgotten while it was extracted")
                if current.status in FINISHED:
                    return InputOutcome(raw.id, current.status, new_input=False)  # another process did it
            # Staged in a group (committed with the group's other inputs); else committed step
            # by step under a marker: a crash between the steps leaves it, and the next write
            # command (or `dcpm check --repair`) relinks what it cut.
            with self.store.staging():
                marker = self.store.unfinished("upsert", raw_id=raw.id) if not self.store.grouped else None
                with marker or contextlib.nullcontext():
                    self._apply(raw, kept, vectors, plan, outcome)
                    self.store.set_raw_status(raw.id, DONE, "", raw.attempts + 1)
        return outcome

    def _apply(
        self,
        raw: RawInput,
        kept: list[MemoryItem],
        vectors: np.ndarray,
        plan: list[Plan],
        out: InputOutcome,
    ) -> None:
        """Write in an order that a crash leaves repairable: new items (with `supersedes`)
        first, then updates, then back-pointers (`repair_chains` restores missing ones), then
        the log."""
        new_items: list[MemoryItem] = []
        new_rows: list[int] = []
        links: list[tuple[str, str]] = []
        updates: dict[str, MemoryItem] = {}
        events: list[Event] = []
        heads: dict[str, MemoryItem] = {}  # old id → the newest item of its chain so far
        self._fresh_ids(raw, kept)
        for i, (item, p) in enumerate(zip(kept, plan, strict=True)):
            for j in p.judged:  # every question asked, so that the dream never asks it again
                events.append(Event(JUDGED, item.id, raw.id, j.target.id, detail=j.detail()))
                if j.refusal:
                    out.rejected.append(j.refusal)
                    events.append(Event("REJECTED", item.id, raw.id, j.target.id, detail=j.refusal))
            if p.op == "DUPLICATE":
                out.duplicates += 1
                continue
            if p.op == "UPDATE" and p.target is not None:
                t = updates.get(p.target.id) or self._fresh(p.target)
                if t is None or not t.is_current:
                    p = Plan("ADD")
                else:
                    text = _merged(t.text, p, item)
                    events.append(Event("UPDATE", t.id, raw.id, item.id, t.text, text))
                    t.text, t.updated_at = text, utcnow()
                    t.raw_ids = [*t.raw_ids, raw.id] if raw.id not in t.raw_ids else t.raw_ids
                    updates[t.id] = t
                    out.updated.append(t.id)
                    continue
            if p.op == "SUPERSEDE" and p.target is not None:
                head = heads.get(p.target.id) or self._fresh_head(p.target.id) or p.target
                if why := reconcile.said_before(item, raw.said_at, head):
                    out.rejected.append(why)
                    events.append(Event("REJECTED", item.id, raw.id, head.id, detail=why))
                    p = Plan("ADD")
            if p.op == "SUPERSEDE" and p.target is not None:
                old_id = head.id
                item.supersedes = old_id
                links.append((old_id, item.id))
                heads[p.target.id] = item
                events.append(Event("SUPERSEDE", item.id, raw.id, old_id, "", item.text))
                out.superseded.append((old_id, item.id))
            else:
                events.append(Event("ADD", item.id, raw.id, "", "", item.text))
            new_items.append(item)
            new_rows.append(i)
            out.added.append(item.id)
        self.store.add_items(new_items, vectors[new_rows])
        self.checkpoint("items")
        if updates:
            changed = list(updates.values())
            self.store.log_events([e for e in events if e.op == "UPDATE"])  # before the overwrite
            self.store.replace_items(changed, self._embed([t.text for t in changed]))
        self.checkpoint("updates")
        # Back-pointers after updates: an updated row is written whole, and the same input may
        # also supersede it.
        for old_id, new_id in links:
            self.store.set_superseded_by(old_id, new_id)
        self.checkpoint("links")
        self.store.log_events([e for e in events if e.op != "UPDATE"])

    def _fresh_ids(self, raw: RawInput, kept: list[MemoryItem]) -> None:
        """An id already taken by a different item (an earlier extraction of this input that
        said something else) is never reused: the new item gets an id of its own content."""
        taken = self.store.get_items([i.id for i in kept])
        for item in kept:
            other = taken.get(item.id)
            if other is not None and other.content_hash != item.content_hash:
                item.id = "m_" + short_hash(raw.id, item.content_hash)

    def _fresh(self, item: MemoryItem) -> MemoryItem | None:
        return self.store.get_items([item.id]).get(item.id)

    def _fresh_head(self, item_id: str) -> MemoryItem | None:
        """The current end of the chain through `item_id` (another writer may have moved it)."""
        return self.store.head(item_id)


def _merged(fresh: str, p: Plan, item: MemoryItem) -> str:
    """The text an UPDATE writes, from the row as it is now (read under the lock): the
    judgement's merge when the row is what that call saw, else the fresh text with the
    new item's text added (another writer, or an earlier UPDATE of this input, changed it)."""
    seen = p.target.text if p.target is not None else fresh
    if fresh == seen or normalise(fresh) in normalise(p.text):
        return p.text
    if normalise(item.text) in normalise(fresh):
        return fresh
    return f"{fresh.rstrip().rstrip(';.')}; {item.text}"
