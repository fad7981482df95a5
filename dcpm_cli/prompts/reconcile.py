"""System 1, step 3: one batched call decides ADD / SUPERSEDE / UPDATE / DUPLICATE per item."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from dcpm_cli.models import MemoryItem

SYSTEM = """You maintain a user's long-term memory. For each NEW item, compare it with the
EXISTING items listed under it and choose one operation:
- "ADD": the new item is about something not covered by any existing item.
- "SUPERSEDE": the new item contradicts or is an evolved version of ONE existing item about
  the same subject and the same attribute (a change of mind, habit or situation). The old
  item is kept as history. target = that existing item's id.
- "UPDATE": the new item adds detail to ONE existing item without contradicting it.
  target = that item's id; text = one merged sentence keeping both.
- "DUPLICATE": an existing item already says the same thing.
Never SUPERSEDE an item about a different subject or attribute; when unsure, ADD.
Return JSON {"decisions": [{"item": <number>, "op": ..., "target": <id or null>,
"text": <merged text or null>}]}, one decision per new item."""


class Decision(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    item: int = Field(ge=0)
    op: Literal["ADD", "SUPERSEDE", "UPDATE", "DUPLICATE"]
    target: str | None = None
    text: str | None = Field(default=None, max_length=800)


class Reconciliation(BaseModel):
    decisions: list[Decision] = Field(max_length=48)


def _describe(item: MemoryItem) -> str:
    return (
        f'{item.kind}, topic {item.topic or "-"}, subject "{item.subject}", '
        f'attribute "{item.attribute or "-"}", {item.event_at:%Y-%m-%d}: {item.text}'
    )


def messages(new: list[MemoryItem], candidates: list[list[MemoryItem]]) -> list[dict[str, str]]:
    blocks = []
    for i, (item, cands) in enumerate(zip(new, candidates, strict=True)):
        lines = [f"NEW item {i}: {_describe(item)}"]
        lines += [f"  EXISTING {c.id}: {_describe(c)}" for c in cands] or ["  (no existing items)"]
        blocks.append("\n".join(lines))
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "\n\n".join(blocks)},
    ]
