"""Your memory, your control: `dcpm forget`, `export`, `import`, `reembed`, `backup`, `config`.

Exit codes: 0 done; 2 bad input (unknown id, a newer export format, forget on a non-terminal
without --yes); 4 store error; 5 another dcpm process holds the store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from dcpm_cli.cli.app import _session, app


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
    k: Annotated[int, typer.Option("-k", "--top", min=1, max=100, help="With --query: how many hits.")] = 3,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would go; change nothing.")] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask (needed when not on a terminal).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan / result as JSON.")] = False,
) -> None:
    """Forget for good: the cascade is shown first; no file, old version or index keeps the text."""
    from dcpm_cli import render
    from dcpm_cli.errors import InputError
    from dcpm_cli.ops.forget import apply_forget, plan_forget, select_by_query

    s = _session(ctx)
    store = s.store(create=False)
    wanted = list(ids or [])
    if query:
        floor = s.settings.recall_min_similarity
        wanted += select_by_query(store, s.get_embedder(), query, k=k, min_similarity=floor)
        if not wanted:
            render.note(f"nothing found for {query!r}; nothing forgotten")
            return
    plan = plan_forget(store, wanted)
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
            raise typer.Exit(1)
    report = apply_forget(store, plan, s.get_embedder())
    render.forget_plan(plan, as_json=as_json, done=report)


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
    from dcpm_cli.ops.portability import export_lines

    store = _session(ctx).store(create=False)
    if out is None:
        with store.write():  # one consistent state: writers wait (a dream, between two clusters)
            for line in export_lines(store, with_vectors=with_vectors):
                sys.stdout.write(line + "\n")
        return
    if not out.parent.is_dir():
        from dcpm_cli.errors import InputError

        raise InputError(
            f"cannot write {out}: there is no folder {out.parent}", "make it first, or pick another --out"
        )
    tmp = out.with_name(out.name + ".partial")
    with (
        store.write(),
        render.progress("exporting", enabled=True) as bar,
        tmp.open("w", encoding="utf-8") as f,
    ):
        for line in export_lines(store, with_vectors=with_vectors, progress=bar):
            f.write(line + "\n")
    tmp.replace(out)  # a complete file or none
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
    from dcpm_cli.ops.portability import check_lines, import_lines

    s = _session(ctx)
    try:
        source = _spooled(sys.stdin) if str(file) == "-" else file.open(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {file}: {e.strerror}") from e
    with source, render.progress("importing", enabled=True) as bar:
        check_lines(source)  # whole before anything is stored: a broken file imports nothing
        source.seek(0)
        report = import_lines(s.store(), s.get_embedder(), source, progress=bar)
    render.summary(report.to_dict(), as_json=as_json, title=f"imported {file}")


def _spooled(stream: Any) -> Any:
    """Standard input kept (in memory, on disk past 64 MB) so it can be read twice: checked
    whole, then imported."""
    import tempfile

    spool = tempfile.SpooledTemporaryFile(max_size=64 << 20, mode="w+", encoding="utf-8")  # noqa: SIM115 (the caller closes it)
    for line in stream:
        spool.write(line)
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
    from dcpm_cli.ops.backup import backup as run_backup

    report = run_backup(_session(ctx).store(create=False), folder)
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
    from dcpm_cli.embed import get_embedder
    from dcpm_cli.ops.reembed import reembed as run_reembed

    s = _session(ctx)
    store, target = s.store(create=False), get_embedder(embedder)
    with render.progress("re-embedding", enabled=True) as bar:
        report = run_reembed(store, target, progress=bar)
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
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every setting as resolved (flag > environment > config.toml > default), with its source."""
    from dataclasses import asdict

    from dcpm_cli import render
    from dcpm_cli.config import explain

    rows = [asdict(r) | {"name": r.key} for r in explain(**_session(ctx).flags)]
    render.settings_table(rows, as_json=as_json)
