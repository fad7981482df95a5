"""System 2, Phase 3c: core induction. One call per collision group writes a core schema,
the cross-domain abstraction that no single within-domain schema captures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from dcpm_cli.models import Node

SYSTEM = """The user's habits below come from different life domains, yet they share one
behavioural pattern. Write the CORE SCHEMA: one or two sentences naming the mental model
that produces all of them, e.g. "User operates from an organic-cultivation mental model:
meaningful outcomes are seen as emergent systems requiring patient, consistent
micro-investment over time, with trust in accumulated attention over forced acceleration."
Be concrete about the shared pattern; do not list the habits. Return JSON {"text": "..."}."""


class CoreSchema(BaseModel):
    text: str = Field(min_length=10, max_length=800)


def messages(members: list[Node]) -> list[dict[str, str]]:
    lines = []
    for n in members:
        lines.append(f"- ({n.domain or 'unknown'}) {n.text}")
        if n.behaviour:
            lines.append(f"  behaviour: {n.behaviour}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]
