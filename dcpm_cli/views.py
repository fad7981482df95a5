"""The JSON contract: what `--json`, the MCP tools and the benchmarks give out, shaped once.

Pure functions from models to JSON-ready data (and the prompt text `recall --format prompt`
prints); nothing here prints, and nothing heavy is imported, so `dcpm --help` stays instant.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import asdict, is_dataclass
from datetime import UTC, date, datetime
from typing import Any

from dcpm_cli.chunking import EXTRACT_CHARS, pieces
from dcpm_cli.models import speaker_of

# An input longer than this is shown as one piece of it (the one sharing most words with the
# query), in the table, `--format prompt` and the JSON: a 2 MB journal pasted in one go would
# otherwise be printed whole by every recall that finds it. `dcpm show ID` gives it whole.
SHOWN_CHARS = EXTRACT_CHARS


def _default(o: Any) -> Any:
    if isinstance(o, datetime | date):
        return o.isoformat()
    if is_dataclass(o) and not isinstance(o, type):
        return asdict(o)
    raise TypeError(f"cannot serialise {type(o).__name__}")


def to_json(obj: Any) -> str:
    return json.dumps(obj, default=_default, ensure_ascii=False)


def plain(obj: Any) -> Any:
    """Dataclasses and datetimes as JSON values: what `to_json` would write, as data."""
    return json.loads(to_json(obj))


def day(d: Any, zone: str = "UTC") -> str:
    """The day of a moment, as the user counts days (the `timezone` setting)."""
    return f"{d.astimezone(_zone(zone)):%Y-%m-%d}" if d else "----------"


@functools.cache
def _zone(name: str) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


# -- the read path -------------------------------------------------------------------------


def node_dict(node: Any, stale: set[str]) -> dict[str, Any]:
    d = {"id": node.id, "kind": node.kind, "text": node.text, "domain": node.domain}
    return {**d, "stale": node.id in stale}


def excerpt(text: str, query: str) -> tuple[str, int, int]:
    """(what to show of `text`, its piece number, how many pieces): the whole text up to
    SHOWN_CHARS (1, 1); else the piece holding most of the query's words, the first on a tie."""
    if len(text) <= SHOWN_CHARS:
        return text, 1, 1
    parts = pieces(text, SHOWN_CHARS)
    words = set(re.findall(r"\w{3,}", query.casefold()))
    best = max(
        range(len(parts)), key=lambda i: (len(words & set(re.findall(r"\w{3,}", parts[i].casefold()))), -i)
    )
    return parts[best], best + 1, len(parts)


def shown_text(hit: Any, query: str) -> str:
    """A hit's words as the table and the prompt print them: a long input's best piece, saying so."""
    text, piece, of = excerpt(hit.text, query)
    return text if of == 1 else f"[piece {piece} of {of}; `dcpm show {hit.id}` for all] {text}"


def hit_dict(
    hit: Any,
    *,
    arc: bool = True,
    stale: set[str] | None = None,
    when_of: dict[str, Any] | None = None,
    query: str = "",
    then: str = "",
) -> dict[str, Any]:
    """The JSON shape of one recall hit (documented in the README); `when_of` gives the time of
    the other hits it names in `same_as`; a long input's text is its piece best matching `query`,
    with `excerpt` saying which; `then`, where it stands against the time asked about."""
    when_of = when_of or {}
    text, piece, of = excerpt(hit.text, query)
    d: dict[str, Any] = {
        "id": hit.id,
        "kind": hit.kind,
        "text": text,
        "when": hit.when.isoformat(),
        "topic": hit.topic,
        "score": round(hit.score, 6),
        "matched": hit.matched,
        "raw_ids": hit.raw_ids,
        "current": not hit.superseded,
        "chain": [
            {"id": c.id, "text": c.text, "when": c.event_at.isoformat(), "kind": c.kind} for c in hit.chain
        ]
        if arc
        else [],
        "nodes": [node_dict(n, stale or set()) for n in hit.nodes],
        "same_as": [{"id": i, "when": when_of[i].isoformat()} for i in hit.same_as if i in when_of],
        "then": then or None,
        "role": hit.role or None,
        "reply_to": {"id": r.id, "text": r.text, "said_at": r.said_at.isoformat()}
        if (r := hit.reply_to) is not None
        else None,
    }
    if of > 1:
        d["excerpt"] = {"piece": piece, "of": of, "chars": len(hit.text)}
    return d


def recall_dict(result: Any, *, arc: bool = True) -> dict[str, Any]:
    """`dcpm recall --json` and the MCP `recall` tool; without `arc`, every chain is empty."""
    when_of = {h.id: h.when for h in result.hits}
    return {
        "query": result.query,
        "as_of": result.as_of.isoformat() if result.as_of else None,
        "hits": [
            hit_dict(
                h,
                arc=arc,
                stale=result.stale_nodes,
                when_of=when_of,
                query=result.query,
                then=then_mark(result, h),
            )
            for h in result.hits
        ],
        "nodes": [node_dict(n, result.stale_nodes) for n in result.nodes],
        "period": period_dict(result.period),
        "warnings": list(result.warnings),
    }


def period_dict(period: Any) -> dict[str, str] | None:
    """The time the question asks about, as read: its phrase and [start, end) in UTC."""
    if period is None:
        return None
    start, end = (t.astimezone(UTC).isoformat() for t in (period.start, period.end))
    return {"phrase": period.phrase, "start": start, "end": end}


def period_note(result: Any, *, beside_warnings: bool = False) -> str:
    """How the question's time was read, and whether anything found was said then.
    `beside_warnings`: printed where the result's warnings are, which already say when nothing
    found was said then, and how many were said just after (recall's): not said twice."""
    p = result.period
    if p is None:
        return ""
    said = sum(p.holds(h.when) for h in result.hits)
    told_of = sum(h.id in p.told_of for h in result.hits)
    told = sum(p.told_after(h.when) for h in result.hits) - told_of
    planned = sum(h.id in p.planned for h in result.hits)
    if said or told_of or planned:
        found = [f"{said} of these said then"] if said else []
        found += [f"{told_of} told of then"] if told_of else []
        found += [f"{planned} planned for then"] if planned else []
    elif beside_warnings and result.hits:
        found = []  # recall's warning, printed beside this, says so
    else:
        found = ["nothing found was said then"]
    if told and found:
        found.append(f"{told} in the {p.told.days} days after")
    read = f"'{p.phrase}' read as {p.days} ({p.zone} days)"
    return f"{read}: {', '.join(found)}" if found else read


def then_mark(result: Any, hit: Any) -> str:
    """Where a hit stands against the time the question asks about: said then, told of then in
    the days after ("went to the rally on Saturday", said on the Monday), said in the days after
    naming none of its days, told before it as a plan for it, or '' (no time asked, or said at
    another time), so a count is read off."""
    p = result.period
    if p is None:
        return ""
    if p.holds(hit.when):
        return "said then"
    if hit.id in p.told_of:
        return "told of then"
    return "said just after" if p.told_after(hit.when) else "planned for then" if hit.id in p.planned else ""


def recall_prompt_text(result: Any) -> str:
    """What `recall --format prompt` prints (the QA bench gives the same text to its reader)."""
    if not result.hits:
        return f"No stored memory matches: {result.query}\n"
    zone = result.zone
    when = f" as of {day(result.as_of, zone)}" if result.as_of else ""
    about = "current beliefs; earlier states in brackets"
    if any(h.kind == "raw" and h.role != "assistant" for h in result.hits):  # no belief read yet
        about += (
            "; a 'said' line is the user's own words, not yet read into beliefs: "
            "an older one may have changed since"
        )
        if any(h.kind == "raw" and h.role != "assistant" and speaker_of(h.text) for h in result.hits):
            about += " (one that begins with a name, 'Ana: …', is that person's words in a conversation)"
    if any(h.role == "assistant" for h in result.hits):
        about += "; an 'assistant said' line is the assistant's reply in a conversation, not the user's words"
    lines = [f"Relevant memory about the user{when} ({about}):"]
    if result.period is not None:
        lines.insert(0, f"The question asks about {period_note(result)}.")
    when_of = {h.id: h.when for h in result.hits}
    for hit in result.hits:
        label = ("assistant said" if hit.role == "assistant" else "said") if hit.kind == "raw" else hit.kind
        text = shown_text(hit, result.query).replace("\n", " ")
        earlier = [c for c in hit.chain if c.event_at < hit.when and c.id != hit.id]
        arc = "; ".join(f"{day(c.event_at, zone)}: {c.text}" for c in earlier)
        alike = _alike(hit, when_of, zone)
        then = f", {mark}" if (mark := then_mark(result, hit)) else ""
        before = f" [earlier: {arc}]" if arc else ""
        answering = f", answering: {asked_of(hit)}" if hit.reply_to is not None else ""
        lines.append(f"- ({label}, {day(hit.when, zone)}{then}{alike}{answering}) {text}{before}")
    for node in result.nodes:
        stale = ", stale: its evidence has since changed" if node.id in result.stale_nodes else ""
        lines.append(f"- ({node.kind.replace('_', ' ')}{stale}) {node.text}")
    return "\n".join(lines) + "\n"


def asked_of(hit: Any, width: int = 160) -> str:
    """The user's turn a reply answered, quoted on one line and cut to `width` characters."""
    said = " ".join(hit.reply_to.text.split())
    return json.dumps(said if len(said) <= width else said[: width - 1].rstrip() + "…", ensure_ascii=False)


def _alike(hit: Any, when_of: dict[str, Any], zone: str) -> str:
    """How a hit stands among those saying nearly the same: the latest, or one said before a like
    one (not "said differently since": two vet bills alike in words are two bills, not a change)."""
    others = [when_of[i] for i in hit.same_as if i in when_of]
    if not others:
        return ""
    later = [w for w in others if w > hit.when]
    if later:
        return f"; nearly the same said later, on {day(max(later), zone)}"
    if hit.when in others:
        return f"; one of {len(others) + 1} saying about the same, said at the same time"
    return f"; the latest of {len(others) + 1} saying about the same"


def arc_dict(arc: list[Any]) -> dict[str, Any]:
    return {
        "current": arc[-1].item.id if arc else None,
        "states": [
            {
                "id": s.item.id,
                "kind": s.item.kind,
                "text": s.item.text,
                "when": s.item.event_at.isoformat(),
                "supersedes": s.item.supersedes,
                "superseded_by": s.item.superseded_by,
                "sources": [
                    {"id": r.id, "text": r.text, "said_at": r.said_at.isoformat()} for r in s.sources
                ],
                "events": [
                    {"op": e.op, "at": e.at.isoformat(), "previous_text": e.previous_text} for e in s.events
                ],
            }
            for s in arc
        ],
    }


# -- System 1 --------------------------------------------------------------------------------


def link_dict(what: str, done: Any, arcs: list[list[Any]]) -> dict[str, Any]:
    """`dcpm link --json` / `dcpm unlink --json`: the pair, whether anything changed, what the
    user may not have meant, and the arcs left (as `dcpm history --json` prints them)."""
    return {
        what: {"earlier": done.earlier.id, "later": done.later.id},
        "changed": done.done,
        "notes": done.notes,
        "arcs": [arc_dict(a) for a in arcs],
    }


def add_dict(report: Any) -> dict[str, Any]:
    """`dcpm add/process --json`: the report, its LLM decisions refused listed flat."""
    data = report.to_dict()
    data.pop("outcomes", None)
    data["rejected"] = [r for o in report.outcomes for r in o.rejected]
    return data


# -- System 2 --------------------------------------------------------------------------------


def dream_dict(outcome: Any) -> dict[str, Any]:
    """A dream run (or plan) as JSON-ready data."""
    data: dict[str, Any] = {"run": asdict(outcome.run)}
    data["run"]["settings"] = json.loads(outcome.run.settings) if outcome.run.settings else {}
    data["calibration"] = asdict(outcome.calibration) if outcome.calibration else None
    data["notes"] = list(outcome.notes)
    if outcome.check is not None:
        data["graph_problems"] = outcome.check.problems()
    if outcome.triage is not None:
        data["clusters"] = [_cluster_dict(c) for c in outcome.triage.clusters]
        data["skipped_clusters"] = [c.signature for c in outcome.triage.declined]
    if outcome.run.status == "dry_run":
        data["planned_calls"] = list(outcome.planned)
        data["prompts"] = outcome.prompts
    if outcome.sweep is not None:
        data["collisions"] = [asdict(c) for c in outcome.sweep.collisions]
        data["collision_groups"] = outcome.sweep.groups
    return data


def _cluster_dict(c: Any) -> dict[str, Any]:
    return {
        "index": c.index + 1,
        "signature": c.signature,
        "facts": [{"id": f.id, "text": f.text, "topic": f.topic, "when": day(f.event_at)} for f in c.facts],
        "nearest_nodes": [
            {"id": n.id, "kind": n.kind, "text": n.text, "similarity": round(s, 3)} for n, s in c.nearest
        ],
        "nodes_touching": c.evidence_nodes,
    }


def calibration_dict(report: Any) -> dict[str, Any]:
    return {"calibration": asdict(report.calibration), "stats": report.stats}


# -- forget --------------------------------------------------------------------------------


def forget_plan_dict(plan: Any) -> dict[str, Any]:
    """The ONE forget plan (`dcpm forget --dry-run --json`, the MCP `forget` tool's `plan`):
    every id it removes or changes, never the forgotten texts, so a log of it keeps none."""
    return {k: v for k, v in asdict(plan).items() if k != "texts"}


def forget_dict(plan: Any, done: Any = None) -> dict[str, Any]:
    """`dcpm forget --json`: the plan, and once done, its event and `forgotten: true`."""
    data = forget_plan_dict(plan)
    if done is not None:
        data.update(event=done.event_id, events_scrubbed=done.events_scrubbed, forgotten=True)
    return data
