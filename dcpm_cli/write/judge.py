"""Reconcile by meaning (#18): ask the LLM how a later statement relates to an earlier one."""

from __future__ import annotations

from dataclasses import dataclass

from dcpm_cli.llm import LLM, structured
from dcpm_cli.prompts.judge import DEFAULT, PROMPTS, Statement


@dataclass(frozen=True)
class Verdict:
    relation: str  # one of prompts.judge.RELATIONS
    reason: str
    answer: str  # the model's own word, in the variant's vocabulary


def judge(llm: LLM, earlier: Statement, later: Statement, *, prompt: str = DEFAULT) -> Verdict:
    """One pairwise judgement, validated (an invalid reply is asked for again, then raises
    LLMBadReply)."""
    p = PROMPTS[prompt]
    got = structured(llm, p.messages(earlier, later), p.model(), schema=p.schema())
    return Verdict(relation=p.relation(got.relation), reason=got.reason, answer=got.relation)
