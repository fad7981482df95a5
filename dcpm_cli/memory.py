"""Memory: the application service every front end calls (the CLI, the MCP server, scripts).

Built from `Settings`, it opens the store, the embedder and the LLM only when a call needs
them, validates what a user or an agent gives it once, and returns model objects; `views`
shapes them as JSON and `render` prints them. It never prints and never exits. Nothing heavy is
imported at module level, so `dcpm --help` does not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import InputError, StoreMissing
from dcpm_cli.models import ITEM_KINDS, RAW

if TYPE_CHECKING:
    from dcpm_cli.config import DreamOptions, Settings
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.models import AddReport, RawInput, Recall
    from dcpm_cli.ops.check import CheckReport
    from dcpm_cli.ops.forget import ForgetPlan, ForgetReport
    from dcpm_cli.ops.links import Linked
    from dcpm_cli.store import Store

Progress = Callable[[int, int], None]


class Memory:
    """One user's memory; `llm` and `embedder` may be given ready-made (a test's scripted LLM,
    the MCP server's serialised embedder), else they are made from the settings when needed."""

    def __init__(self, settings: Settings, *, llm: LLM | None = None, embedder: Embedder | None = None):
        self.settings = settings
        self._llm, self._embedder = llm, embedder
        self._store: Store | None = None
        self._recorded_store: Store | None = None  # see store_as_recorded

    # -- what it is made of, opened lazily -------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from dcpm_cli.embed import get_embedder

            self._embedder = get_embedder(self.settings.embedder)
        return self._embedder

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            from dcpm_cli.llm import get_llm

            self._llm = get_llm(self.settings.llm, timeout=self.settings.llm_timeout)
        return self._llm

    def store(self, *, create: bool = True) -> Store:
        if self._store is None:
            from dcpm_cli.config import dcpm_home
            from dcpm_cli.store import Store

            state = dcpm_home()  # a lease's owner file, staged logs of a store on object storage
            self._store = Store(self.settings.store, self.embedder, state_dir=state, create=create)
        return self._store

    def store_as_recorded(self) -> Store:
        """The store, opened as the embedder its vectors were made by, whichever is configured:
        for what embeds nothing with it (a backup, an export, the move to another embedder,
        which a mismatch's own hint asks for). The configured embedder is not even built (an
        Ollama one that is down must not stop a backup)."""
        if self._recorded_store is None:
            from dcpm_cli.config import dcpm_home
            from dcpm_cli.embed import Recorded
            from dcpm_cli.store import Store, recorded_embedder

            recorded = recorded_embedder(self.settings.store)
            if recorded is None:
                return self.store(create=False)  # no store yet: said as usual
            self._recorded_store = Store(
                self.settings.store, Recorded(*recorded), state_dir=dcpm_home(), create=False
            )
        return self._recorded_store

    @property
    def nothing_stored(self) -> str:
        """What a command that needs a store says without one: where it looked, so a cron line
        that lost its DCPM_HOME says so instead of passing for a quiet night."""
        return f'nothing stored yet at {self.settings.store}; add something with: dcpm add "..."'

    def store_or_none(self) -> Store | None:
        """The store, or None when nothing was ever stored (reads must not create one)."""
        try:
            return self.store(create=False)
        except StoreMissing:
            return None

    @property
    def chains(self) -> bool:
        """Revision chains, unless the no-supersedes ablation is on."""
        return not self.settings.no_supersedes

    # -- System 1 ---------------------------------------------------------------------------

    def writer(self, *, llm: bool = True) -> Any:
        from dcpm_cli.write.pipeline import Writer

        # Storing raw only must work with no LLM configured (or a misconfigured one).
        return Writer(self.store(), self.embedder, self.llm if llm else None, self.settings)

    def add(
        self,
        raws: list[RawInput],
        *,
        extract: bool = True,
        progress: Progress | None = None,
        on_stored: Callable[[], None] | None = None,
        journal: bool = False,
        chat_export: bool = False,
    ) -> AddReport:
        """Store the inputs (raw first, always), then extract and reconcile them unless not
        `extract`. `journal`: they are a journal file's entries, whose edited ones replace
        their old words; `chat_export`: a chat export's messages (WhatsApp's), whose edited
        ones do."""
        from dcpm_cli.ingest.text import refuse_binary

        for raw in raws:  # every front end comes through here, whatever parsed its words
            refuse_binary(raw.text, f"input from {raw.source or 'the caller'}")
        writer = self.writer(llm=extract)
        report = writer.add(raws, extract=extract, progress=progress, on_stored=on_stored)
        if journal:
            from dcpm_cli.write.batches import replace_edited_entries

            replace_edited_entries(writer, raws)
        if chat_export:
            from dcpm_cli.write.batches import replace_edited_messages

            replace_edited_messages(writer, raws)
        return report

    def process(self, *, limit: int | None = None, progress: Progress | None = None) -> AddReport:
        """Extract the inputs still pending, oldest first."""
        return self.writer().process_pending(limit=limit, progress=progress)

    # -- the read path: never an LLM --------------------------------------------------------

    def recall_filters(
        self, kinds: Iterable[str] | None, as_of: str | datetime | None, *, option: str = "as_of"
    ) -> tuple[list[str] | None, datetime | None]:
        """The kinds and the as-of time of a recall, checked (a time without an offset is the
        user's); `option` names the as-of field in an error (`--as-of` on the command line)."""
        from dcpm_cli.ingest.text import parse_as_of

        wanted = list(kinds or []) or None
        for x in wanted or []:
            if x not in (*ITEM_KINDS, RAW):
                raise InputError(f"unknown kind {x!r}", "use fact, identity, summary or raw")
        when = (
            parse_as_of(as_of, option, self.settings.zone) if isinstance(as_of, str) else as_of
        )  # "" is no time
        return wanted, when

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        kinds: Iterable[str] | None = None,
        as_of: str | datetime | None = None,
        option: str = "as_of",
    ) -> Recall:
        """Current beliefs first, each with its arc, above the similarity floor; nothing stored
        yet is an empty result."""
        from dcpm_cli.models import Recall

        wanted, when = self.recall_filters(kinds, as_of, option=option)
        store = self.store_or_none()
        if store is None:
            return Recall(query=query, hits=[], as_of=when, zone=self.settings.timezone)
        from dcpm_cli.read.recall import recall

        return recall(
            store, self.embedder, query, k=k, kinds=wanted, as_of=when,
            min_similarity=self.settings.recall_min_similarity, chains=self.chains,
            zone=self.settings.zone, date_order=self.settings.date_order, me=self.settings.me,
        )  # fmt: skip

    def history(self, target: str, *, k: int = 3) -> list[list[Any]]:
        """The revision arcs of an item id, or of the beliefs a query finds."""
        store = self.store_or_none()
        if store is None:
            return []
        from dcpm_cli.read.recall import arcs

        return arcs(
            store, self.embedder, target, k=k,
            min_similarity=self.settings.recall_min_similarity, chains=self.chains,
        )  # fmt: skip

    def link(self, earlier: str, later: str) -> tuple[Linked, list[list[Any]]]:
        """The user's own judgement: `later`'s arc goes on from `earlier`'s. Returns what was
        joined and the arc it made."""
        from dcpm_cli.ops.links import link

        store = self._store_for_links(earlier)
        done = link(store, earlier.strip(), later.strip(), self.settings.zone)
        return done, self._arcs_of(store, [done.later.id])

    def unlink(self, ident: str) -> tuple[Linked, list[list[Any]]]:
        """The user's own judgement: `ident` no longer replaces the state before it. Returns
        what was cut and the two arcs left."""
        from dcpm_cli.ops.links import unlink

        store = self._store_for_links(ident)
        done = unlink(store, ident.strip())
        return done, self._arcs_of(store, [done.earlier.id, done.later.id])

    def _store_for_links(self, ident: str) -> Store:
        """The store, opened as recorded (nothing is embedded); none yet is an unknown id."""
        if self.store_or_none() is None:
            raise InputError(f"no item with id {ident.strip()!r}", "nothing is stored yet")
        return self.store_as_recorded()

    @staticmethod
    def _arcs_of(store: Store, ids: list[str]) -> list[list[Any]]:
        from dcpm_cli.read.recall import arc_states, distinct_chains

        return arc_states(store, distinct_chains(store, ids))

    def show(self, ident: str) -> dict[str, Any]:
        """One item, raw input or graph node, with its provenance, events and links."""
        store = self.store_or_none()
        if store is None:
            raise InputError(f"no item, input or node with id {ident!r}", "nothing is stored yet")
        from dcpm_cli.read.recall import describe

        return describe(store, ident)

    def stats(self) -> dict[str, Any]:
        """Counts per kind, chains, pending inputs, graph nodes, dream runs, size on disk (the
        same object, empty, before anything is stored)."""
        from dcpm_cli.read.recall import empty_stats, store_stats

        store = self.store_or_none()
        if store is None:
            return empty_stats(self.settings.store, self.embedder.model_id)
        return store_stats(store)

    def schemas(self, *, kinds: Iterable[str] | None = None, domain: str | None = None) -> dict[str, Any]:
        """What dreams built: nodes by kind and domain, their links, the text of core members."""
        store = self.store_or_none()
        if store is None:
            return {"counts": {}, "nodes": [], "links": [], "member_text": {}}
        from dcpm_cli.dream.overview import graph_overview

        return graph_overview(store, kinds=[str(k) for k in kinds or []], domain=domain)

    # -- System 2 ---------------------------------------------------------------------------

    def dream(
        self,
        opts: DreamOptions,
        *,
        progress: Progress | None = None,
        log: Callable[[str], None] | None = None,
    ) -> Any:
        """One dream (or its plan): the store checked and repaired first, pending inputs
        extracted within the same budget. None when nothing is stored yet."""
        store = self.store_or_none()
        if store is None:
            return None
        from dcpm_cli.dream.run import dream
        from dcpm_cli.ops.check import check

        llm = None if opts.dry_run or opts.mode == "lite" else self.llm
        writer = self.writer() if llm is not None else None
        return dream(
            store, self.embedder, llm, opts, progress=progress, log=log, writer=writer,
            repair=lambda s: check(s, repair=True), settings=self.settings,
        )  # fmt: skip

    def calibrate(self) -> Any:
        from dcpm_cli.dream.run import run_calibration

        return run_calibration(self.store(), self.embedder)

    # -- your memory, your control ----------------------------------------------------------

    def check(self, *, repair: bool = False) -> CheckReport:
        """The store's invariants (every one holds when nothing is stored yet)."""
        from dcpm_cli.ops.check import CheckReport, check

        store = self.store_or_none()
        if store is None:
            return CheckReport(self.settings.store)
        return check(store, repair=repair)

    def plan_forget(
        self, ids: Iterable[str] = (), *, query: str = "", k: int | None = None
    ) -> tuple[ForgetPlan | None, str]:
        """What forgetting these ids, and what recall finds for `query`, would remove and change
        (None when the query finds nothing), and a note of the hits left out. With `k`, the k
        best hits; without, only hits a confident similarity away, so a query for one secret
        does not take two unrelated lines with it. Nothing changes."""
        from dcpm_cli.ops.forget import plan_forget, select_by_query, select_confident

        store = self.store(create=False)
        wanted, note = list(ids), ""
        if query.strip():
            floor = self.settings.recall_min_similarity
            if k is not None:
                wanted += select_by_query(store, self.embedder, query, k=k, min_similarity=floor)
            else:
                chosen = select_confident(store, self.embedder, query, min_similarity=floor)
                wanted += chosen.ids
                if chosen.left_out:
                    note = (
                        f"{chosen.taken} hit(s) at similarity {chosen.threshold} or more taken; "
                        f"{chosen.left_out} weaker hit(s) left out (-k N takes the N best)"
                    )
                if chosen.holding:
                    more = f"{chosen.holding} more input(s) taken for holding every word of the query"
                    note = f"{note}; {more}" if note else more
            if not wanted:
                return None, note
        return plan_forget(store, wanted), note

    def forget(self, plan: ForgetPlan) -> ForgetReport:
        """Carry out a plan: no file, old version or index keeps the text."""
        from dcpm_cli.ops.forget import apply_forget

        return apply_forget(self.store(create=False), plan, self.embedder)

    @contextmanager
    def exporting(self, *, with_vectors: bool = False, progress: Progress | None = None) -> Iterator[Any]:
        """The export's lines, read under the store's lock: one consistent state, writers wait."""
        from dcpm_cli.ops.portability import export_lines

        store = self.store_as_recorded()
        with store.reading():
            yield export_lines(store, with_vectors=with_vectors, progress=progress)

    def import_(self, source: Any, *, progress: Progress | None = None) -> Any:
        """Add an export (a seekable text file) to this store: checked whole before anything is
        stored, so a broken file imports nothing; importing twice changes nothing."""
        from dcpm_cli.ops.portability import check_lines, import_lines

        survey = check_lines(source)
        source.seek(0)
        return import_lines(self.store(), self.embedder, source, progress=progress, survey=survey)

    def backup(self, folder: Path) -> Any:
        from dcpm_cli.ops.backup import backup

        return backup(self.store_as_recorded(), folder)

    def reembed(self, spec: str, *, progress: Progress | None = None) -> Any:
        """Embed the whole store again with the embedder `spec`; it switches only when complete."""
        from dcpm_cli.embed import get_embedder
        from dcpm_cli.ops.reembed import reembed

        store, target = self.store_as_recorded(), get_embedder(spec)
        return reembed(store, target, progress=progress)


__all__ = ["Memory"]
