"""The `dcpm` command: parse → call one core function → render. Nothing heavy is imported here
at module level, so `dcpm --help` and shell completion stay instant."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from dcpm_cli.errors import DcpmError
from dcpm_cli.ingest import Format

if TYPE_CHECKING:
    from dcpm_cli.config import Settings
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.store import Store


class _Group(TyperGroup):
    """Expected failures become a message, a hint and a stable exit code, caught only here."""

    def invoke(self, ctx: Any) -> Any:
        from dcpm_cli.private import owner_only

        try:
            _utf8_args()
            with owner_only():  # what dcpm writes is for its user alone
                return super().invoke(ctx)
        except DcpmError as e:
            from dcpm_cli import render

            if e.exit_code == 0:  # not a failure: e.g. nothing stored yet
                render.note(e.message + (f"; {e.hint}" if e.hint else ""))
            else:
                render.error(e.message, e.hint)
            raise typer.Exit(e.exit_code) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


def _utf8_args() -> None:
    """Refuse an argument that is not UTF-8 (Python hands its bytes on as lone surrogates,
    which fail later, deep in a write, as a traceback): every word on the command line."""
    from dcpm_cli.errors import InputError

    for arg in sys.argv[1:]:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            raise InputError(
                f"an argument is not UTF-8 text: {shown[:60]!r}", "convert it, e.g. with iconv -t UTF-8"
            ) from None


app = typer.Typer(
    name="dcpm",
    cls=_Group,
    help="Dual-Process Cognitive Memory: a local long-term memory that never loses what you said.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Exit codes (stable, documented in the README).
EXIT_OK, EXIT_ERROR, EXIT_INPUT, EXIT_LLM, EXIT_STORE, EXIT_BUSY = 0, 1, 2, 3, 4, 5

# The paper's "without supersedes" ablation, one settings key (DCPM_NO_SUPERSEDES) for every command.
NoSupersedes = Annotated[
    bool,
    typer.Option(
        "--no-supersedes",
        help="Ablation: no revision chains (a change of mind is stored as a new item; recall shows no arcs). "
        "Also DCPM_NO_SUPERSEDES=1.",
    ),
]


@dataclass
class Session:
    """What one command needs, built lazily; tests may preset `llm` or `embedder`."""

    flags: dict[str, Any] = field(default_factory=dict)
    llm: LLM | None = None
    embedder: Embedder | None = None
    _settings: Settings | None = None
    _store: Store | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from dcpm_cli.config import Settings

            self._settings = Settings.resolve(**self.flags)
        return self._settings

    def get_embedder(self) -> Embedder:
        if self.embedder is None:
            from dcpm_cli.embed import get_embedder

            self.embedder = get_embedder(self.settings.embedder)
        return self.embedder

    def store(self, *, create: bool = True) -> Store:
        if self._store is None:
            from dcpm_cli.store import Store

            self._store = Store(self.settings.store, self.get_embedder(), create=create)
        return self._store

    def store_or_none(self) -> Store | None:
        """The store, or None when nothing was ever stored (reads must not create one)."""
        from dcpm_cli.errors import StoreMissing

        try:
            return self.store(create=False)
        except StoreMissing:
            return None

    def ablate(self, no_supersedes: bool) -> Session:
        """A command's --no-supersedes flag, over DCPM_NO_SUPERSEDES and the config file."""
        if no_supersedes:
            self.flags["no_supersedes"] = True
        return self

    def get_llm(self) -> LLM:
        if self.llm is None:
            from dcpm_cli.llm import get_llm

            self.llm = get_llm(self.settings.llm, timeout=self.settings.llm_timeout)
        return self.llm

    def writer(self, *, llm: bool = True) -> Any:
        from dcpm_cli.writer import Writer

        # --no-extract must work with no LLM configured (or a misconfigured one).
        return Writer(self.store(), self.get_embedder(), self.get_llm() if llm else None, self.settings)


def _session(ctx: typer.Context) -> Session:
    return ctx.find_root().obj


@app.callback()
def root(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            envvar="DCPM_STORE",
            help="Store location: a path or LanceDB URI (default: $DCPM_HOME/store).",
            show_default=False,
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            envvar="DCPM_EMBEDDER",
            help="minilm (default), minilm-int8, st:<path>, ollama:<model>.",
        ),
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option("--llm", envvar="DCPM_LLM", help="ollama:<model> (default: ollama:qwen3:4b)."),
    ] = None,
    llm_timeout: Annotated[
        float | None,
        typer.Option("--llm-timeout", envvar="DCPM_LLM_TIMEOUT", help="Seconds per LLM call (default: 120)."),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help="Show the version and exit.")] = False,
) -> None:
    """Dual-Process Cognitive Memory: a local long-term memory that never loses what you said."""
    if version:
        from dcpm_cli import __version__

        typer.echo(f"dcpm {__version__}")
        raise typer.Exit()
    preset = ctx.obj if isinstance(ctx.obj, dict) else {}
    # Only what was typed is a flag: config.py resolves the environment (and says so).
    given = {"store": store, "embedder": embedder, "llm": llm, "llm_timeout": llm_timeout}
    typed = {k for k in given if getattr(ctx.get_parameter_source(k), "name", "") == "COMMANDLINE"}
    ctx.obj = Session(
        flags={k: v for k, v in given.items() if k in typed},
        llm=preset.get("llm"),
        embedder=preset.get("embedder"),
    )


@app.command()
def add(
    ctx: typer.Context,
    text: Annotated[
        str | None, typer.Argument(help="What to remember; '-' reads stdin.", show_default=False)
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Read inputs from a file.")] = None,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format", help="Input format (auto detects JSONL, dated Markdown, ChatGPT/Claude exports)."
        ),
    ] = Format.auto,
    session: Annotated[
        str | None,
        typer.Option("--session", "-s", help="Session id (default: the file name, else none)."),
    ] = None,
    at: Annotated[
        str | None, typer.Option("--at", help="When it was said (ISO date/time) (default: now).")
    ] = None,
    role: Annotated[
        str, typer.Option("--role", help="Role of a plain-text input: user, assistant, system.")
    ] = "user",
    no_extract: Annotated[
        bool, typer.Option("--no-extract", help="Store raw only; `dcpm process` extracts later.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """Remember something: raw input is stored first, then facts are extracted and reconciled."""
    from dcpm_cli import ingest, ingest_exports, render
    from dcpm_cli.private import StdinKeeper

    s = _session(ctx).ablate(no_supersedes)
    if file is not None and text is None and (export := ingest_exports.detect(file, fmt.value)):
        with render.progress("conversations", enabled=True) as bar:
            report = ingest_exports.import_file(
                file, export, s.writer(llm=not no_extract), extract=not no_extract, progress=bar
            )
        render.add_report(report, as_json=as_json)
        if report.interrupted:
            render.note(f"the rest of {file.name} was not read: add it again to store the rest")
        _llm_outcome(report)
        return
    kept = StdinKeeper()  # stdin cannot be read twice: kept on disk until it is stored
    try:
        content, source = _read_input(text, file, kept)
        when = ingest.parse_time(at, "--at") if at else None
        sess = session if session is not None else (file.stem if file else "")
        if fmt is Format.auto and file is not None:
            fmt = ingest.default_format_for(file)
        raws = ingest.parse(content, fmt, session=sess, source=source, at=when, role=role)
        with render.progress("extracting", enabled=len(raws) > 1) as bar:
            writer = s.writer(llm=not no_extract)
            report = writer.add(raws, extract=not no_extract, progress=bar, on_stored=kept.stored)
    except BaseException:
        if kept.where():
            render.note(kept.where())
        raise
    render.add_report(report, as_json=as_json)
    _llm_outcome(report)


@app.command()
def process(
    ctx: typer.Context,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="At most this many inputs.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """Extract every input still pending (LLM was down, --no-extract, failures), oldest first."""
    from dcpm_cli import render

    s = _session(ctx).ablate(no_supersedes)
    with render.progress("extracting", enabled=True) as bar:
        report = s.writer().process_pending(limit=limit, progress=bar)
    render.add_report(report, as_json=as_json, verb="processed")
    _llm_outcome(report)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    prompt = "prompt"


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for.", show_default=False)] = None,
    k: Annotated[int, typer.Option("-k", "--top", min=1, max=1000, help="How many memories.")] = 10,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", help="Only these kinds: fact, identity, summary, raw (repeatable)."),
    ] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="What was believed then (ISO date).")] = None,
    arc: Annotated[bool, typer.Option("--arc", help="Show each belief's whole revision arc.")] = False,
    fmt: Annotated[
        OutputFormat, typer.Option("--format", help="table, json or prompt.")
    ] = OutputFormat.table,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    batch: Annotated[
        str | None, typer.Option("--batch", help="Queries from FILE or '-' (stdin), one a line; NDJSON out.")
    ] = None,
    no_supersedes: NoSupersedes = False,
) -> None:
    """Find memories: current beliefs first, each with its arc; never calls an LLM."""
    from dcpm_cli import ingest, render
    from dcpm_cli.errors import InputError
    from dcpm_cli.models import ITEM_KINDS
    from dcpm_cli.recall import recall as run_recall

    kinds = kind or None
    for x in kinds or []:
        if x not in (*ITEM_KINDS, "raw"):
            raise InputError(f"unknown kind {x!r}", "use fact, identity, summary or raw")
    when = ingest.parse_as_of(as_of, "--as-of") if as_of else None
    if as_json:
        fmt = OutputFormat.json
    if batch is not None:
        queries = list(_batch_queries(batch))
    elif query is None or not query.strip():
        raise InputError("give a QUERY (or --batch FILE)", 'dcpm recall "what do I eat?"')
    else:
        queries = [query]
    s = _session(ctx).ablate(no_supersedes)
    store = s.store_or_none()
    if store is None and batch is None and fmt is OutputFormat.table:
        render.note('nothing stored yet; add something with: dcpm add "..."')
        return
    embedder = s.get_embedder()
    floor, chains = s.settings.recall_min_similarity, not s.settings.no_supersedes
    for q in queries:
        if store is None:
            result = _empty(q, when)
        else:
            result = run_recall(
                store, embedder, q, k=k, kinds=kinds, as_of=when, min_similarity=floor, chains=chains
            )
            render.warnings(result.warnings)
        if batch is not None or fmt is OutputFormat.json:
            render.print_json(render.recall_dict(result))
        elif fmt is OutputFormat.prompt:
            render.recall_prompt(result)
        else:
            render.recall_table(result, arc=arc)


def _empty(query: str, when: Any) -> Any:
    from dcpm_cli.models import Recall

    return Recall(query=query, hits=[], as_of=when)


def _batch_queries(source: str) -> Any:
    from dcpm_cli import ingest

    text = sys.stdin.read() if source == "-" else ingest.read_file(Path(source))
    return (line.strip() for line in text.splitlines() if line.strip())


@app.command()
def history(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A query, or an item id (m_...).", show_default=False)],
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="How many beliefs, for a query.")] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    no_supersedes: NoSupersedes = False,
) -> None:
    """The full revision arc of a belief: each state, when, where it came from, what replaced it."""
    from dcpm_cli import render
    from dcpm_cli.recall import arcs

    s = _session(ctx).ablate(no_supersedes)
    store = s.store_or_none()
    if store is None and not as_json:
        render.note('nothing stored yet; add something with: dcpm add "..."')
        return
    floor, chains = s.settings.recall_min_similarity, not s.settings.no_supersedes
    result = []
    if store is not None:
        result = arcs(store, s.get_embedder(), target, k=k, min_similarity=floor, chains=chains)
    if as_json:
        render.print_json([render.arc_dict(a) for a in result])
    else:
        render.arcs_timeline(result, target)


@app.command()
def show(
    ctx: typer.Context,
    ident: Annotated[str, typer.Argument(metavar="ID", help="An item (m_), raw input (r_) or node id.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One item, raw input or graph node, with provenance, event log and links."""
    from dcpm_cli import render
    from dcpm_cli.recall import describe

    store = _session(ctx).store_or_none()
    if store is None:
        from dcpm_cli.errors import InputError

        raise InputError(f"no item, input or node with id {ident!r}", "nothing is stored yet")
    detail = describe(store, ident)
    if as_json:
        render.print_json(detail)
    else:
        render.detail(detail)


@app.command()
def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per kind, chains, pending inputs, graph nodes, dream runs, size on disk."""
    from dcpm_cli import render
    from dcpm_cli.recall import empty_stats, store_stats

    s = _session(ctx)
    store = s.store_or_none()
    if store is None:
        render.note('nothing stored yet; add something with: dcpm add "..."')
        if as_json:  # the same object, empty: a script's jq still parses
            render.print_json(empty_stats(s.settings.store, s.get_embedder().model_id))
        return
    figures = store_stats(store)
    if as_json:
        render.print_json(figures)
    else:
        render.stats(figures)


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check the setup: where the store is, which embedder, whether the LLM answers."""
    from dcpm_cli import render
    from dcpm_cli.llm import probe

    s = _session(ctx)
    problem = probe(s.settings.llm)
    report = {
        "store": s.settings.store,
        "embedder": s.settings.embedder,
        "llm": s.settings.llm,
        "llm_ok": not problem,
        "llm_problem": problem,
    }
    if as_json:
        render.print_json(report)
    else:
        render.doctor(report)
    if problem:
        raise typer.Exit(EXIT_LLM)


def _llm_outcome(report: Any) -> None:
    from dcpm_cli import render

    if report.interrupted:
        render.note(f"interrupted: {report.pending} input(s) still pending; `dcpm process` goes on")
        raise typer.Exit(130)
    if report.llm_error:
        render.note(
            f"extraction pending for {report.pending} input(s): {report.llm_error}. "
            "Your inputs are stored; run `dcpm process` when the LLM is back."
        )
        raise typer.Exit(EXIT_LLM)
    if report.failed:
        why = next((o.error for o in report.outcomes if o.error), "")
        render.note(
            f"{report.failed} input(s) failed extraction ({why}); they are stored, and "
            "`dcpm process` retries them."
        )
        raise typer.Exit(EXIT_LLM)


def _read_input(text: str | None, file: Path | None, kept: Any) -> tuple[str, str]:
    from dcpm_cli import ingest
    from dcpm_cli.config import dcpm_home
    from dcpm_cli.errors import InputError

    if file is not None and text is not None:
        raise InputError("give either TEXT or --file, not both")
    if file is not None:
        return ingest.read_file(file), file.name
    if text == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("'-' reads stdin, but nothing is piped in", "cat notes.txt | dcpm add -")
        data = sys.stdin.buffer.read()
        kept.keep(data, dcpm_home() / "rejected")
        try:
            return data.decode("utf-8"), "stdin"
        except UnicodeDecodeError as e:
            raise InputError("stdin is not UTF-8 text") from e
    if text is None:
        raise InputError("nothing to add", 'dcpm add "text", dcpm add - (stdin) or dcpm add --file PATH')
    return text, "cli"


def main() -> None:
    app()


from dcpm_cli import cli_bench  # noqa: E402,F401  (registers bench)
from dcpm_cli import cli_check as _cli_check  # noqa: E402,F401  (registers check)
from dcpm_cli import cli_control as _cli_control  # noqa: E402,F401  (registers forget, export, import, reembed, backup, config)
from dcpm_cli import cli_dream as _cli_dream  # noqa: E402,F401  (registers dream, schemas)
from dcpm_cli import cli_mcp as _cli_mcp  # noqa: E402,F401  (registers mcp)
