"""LLM replies as the schemas in dcpm_cli/prompts/ define them, for scripted fakes."""

from __future__ import annotations

from typing import Any

from dcpm_cli.models import RawInput, short_hash


def item(
    text: str,
    *,
    kind: str = "fact",
    topic: str = "fitness",
    attribute: str = "",
    subject: str = "user",
    salience: float = 0.7,
    when: str | None = None,
) -> dict[str, Any]:
    return {
        "kind": kind,
        "text": text,
        "topic": topic,
        "subject": subject,
        "attribute": attribute,
        "salience": salience,
        "when": when,
    }


def extraction(*items: dict[str, Any]) -> dict[str, Any]:
    return {"items": list(items)}


def judged(relation: str, reason: str = "scripted") -> dict[str, Any]:
    """A pairwise judgement (prompts/judge.py): how the LATER statement relates to the EARLIER."""
    return {"reason": reason, "relation": relation}


def judge_calls(calls: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (EARLIER, LATER) texts of every judgement a scripted LLM was asked, in order."""
    out = []
    for c in calls:
        user = c["messages"][-1]["content"]
        if user.startswith("EARLIER"):
            earlier, later = user.split("\n", 1)
            out.append((earlier.split(": ", 1)[1], later.split(": ", 1)[1]))
    return out


def item_id(raw: RawInput, index: int = 0) -> str:
    """The id the writer gives the index-th item extracted from `raw` (stable, content-derived),
    so a reconcile reply can name its target before the run."""
    return "m_" + short_hash(raw.id, str(index))
