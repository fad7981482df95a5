"""System 1, step 2: one call turns a user's input into identity items, facts or a summary."""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dcpm_cli.models import RawInput

SYSTEM = """You extract long-term memory about the USER from what the user just said.

Return JSON {"items": [...]}. Each item:
- kind: "fact" (most items) for what the user does, did, plans, likes or thinks: habits,
  routines, events, opinions, and every change of them ("Stopped drinking coffee"); "identity"
  only for who the user is and stays: name, age, job, home city, family, a lasting condition
  or a preference they call lifelong; "summary" ONLY when the input is too diffuse for single
  facts (moods, rambling): then one short summary of it and nothing else.
- text: one self-contained sentence in the third person about the user ("Prefers running
  alone in the early morning"), keeping reasons, details and dates that were given.
{instead_of}- topic: the life domain in one lowercase word (food, fitness, work, sleep, health, family,
  relationships, home, money, learning, hobbies, travel, mood, ...).
- subject: "user", or the person or thing the statement is about ("user's sister Hanna").
- attribute: the aspect of the subject it describes, 1-3 words ("diet", "exercise routine",
  "coffee habit"); a later change of the same attribute must use the same words.
- salience: 0..1, how much this matters for knowing the user over months.
- when: the time words the user gave for it, copied as said ("two months ago", "last
  Tuesday", "since March", "in 2019") or a date they gave (YYYY-MM-DD); else null. Do not
  compute dates: dcpm reads the words against the day the input was said.

Rules: only what the USER states about themselves or their world; never facts from the
assistant's turns (those are context only). One idea per item. No items for greetings,
questions or small talk: then return {"items": []}. Use the earlier turns only to resolve
references ("it", "that class")."""

# Asked for only with named ends on (settings.named_ends): off, the prompt and schema are the
# ones every arc figure before named ends was measured with.
INSTEAD_OF = """- instead_of: what the user stopped, left or gave up for this, in the input's own words
  ("Binned my paper diary, it's all in an app now": "paper diary"; "the tomatoes failed, so
  I grow chillies instead": "tomatoes"); "" when the input names nothing that ended.
"""


def system(ask_ended: bool) -> str:
    return SYSTEM.replace("{instead_of}", INSTEAD_OF if ask_ended else "")


class ExtractedItem(BaseModel):
    """Fields in the order a model writes them (grammar-constrained decoding follows the
    schema): `kind` first, since the text first cost far more than it gained (CHANGELOG)."""

    model_config = ConfigDict(str_strip_whitespace=True)

    kind: Literal["fact", "identity", "summary"]
    text: str = Field(min_length=3, max_length=600)
    instead_of: str = Field(default="", max_length=200)
    topic: str = Field(min_length=1, max_length=40)
    subject: str = Field(default="user", max_length=80)
    attribute: str = Field(default="", max_length=80)
    salience: float

    @field_validator("salience")
    @classmethod
    def _clamp(cls, v: float) -> float:
        # Grammar-constrained decoding cannot bound numbers: clamp rather than refuse the reply.
        return min(max(v, 0.0), 1.0)

    when: str | None = None


class Extraction(BaseModel):
    items: list[ExtractedItem] = Field(max_length=24)


def schema(ask_ended: bool = False) -> dict[str, Any]:
    """The schema sent: every field of an item required, in the order above, so that a
    grammar-constrained model cannot leave out the subject, the attribute (which chains a
    later change to this item) or the time words; `instead_of` only when `ask_ended`.
    Validation stays lenient (`Extraction`). Generated once per process (~4 ms each time),
    handed out as a copy."""
    return copy.deepcopy(_schema(ask_ended))


@functools.cache
def _schema(ask_ended: bool) -> dict[str, Any]:
    out = Extraction.model_json_schema()
    item = out["$defs"]["ExtractedItem"]
    if not ask_ended:
        del item["properties"]["instead_of"]
    item["required"] = list(item["properties"])
    item["properties"]["attribute"]["minLength"] = 1
    return out


def messages(
    raw: RawInput,
    history: list[RawInput],
    known: list[tuple[str, str]] | None = None,
    *,
    ask_ended: bool = False,
) -> list[dict[str, str]]:
    """The prompt; `known` (subject, attribute) pairs already in memory near this input are
    offered so that a later change of an attribute reuses its words; `ask_ended` asks each
    item for what it took the place of (`instead_of`)."""
    lines = [f"[{h.said_at:%Y-%m-%d}] {h.role}: {h.text[:1000]}" for h in history]
    context = "\n".join(lines) if lines else "(none)"
    attrs = "; ".join(f"{a} ({s})" if s != "user" else a for s, a in known or [])
    offered = (
        f"Attributes already in memory (when the input is about one of them, use the same "
        f"subject and attribute words): {attrs}\n\n"
        if attrs
        else ""
    )
    user = (
        f"Earlier turns (context only):\n{context}\n\n{offered}"
        f"The user's input, said on {raw.said_at:%Y-%m-%d}:\n{raw.text}"
    )
    return [{"role": "system", "content": system(ask_ended)}, {"role": "user", "content": user}]
