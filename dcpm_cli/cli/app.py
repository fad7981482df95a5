"""The `dcpm` command: parse → call one core function → render. Nothing heavy is imported here
at module level, so `dcpm --help` and shell completion stay instant."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from dcpm_cli.errors import DcpmError

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
            from dcpm_cli.config import dcpm_home
            from dcpm_cli.store import Store

            self._store = Store(
                self.settings.store, self.get_embedder(), state_dir=dcpm_home(), create=create
            )
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
        from dcpm_cli.write.pipeline import Writer

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
