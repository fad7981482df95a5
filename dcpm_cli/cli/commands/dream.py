"""`dcpm dream` (System 2, the nightly consolidation) and `dcpm schemas` (what it built).

Exit codes of `dcpm dream`: 0 done (also when a --max-calls/--max-seconds budget ended it
early: the rest waits for the next run, and in lite mode); 3 the LLM was unavailable or
failed, or every reply it gave was invalid (status `failed`): everything committed before is
kept and the next run resumes; 4 store error;
5 another dream is running on this store (the second one exits at once, it never waits).
"""

from __future__ import annotations

from typing import Annotated

import typer

from dcpm_cli.cli.app import AsJson, _memory, app
from dcpm_cli.errors import EXIT_LLM
from dcpm_cli.models import Mode, NodeKind

TUNING = "Tuning (defaults per embedder; see --calibrate)"


@app.command()
def dream(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Cluster and print the LLM calls it would make; write nothing.")
    ] = False,
    max_calls: Annotated[
        int | None,
        typer.Option(
            "--max-calls", min=0, envvar="DCPM_DREAM_MAX_CALLS", help="At most this many LLM calls."
        ),
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            "--max-seconds",
            min=0,
            envvar="DCPM_DREAM_MAX_SECONDS",
            help="Stop starting LLM calls after this.",
        ),
    ] = None,
    core_schemas: Annotated[
        bool | None,
        typer.Option(
            "--core-schemas/--no-core-schemas",
            envvar="DCPM_CORE_SCHEMAS",
            help="Opt in to cross-domain core schemas (Phase 3): patterns you may not know about yourself.",
            show_default="off",
        ),
    ] = None,
    mode: Annotated[
        Mode | None,
        typer.Option(
            "--mode",
            envvar="DCPM_DREAM_MODE",
            help="Ablation: full; no-collision (no Phase 3); lite (System 1 only: no dream).",
            show_default="full",
        ),
    ] = None,
    no_supersedes: Annotated[
        bool | None,
        typer.Option(
            "--no-supersedes",
            envvar="DCPM_NO_SUPERSEDES",
            help="Ablation: no revision chains (superseded facts are consolidated too; the catch-up "
            "extraction writes no chains).",
            show_default=False,
        ),
    ] = None,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate", help="Calibrate the thresholds for this embedder and store them; no dream."
        ),
    ] = False,
    eps1: Annotated[
        float | None,
        typer.Option("--eps1", envvar="DCPM_DREAM_EPS1", help="DBSCAN radius.", rich_help_panel=TUNING),
    ] = None,
    eps2: Annotated[
        float | None,
        typer.Option(
            "--eps2", envvar="DCPM_DREAM_EPS2", help="Radius for over-sized clusters.", rich_help_panel=TUNING
        ),
    ] = None,
    max_cluster: Annotated[
        int | None,
        typer.Option(
            "--max-cluster",
            min=3,
            envvar="DCPM_DREAM_MAX_CLUSTER",
            help="Over-sized above this many facts (default 40).",
            rich_help_panel=TUNING,
        ),
    ] = None,
    theta_beh: Annotated[
        float | None,
        typer.Option(
            "--theta-beh",
            envvar="DCPM_DREAM_THETA_BEH",
            help="Collision: cos(E_beh) ≥ this.",
            rich_help_panel=TUNING,
        ),
    ] = None,
    theta_sem: Annotated[
        float | None,
        typer.Option(
            "--theta-sem",
            envvar="DCPM_DREAM_THETA_SEM",
            help="Collision: cos(E_sem) ≤ this.",
            rich_help_panel=TUNING,
        ),
    ] = None,
    retry_declined: Annotated[
        bool | None,
        typer.Option(
            "--retry-declined",
            envvar="DCPM_DREAM_RETRY_DECLINED",
            help="Ask again the clusters the model declined before (forgets every decline).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
) -> None:
    """Consolidate facts into schemas and intentions (System 2); run it nightly from cron."""
    from dcpm_cli import render
    from dcpm_cli.config import DreamOptions

    m = _memory(ctx, bool(no_supersedes))
    if calibrate:
        render.calibration(m.calibrate(), as_json=as_json)
        return
    opts = DreamOptions.resolve(
        dry_run=dry_run,
        max_calls=max_calls,
        max_seconds=max_seconds,
        core_schemas=core_schemas,
        mode=mode.value if mode else None,
        no_supersedes=m.settings.no_supersedes or no_supersedes,
        eps1=eps1,
        eps2=eps2,
        max_cluster=max_cluster,
        theta_beh=theta_beh,
        theta_sem=theta_sem,
        retry_declined=retry_declined,
        retries=m.settings.llm_retries,
    )
    if m.store_or_none() is None:
        render.note(m.nothing_stored)
        if as_json:  # no run: a script's jq still parses
            render.print_json({"run": None, "note": "nothing stored yet"})
        return
    with render.progress("dreaming", enabled=not opts.dry_run) as bar:
        outcome = m.dream(opts, progress=bar, log=render.note)
    render.dream_outcome(outcome, as_json=as_json, zone=m.settings.timezone)
    if outcome.run.status in ("llm_unavailable", "llm_error", "failed"):
        raise typer.Exit(EXIT_LLM)


@app.command()
def schemas(
    ctx: typer.Context,
    kind: Annotated[
        list[NodeKind] | None,
        typer.Option("--kind", help="Only these kinds (repeatable).", show_default=False),
    ] = None,
    domain: Annotated[
        str | None, typer.Option("--domain", help="Only this life domain.", show_default=False)
    ] = None,
    as_json: AsJson = False,
) -> None:
    """What dreams built: schemas and intentions by domain, core schemas with their members."""
    from dcpm_cli import render

    overview = _memory(ctx).schemas(kinds=kind, domain=domain)
    asked = " ".join([*(f"--kind {k}" for k in kind or []), *([f"--domain {domain}"] if domain else [])])
    render.schemas(overview, as_json=as_json, asked=asked)
