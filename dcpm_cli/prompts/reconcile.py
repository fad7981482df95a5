"""System 1, step 3: one batched call decides ADD / SUPERSEDE / UPDATE / DUPLICATE per item.

The writer asks only about items that have candidates with their own subject and attribute,
and shows only those. The reply schema is built for each call (`Ask.schema`): one decision per
new item, in order (`prefixItems`), each allowed to name only that item's own candidates as
its target. Under grammar-constrained decoding (Ollama's `format`) a small model then cannot
name a memory it was not shown or skip an item. The decision states its reason before its
verdict.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from dcpm_cli.models import MemoryItem

SYSTEM = """You keep a person's long-term memory up to date. Each NEW item comes with EXISTING
memories about the same subject and attribute. For each NEW item choose one op:
- "SUPERSEDE": the new item is a change of what an existing memory says about the same
  subject and attribute: a new value now (another job, city, diet, habit; started, stopped,
  switched, quit). target = that memory; it is kept as history.
- "DUPLICATE": an existing memory already says the same thing. target = that memory.
- "UPDATE": the new item only adds a detail to an existing memory about the same subject and
  attribute and changes nothing it said. target = that memory; text = one sentence that keeps
  both.
- "ADD": the new item is about something else that can be true beside them (another hobby,
  another person, another thing). target = null.
Never merge different things (an allergy, a diet and a job are different).
First write a short reason (which memory, and whether the value changed), then the op.
Return JSON {"decisions": [...]}: one decision per NEW item, in order."""


class Decision(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    item: int = Field(ge=0)
    reason: str = Field(default="", max_length=400)
    op: Literal["ADD", "SUPERSEDE", "UPDATE", "DUPLICATE"]
    target: str | None = None
    text: str | None = Field(default=None, max_length=800)


@dataclass
class Ask:
    """One reconcile call: the new items, each with its candidates."""

    items: list[MemoryItem]
    candidates: list[list[MemoryItem]]

    def ops(self, i: int) -> list[str]:
        return ["ADD", "DUPLICATE", "SUPERSEDE", "UPDATE"] if self.candidates[i] else ["ADD"]

    def model(self, *, strict: bool = False) -> type[BaseModel]:
        """The pydantic model of a reply to exactly this call: one decision per item, in order.
        `strict` also limits each item's op and target (the schema sent); the model that
        validates the reply does not, so that an op outside them is refused by the writer with
        its reason recorded, rather than asked for again."""
        if not strict:
            return _reply_model(len(self.candidates))
        per_item = []
        for i, cands in enumerate(self.candidates):
            ids = tuple(c.id for c in cands)
            item: Any = Literal[i]  # these types are built per call: types only at run time
            op: Any = Literal[tuple(self.ops(i))]
            target: Any = Literal[ids] | None if ids else None
            fields: dict[str, Any] = {"item": (item, ...), "op": (op, ...), "target": (target, None)}
            per_item.append(create_model(f"Decision{i}", __base__=Decision, **fields))
        decisions: Any = tuple.__class_getitem__(tuple(per_item))
        return create_model("Reconciliation", decisions=(decisions, ...))

    def schema(self) -> dict[str, Any]:
        """The JSON schema sent: the strict model's (`model(strict=True)`), with the reason and
        the target required (in that order), so that a grammar writes the reason before the
        verdict and says null for no target. Written out here rather than generated: building
        pydantic models for every call cost each input ~10 ms; the tests hold the two equal."""
        defs = {}
        for i, cands in enumerate(self.candidates):
            ids = [c.id for c in cands]
            target: dict[str, Any] = (
                {"anyOf": [_one_of(ids), {"type": "null"}], "default": None, "title": "Target"}
                if ids
                else {"default": None, "title": "Target", "type": "null"}
            )
            defs[f"Decision{i}"] = {
                "properties": {
                    "item": {"const": i, "title": "Item", "type": "integer"},
                    "reason": {"default": "", "maxLength": 400, "title": "Reason", "type": "string"},
                    "op": {**_one_of(self.ops(i)), "title": "Op"},
                    "target": target,
                    "text": {
                        "anyOf": [{"maxLength": 800, "type": "string"}, {"type": "null"}],
                        "default": None,
                        "title": "Text",
                    },
                },
                "required": ["item", "reason", "op", "target"],
                "title": f"Decision{i}",
                "type": "object",
            }
        n = len(self.candidates)
        decisions = {
            "maxItems": n,
            "minItems": n,
            "prefixItems": [{"$ref": f"#/$defs/Decision{i}"} for i in range(n)],
            "title": "Decisions",
            "type": "array",
        }
        return {
            "$defs": defs,
            "properties": {"decisions": decisions},
            "required": ["decisions"],
            "title": "Reconciliation",
            "type": "object",
        }

    def messages(self) -> list[dict[str, str]]:
        blocks = []
        for i, (item, cands) in enumerate(zip(self.items, self.candidates, strict=True)):
            lines = [f"NEW item {i}: {_describe(item)}"]
            lines += [f"  EXISTING {c.id}: {_describe(c)}" for c in cands] or ["  (no existing items)"]
            blocks.append("\n".join(lines))
        return [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n\n".join(blocks)},
        ]


def _one_of(values: list[str]) -> dict[str, Any]:
    """A string that is one of `values`, as pydantic writes a Literal."""
    return {"const": values[0], "type": "string"} if len(values) == 1 else {"enum": values, "type": "string"}


@functools.cache
def _reply_model(n: int) -> type[BaseModel]:
    """The model that validates a reply about n items: one decision each, in order."""
    per_item = [create_model(f"Decision{i}", __base__=Decision, item=(_literal(i), ...)) for i in range(n)]
    decisions: Any = tuple.__class_getitem__(tuple(per_item))  # a type only at run time
    return create_model("Reconciliation", decisions=(decisions, ...))


def _literal(value: Any) -> Any:
    """Literal[value], built at run time."""
    return Literal[value]


def _describe(item: MemoryItem) -> str:
    return (
        f'{item.kind}, topic {item.topic or "-"}, subject "{item.subject}", '
        f'attribute "{item.attribute or "-"}", {item.event_at:%Y-%m-%d}: {item.text}'
    )
