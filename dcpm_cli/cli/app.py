"""The `dcpm` command: parse → call Memory (dcpm_cli/memory.py) → render. Nothing heavy is
imported here at module level, so `dcpm --help` and shell completion stay instant."""

from __future__ import annotations

import errno
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from dcpm_cli.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, DcpmError

if TYPE_CHECKING:
    from dcpm_cli.config import Settings
    from dcpm_cli.embed import Embedder
    from dcpm_cli.llm import LLM
    from dcpm_cli.memory import Memory


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

            if e.exit_code == EXIT_OK:  # not a failure: e.g. nothing stored yet
                render.note(e.message + (f"; {e.hint}" if e.hint else ""))
            else:
                render.error(e.message, e.hint)
            raise typer.Exit(e.exit_code) from None
        except KeyboardInterrupt:
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except OSError as e:
            # A path the user named that cannot be written (`backup DIR`, `export --out FILE`
            # on a read-only mount, a folder of someone else's): one line, not a traceback. The
            # store's own files have their errors (StoreError, exit 4) before this.
            if e.filename is None or e.errno not in _UNWRITABLE:
                raise
            from dcpm_cli import render

            render.error(f"cannot use {e.filename}: {e.strerror}", "choose a place you can write to")
            raise typer.Exit(EXIT_INPUT) from None


_UNWRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.EISDIR}


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

# The paper's "without supersedes" ablation, one settings key (DCPM_NO_SUPERSEDES) for every command.
# `--json` on the commands that report; a command whose JSON needs its own words declares its own.
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]

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
    """The root command's flags, and what tests preset (`llm`, `embedder`): the Memory every
    command calls is made from them on first use."""

    flags: dict[str, Any] = field(default_factory=dict)
    llm: LLM | None = None
    embedder: Embedder | None = None
    _memory: Memory | None = None

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            from dcpm_cli.config import Settings
            from dcpm_cli.memory import Memory

            settings = Settings.resolve(**self.flags)
            self._memory = Memory(settings, llm=self.llm, embedder=self.embedder)
        return self._memory

    @property
    def settings(self) -> Settings:
        return self.memory.settings


def _session(ctx: typer.Context) -> Session:
    return ctx.find_root().obj


def _memory(ctx: typer.Context, no_supersedes: bool = False) -> Memory:
    """The command's Memory; a command's --no-supersedes flag counts over DCPM_NO_SUPERSEDES
    and the config file."""
    session = _session(ctx)
    if no_supersedes:
        session.flags["no_supersedes"] = True
    return session.memory


def _show_version(value: bool) -> None:
    """`dcpm --version` alone: eager, so it answers before a command is asked for."""
    if value:
        from dcpm_cli import __version__

        typer.echo(f"dcpm {__version__}")
        raise typer.Exit()


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
            help="minilm (default), minilm-int8, mpnet, st:<path>, ollama:<model>.",
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
    version: Annotated[
        bool,
        typer.Option("--version", help="Show the version and exit.", callback=_show_version, is_eager=True),
    ] = False,
) -> None:
    """Dual-Process Cognitive Memory: a local long-term memory that never loses what you said."""
    preset = ctx.obj if isinstance(ctx.obj, dict) else {}
    # Only what was typed is a flag: config.py resolves the environment (and says so).
    given = {"store": store, "embedder": embedder, "llm": llm, "llm_timeout": llm_timeout}
    typed = {k for k in given if getattr(ctx.get_parameter_source(k), "name", "") == "COMMANDLINE"}
    ctx.obj = Session(
        flags={k: v for k, v in given.items() if k in typed},
        llm=preset.get("llm"),
        embedder=preset.get("embedder"),
    )
