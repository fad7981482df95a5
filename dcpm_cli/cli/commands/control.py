"""Your memory, your control: `dcpm forget`, `export`, `import`, `reembed`, `backup`, `config`.

Exit codes: 0 done; 2 bad input (unknown id, a newer export format, forget on a non-terminal
without --yes); 4 store error; 5 another dcpm process holds the store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from dcpm_cli.cli.app import AsJson, _memory, _session, app
from dcpm_cli.errors import EXIT_ERROR


@app.command()
def forget(
    ctx: typer.Context,
    ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="Raw inputs (r_…), items (m_…), nodes (n_…)."),
    ] = None,
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="Forget what `recall` finds for this, and its sources."),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--top",
            min=1,
            max=100,
            help="With --query: the k best hits. Without: only hits a confident similarity away."
            " Either way, every input holding all the query's words too.",
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would go; change nothing.")] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask (needed when not on a terminal).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan / result as JSON.")] = False,
) -> None:
    """Forget for good: the cascade is shown first; no file, old version or index keeps the text."""
    from dcpm_cli import render
    from dcpm_cli.errors import InputError

    m = _memory(ctx)
    plan, note = m.plan_forget(ids or [], query=query or "", k=k)
    if note:
        render.note(note)
    if plan is None:
        render.note(f"nothing found for {query!r}; nothing forgotten")
        return
    if dry_run:
        render.forget_plan(plan, as_json=as_json)
        return
    if not yes:
        if not sys.stdin.isatty():
            raise InputError(
                "forget needs a confirmation, and stdin is not a terminal", "add --yes in scripts"
            )
        render.forget_plan(plan, as_json=False)
        if not typer.confirm("Forget these for good?", default=False):
            raise typer.Exit(EXIT_ERROR)
    render.forget_plan(plan, as_json=as_json, done=m.forget(plan))


@app.command("export")
def export_(
    ctx: typer.Context,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write to FILE (default: stdout).")] = None,
    with_vectors: Annotated[
        bool, typer.Option("--with-vectors", help="Include the vectors (else import re-embeds).")
    ] = False,
) -> None:
    """The whole memory as JSONL: a header, then one typed record a line; streamed."""
    from dcpm_cli import render

    m = _memory(ctx)
    m.store_as_recorded()  # no store: said before anything else
    if out is None:
        with m.exporting(with_vectors=with_vectors) as lines:
            for line in lines:
                sys.stdout.write(line + "\n")
        return
    from dcpm_cli.errors import InputError

    if out.is_dir():
        raise InputError(
            f"cannot write {out}: it is a folder", f"name a file, e.g. --out {out / 'dcpm.jsonl'}"
        )
    if not out.parent.is_dir():
        raise InputError(
            f"cannot write {out}: there is no folder {out.parent}", "make it first, or pick another --out"
        )
    tmp = out.with_name(out.name + ".partial")
    try:
        with (
            render.progress("exporting", enabled=True) as bar,
            m.exporting(with_vectors=with_vectors, progress=bar) as lines,
            tmp.open("w", encoding="utf-8") as f,
        ):
            for line in lines:
                f.write(line + "\n")
        tmp.replace(out)  # a complete file or none
    except BaseException as e:
        tmp.unlink(missing_ok=True)  # half a copy of the memory is left nowhere
        if isinstance(e, OSError):
            raise InputError(f"cannot write {out}: {e.strerror}", "pick another --out") from e
        raise
    render.note(f"exported to {out}")


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A `dcpm export` file ('-' reads stdin).", show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Add an export to this store (empty or not); importing twice changes nothing."""
    from dcpm_cli import render
    from dcpm_cli.errors import InputError

    m = _memory(ctx)
    try:
        # Bytes that are not UTF-8 are kept as surrogates, so the check names their line.
        source = (
            _spooled(sys.stdin)
            if str(file) == "-"
            else file.open(encoding="utf-8-sig", errors="surrogateescape")
        )
    except OSError as e:
        raise InputError(f"cannot read {file}: {e.strerror}") from e
    with source, render.progress("importing", enabled=True) as bar:
        report = m.import_(source, progress=bar)
    render.summary(report.to_dict(), as_json=as_json, title=f"imported {file}")


def _spooled(stream: Any) -> Any:
    """Standard input kept (in memory, on disk past 64 MB) so it can be read twice: checked
    whole, then imported."""
    import io
    import tempfile

    spool = tempfile.SpooledTemporaryFile(  # noqa: SIM115 (the caller closes it)
        max_size=64 << 20, mode="w+", encoding="utf-8", errors="surrogateescape"
    )
    text = (
        io.TextIOWrapper(stream.buffer, encoding="utf-8-sig", errors="surrogateescape")
        if hasattr(stream, "buffer")
        else stream
    )
    for line in text:
        spool.write(line)
    if text is not stream:
        text.detach()  # leave standard input open
    spool.seek(0)
    return spool


@app.command()
def backup(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="Where to keep backups.", show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """A consistent snapshot of the store in DIR/dcpm-<time> (safe during a cron dream)."""
    from dcpm_cli import render

    report = _memory(ctx).backup(folder)
    render.summary(report.to_dict(), as_json=as_json, title="backed up")


@app.command()
def reembed(
    ctx: typer.Context,
    embedder: Annotated[
        str,
        typer.Option("--embedder", help="The new embedder (as for `dcpm --embedder`).", show_default=False),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Embed the whole store again with another model; switches only when complete."""
    from dcpm_cli import render

    m = _memory(ctx)
    with render.progress("re-embedding", enabled=True) as bar:
        report = m.reembed(embedder, progress=bar)
    render.summary(report.to_dict(), as_json=as_json, title=f"re-embedded by {report.new_embedder}")
    render.note(
        f"use it with --embedder {embedder}, DCPM_EMBEDDER={embedder} "
        f'or embedder = "{embedder}" in config.toml'
    )


config_app = typer.Typer(
    help="Settings: what each one is set to, and where that came from.", no_args_is_help=True
)
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(
    ctx: typer.Context,
    as_json: AsJson = False,
) -> None:
    """Every setting as resolved (flag > environment > config.toml > default), with its source."""
    from dataclasses import asdict

    from dcpm_cli import render
    from dcpm_cli.config import explain

    resolved = explain(**_session(ctx).flags)
    rows = [{k: v for k, v in asdict(r).items() if k != "note" or v} | {"name": r.key} for r in resolved]
    render.settings_table(rows, as_json=as_json)
    for r in resolved:
        if r.note and not as_json:
            render.note(f"{r.key}: {r.note}")
