"""Reconcile by meaning (#18): ask the LLM how a later statement relates to an earlier one."""

from __future__ import annotations

from dataclasses import dataclass

from dcpm_cli.llm import LLM, structured
from dcpm_cli.prompts.judge import DEFAULT, PROMPTS, Statement
from dcpm_cli.write.change import no_change, someone_else

NO_CHANGE = "no change said"  # a Verdict.answer: a replaces the later statement's words refuse
SOMEONE_ELSE = "someone else's"  # a Verdict.answer: a replaces of a statement about another person


@dataclass(frozen=True)
class Verdict:
    relation: str  # one of prompts.judge.RELATIONS
    reason: str
    answer: str  # the model's own word, in the variant's vocabulary


def judge(
    llm: LLM, earlier: Statement, later: Statement, *, prompt: str = DEFAULT, change_words: bool = True
) -> Verdict:
    """One pairwise judgement, validated (an invalid reply is asked for again, then raises
    LLMBadReply). A variant with a `confirm` asks its `replaces` again in the other phrasing;
    it stands only if both say so (a wrong link hides a true belief, a missing one does not).
    Before that, with `change_words`, a `replaces` whose LATER statement says no change (a
    stance said again, a plan, a question: write/change.py), or opens on another person and says
    nothing of the speaker, is `unrelated`, without a second call."""
    first = _ask(llm, prompt, earlier, later)
    if first.relation != "replaces":
        return first
    if change_words and (checked := said_change(first, later.text, later.words, earlier.text)) is not first:
        return checked
    confirm = PROMPTS[prompt].confirm
    if confirm is None:
        return first
    again = _ask(llm, confirm, earlier, later)
    if again.relation == "replaces":
        return Verdict("replaces", f"{first.reason}; asked again: {again.reason}", first.answer)
    return Verdict(again.relation, f"{first.reason}; but asked again: {again.reason}", "not confirmed")


def said_change(verdict: Verdict, later: str, words: str = "", earlier: str = "") -> Verdict:
    """`verdict` under the words-of-change check: a `replaces` whose LATER statement (or the
    input it came from, `words`) says no change, or that is about someone else than the
    EARLIER one (write/change.py), is `unrelated`; any other verdict as it is."""
    if verdict.relation != "replaces":
        return verdict
    if why := no_change(later, words):
        return Verdict("unrelated", f"{verdict.reason}; but {why}", NO_CHANGE)
    if why := someone_else(earlier, later):
        return Verdict("unrelated", f"{verdict.reason}; but {why}", SOMEONE_ELSE)
    return verdict


def _ask(llm: LLM, prompt: str, earlier: Statement, later: Statement) -> Verdict:
    p = PROMPTS[prompt]
    got = structured(llm, p.messages(earlier, later), p.model(), schema=p.schema())
    relation, reason, answer = p.read(got)
    return Verdict(relation=relation, reason=reason, answer=answer)
