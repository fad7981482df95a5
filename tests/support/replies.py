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


def decisions(*ds: dict[str, Any]) -> dict[str, Any]:
    return {"decisions": list(ds)}


def decide(op: str, target: str | None = None, *, item: int = 0, text: str | None = None) -> dict[str, Any]:
    return {"item": item, "op": op, "target": target, "text": text}


def item_id(raw: RawInput, index: int = 0) -> str:
    """The id the writer gives the index-th item extracted from `raw` (stable, content-derived),
    so a reconcile reply can name its target before the run."""
    return "m_" + short_hash(raw.id, str(index))
