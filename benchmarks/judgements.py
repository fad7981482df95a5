"""Scripted judgement replies for the harnesses that fake the model (faults, system1)."""

from __future__ import annotations

from typing import Any


def judged(relation: str) -> dict[str, Any]:
    """A judgement in every prompt's fields (prompts/judge.py): the four-way `relation`, and
    the default prompt's names and yes/no answers (it reads adds_detail as unrelated)."""
    return {
        "reason": "scripted",
        "relation": relation,
        "earlier_about": "scripted",
        "later_about": "scripted",
        "same_thing": "no" if relation == "unrelated" else "yes",
        "earlier_still_true": "no" if relation == "replaces" else "yes",
    }
