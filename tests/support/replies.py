"""LLM replies as the schemas in dcpm_cli/prompts/ define them, for scripted fakes."""

from __future__ import annotations

from typing import Any

from dcpm_cli.models import RawInput, short_hash
from dcpm_cli.prompts.judge import scripted_reply


def item(
    text: str,
    *,
    kind: str = "fact",
    topic: str = "fitness",
    attribute: str = "",
    subject: str = "user",
    salience: float = 0.7,
    when: str | None = None,
    instead_of: str = "",
) -> dict[str, Any]:
    return {
        "kind": kind,
        "text": text,
        "topic": topic,
        "subject": subject,
        "attribute": attribute,
        "salience": salience,
        "when": when,
        "instead_of": instead_of,
    }


def extraction(*items: dict[str, Any]) -> dict[str, Any]:
    return {"items": list(items)}


def judged(relation: str, reason: str = "scripted") -> dict[str, Any]:
    """A pairwise judgement (prompts/judge.py): how the LATER statement relates to the EARLIER,
    answered in every prompt's fields. The default prompt asks a replaces twice, so a replaces
    under it takes two of these (`replaced()`)."""
    return scripted_reply(relation, reason)


def answered(relation: str, reason: str = "scripted") -> list[dict[str, Any]]:
    """The replies one judgement under the default prompt takes: two for a replaces."""
    return list(replaced(reason)) if relation == "replaces" else [judged(relation, reason)]


def replaced(reason: str = "scripted") -> tuple[dict[str, Any], dict[str, Any]]:
    """A replaces under the default prompt: the question, and the same answer asked again."""
    return judged("replaces", reason), judged("replaces", reason)


def judge_calls(calls: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (EARLIER, LATER) texts of every pair a scripted LLM was asked about, in order (a
    replaces asked again, in the other order, is the same question)."""
    out = []
    for c in calls:
        user = c["messages"][-1]["content"]
        again = next(iter((c["schema"] or {}).get("properties", {})), "") == "later_about"
        if user.startswith("EARLIER") and not again:
            earlier, later = user.split("\n", 1)
            out.append((earlier.split(": ", 1)[1], later.split(": ", 1)[1]))
    return out


def item_id(raw: RawInput, index: int = 0) -> str:
    """The id the writer gives the index-th item extracted from `raw` (stable, content-derived),
    so a reconcile reply can name its target before the run."""
    return "m_" + short_hash(raw.id, str(index))
