"""System 2, Phase 2: one induction call per cluster of facts. The paper's four tools are a
closed set of actions in a schema-constrained reply (works with `format` on small local
models; no native tool calling needed). `dcpm_cli.dream.induce` validates each action and
applies the valid ones in the order emitted."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, create_model

if TYPE_CHECKING:
    from dcpm_cli.models import MemoryItem, Node

ACTIONS = ("create_schema", "create_intention", "add_evidence", "add_edge")
RELATIONS = ("related_to", "leads_to", "conflicts_with", "refines")
REFS = ("new1", "new2", "new3", "new4")
MAX_TEXT = 160  # characters of a node's text in the reply schema sent to the model

SYSTEM = f"""You consolidate a user's long-term memory. You get a CLUSTER of related facts about
the user, labelled F1, F2, ..., and EXISTING memory nodes near them. Return JSON
{{"actions": [...]}} where each action is one of:
- "create_schema": a behavioural regularity of the user within ONE life domain, supported by
  several of the facts ("Works late into the night before deadlines").
  Fields: text, domain, facts, ref.
- "create_intention": a latent concern about an event the user is likely to face, useful for
  proactive care ("May need support preparing for the half marathon in May").
  Fields: text, domain, facts, ref.
- "add_evidence": the facts support an EXISTING node. Fields: node (its id), facts.
- "add_edge": a link between two nodes. Fields: src, dst (node ids, or the ref of a node you
  create in this reply), relation (one of {", ".join(RELATIONS)}).
Rules:
- text: ONE short sentence (at most 15 words) about the user in the third person that
  names the general pattern or concern in your own words; never a list of the facts.
- domain: one lowercase word for the life domain (work, sleep, food, fitness, health,
  family, relationships, home, money, learning, hobbies, travel, ...).
- facts: the labels (F1, F2, ...) of the facts that support it.
- If an EXISTING node already says what the facts show, use add_evidence; never create a
  node that repeats an existing one.
- ref: a name ("new1" to "new4") for a node you create, so a later add_edge can use it.
- The facts were grouped because they are alike: they almost always show a regularity.
  State it as a schema (or add the facts as evidence to an existing node that already says
  it). Only if the facts truly have nothing in common, return {{"actions": []}}.
- At most 4 actions."""


class Action(BaseModel):
    """One tool call. Fields that do not belong to the action are ignored."""

    action: Literal["create_schema", "create_intention", "add_evidence", "add_edge"]
    text: str | None = Field(default=None, max_length=500)
    domain: str | None = Field(default=None, max_length=60)
    facts: list[str] | None = Field(default=None, max_length=80)
    node: str | None = Field(default=None, max_length=80)
    src: str | None = Field(default=None, max_length=80)
    dst: str | None = Field(default=None, max_length=80)
    relation: str | None = Field(default=None, max_length=60)
    ref: str | None = Field(default=None, max_length=40)


class Induction(BaseModel):
    actions: list[Action] = Field(default_factory=list, max_length=12)


def fact_label(i: int) -> str:
    return f"F{i + 1}"


def reply_model(n_facts: int, node_ids: Sequence[str]) -> type[Induction]:
    """This call's reply model. The JSON schema sent to the model (`format`) makes the fact
    labels, node ids and refs it may name enums, so a small model under grammar-constrained
    decoding cannot cite a fact or node that is not in the prompt; the reply is still
    validated as `Induction`, so a server that ignores the schema gets each bad action
    refused on its own by the planner, not the whole reply."""
    labels: Any = Literal[tuple(fact_label(i) for i in range(max(n_facts, 1)))]
    nodes: Any = Literal[tuple(dict.fromkeys([*node_ids, *REFS]))]
    refs: Any = Literal[REFS]
    relation: Any = Literal[RELATIONS]
    action: Any = create_model(
        "Action",
        __base__=Action,
        facts=(list[labels] | None, Field(default=None, max_length=80)),
        node=(nodes | None, None),
        src=(nodes | None, None),
        dst=(nodes | None, None),
        relation=(relation | None, None),
        ref=(refs | None, None),
    )
    strict = create_model(
        "Induction", __base__=Induction, actions=(list[action], Field(default_factory=list, max_length=12))
    )
    schema = strict.model_json_schema()
    # A cluster is dense by construction: a small model must not take the empty reply as the
    # easy way out (measured: qwen2.5-coder:1.5b declined every cluster of the sample journal).
    schema["properties"]["actions"]["minItems"] = 1
    # ... nor string the facts together as the "pattern" (measured too): the text is capped.
    schema["$defs"]["Action"]["properties"]["text"]["anyOf"][0]["maxLength"] = MAX_TEXT

    class Reply(Induction):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return schema

    return Reply


def messages(
    facts: list[MemoryItem],
    nearest: list[tuple[Node, float, int]],
    evidence_nodes: list[tuple[Node, list[str], int]],
    zone: tzinfo = UTC,
) -> list[dict[str, str]]:
    """facts: the cluster; nearest: (node, similarity, evidence count) of nodes near its
    centroid; evidence_nodes: (node, labels of facts it touches, evidence count); the facts'
    days are `zone`'s (the user's)."""
    lines = [f"CLUSTER ({len(facts)} facts):"]
    for i, f in enumerate(facts):
        topic = f", {f.topic}" if f.topic else ""
        lines.append(f"{fact_label(i)} [{f.event_at.astimezone(zone):%Y-%m-%d}{topic}] {f.text}")
    lines.append("")
    if nearest:
        lines.append("EXISTING nodes similar to this cluster:")
        lines += [
            f"{n.id} {n.kind} ({n.domain or '-'}, {count} facts, similarity {sim:.2f}): {n.text}"
            for n, sim, count in nearest
        ]
    else:
        lines.append("EXISTING nodes similar to this cluster: (none)")
    if evidence_nodes:
        lines.append("EXISTING nodes whose evidence already includes these facts or earlier versions:")
        lines += [
            f"{n.id} {n.kind} ({n.domain or '-'}, {count} facts; touches {', '.join(labels)}): {n.text}"
            for n, labels, count in evidence_nodes
        ]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]
