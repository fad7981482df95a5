"""System 2, Phase 3a: behavioural abstraction. For each schema, a short description of the
behaviour behind it in domain-free words; embedded as E_beh beside E_sem of the schema text,
so that schemas from unrelated domains can meet on how the user behaves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from dcpm_cli.models import Node

SYSTEM = """You describe the behavioural and cognitive pattern behind one of a user's habits.
Write ONE sentence of at most 25 words about HOW the user acts and decides (e.g. "escalates
commitment after sunk costs", "invests patiently in small steady steps and trusts slow
accumulation over quick results"). Use domain-free words: do not mention the habit's
subject matter (no food, work, sport, garden, money, ... words), only the pattern.
Return JSON {"behaviour": "..."}."""


class Behaviour(BaseModel):
    behaviour: str = Field(min_length=3, max_length=400)


def messages(schema: Node) -> list[dict[str, str]]:
    user = f"Habit (life domain: {schema.domain or 'unknown'}): {schema.text}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
