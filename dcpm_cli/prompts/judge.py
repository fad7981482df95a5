"""Reconcile by meaning (#18): one question about two statements, "how does the LATER one relate
to the EARLIER one?", its reply a small enum.

A 1.5B model cannot name attributes consistently or choose among several candidates, but it
can judge one pair of texts. Each prompt's system message is a constant (its few-shot examples
included, on topics in no benchmark set), so a server that caches the prompt prefix pays only
for the pair. Prompts are variants measured on `benchmarks/pairs_dev.json`:

- `thing` (the default): the model first names, in a few words, what each statement is about,
  then answers two yes/no questions: the same thing of the same person? the EARLIER one still
  true? `replaces` only for (yes, no), everything else `unrelated`. Naming the things first is
  the model's own chain of thought, in its own words and for both texts in one reply (so
  nothing drifts between calls); the yes/no questions are what a 1.5B model answers well. A
  `replaces` is asked again with the LATER thing named first (`thing_later_first`) and stands
  only if both agree: the model tends to copy the first name into the second, and the copy
  rarely survives the other order.
- `four`: replaces / adds_detail / same / unrelated;
- `binary`: replaces / unrelated (everything that is not a change of the same thing);
- `both_true`: "can both be true at once?": replaces / both_true.

Each comes terse (the verdict only) or `_reasoned` (a short reason written before the verdict;
grammar-constrained decoding follows the schema's order). On qwen2.5-coder:1.5b on two busy
cores the reason costs ~48 completion tokens, 35-60 s a call, against ~8 tokens terse.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

Relation = Literal["replaces", "adds_detail", "same", "unrelated"]
RELATIONS: tuple[str, ...] = ("replaces", "adds_detail", "same", "unrelated")
# The enum sent lists "replaces" last, and the examples end with an unrelated pair: with
# "replaces" first and last, qwen2.5-coder:1.5b answered it for every pair of pairs_dev.

_RULES_FOUR = """You compare two things a person said about their own life, on different days.
Decide how the LATER statement relates to the EARLIER one:
- "replaces": both are about the SAME thing of the SAME person (the same job, home, diet,
  habit, tool, relationship, plan), and the LATER one says it changed, so the EARLIER one is no
  longer true (switched, stopped, quit, moved, gave up, a new value).
- "adds_detail": the same thing, and the LATER one only adds details; the EARLIER one is still
  true.
- "same": the LATER one says the same thing again in other words.
- "unrelated": anything else. Two statements about DIFFERENT things are unrelated even when the
  LATER one describes a change: a change of one thing never replaces another thing. A statement
  about another person (a sister, a friend, a partner) never replaces one about the speaker.
  A fact that stays true (where someone grew up, an allergy, a birthday) is never replaced.
{how}"""

_RULES_BINARY = """You compare two things a person said about their own life, on different days.
Decide whether the LATER statement replaces the EARLIER one:
- "replaces": both are about the SAME thing of the SAME person (the same job, home, diet,
  habit, tool, relationship, plan), and the LATER one says it changed, so the EARLIER one is no
  longer true (switched, stopped, quit, moved, gave up, a new value).
- "unrelated": anything else: the EARLIER one is still true. Two statements about DIFFERENT
  things are unrelated even when the LATER one describes a change: a change of one thing never
  replaces another thing. A statement about another person (a sister, a friend, a partner)
  never replaces one about the speaker. Details added to the same thing, or the same thing
  said again, are unrelated here too. A fact that stays true (where someone grew up, an
  allergy, a birthday) is never replaced.
{how}"""

_RULES_BOTH_TRUE = """You compare two things a person said about their own life, on different days.
Can both statements be true at the same time, today?
- "both_true": yes. This is the answer for statements about DIFFERENT things, even when the
  LATER one describes a change (a change of one thing leaves other things as they were), for a
  statement about another person (a sister, a friend, a partner), for details added to the same
  thing, for the same thing said again, and for facts that stay true (where someone grew up, an
  allergy, a birthday).
- "replaces": no: both are about the SAME thing of the SAME person (the same job, home, diet,
  habit, tool, relationship, plan), and the LATER one says it changed, so the EARLIER one is no
  longer true (switched, stopped, quit, moved, gave up, a new value).
{how}"""

_HOW_REASONED = """First write a short reason: name the thing each statement is about, and say if it is
the same thing. Then the relation."""
_HOW_TERSE = """Reply with the relation only."""

# Few-shot examples, on topics in no benchmark set: broadband, photography, beekeeping, a
# wristwatch, sea fishing, surfing, bread baking, fountain pens. (earlier, later, reason, relation)
_EXAMPLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "Our broadband is with Virgin.",
        "We switched the broadband to a local fibre company last week.",
        "Both are about the broadband provider; it changed from Virgin to a fibre company.",
        "replaces",
    ),
    (
        "I shoot everything on an old Canon DSLR.",
        "Started baking sourdough every weekend.",
        "The earlier is about a camera, the later about baking: different things.",
        "unrelated",
    ),
    (
        "I keep bees.",
        "My two hives are at the bottom of the orchard, Buckfast bees.",
        "Both are about beekeeping; the later adds where and which bees, the earlier is still true.",
        "adds_detail",
    ),
    (
        "I go sea fishing most weekends.",
        "My uncle Ray has given up fishing.",
        "The earlier is about the speaker's fishing, the later about the uncle's: different people.",
        "unrelated",
    ),
    (
        "I wear a Casio watch every day.",
        "My everyday watch is a Casio.",
        "Both say the everyday watch is a Casio.",
        "same",
    ),
    (
        "I keep bees.",
        "Sold the hives in the spring, I'm done with beekeeping.",
        "Both are about beekeeping; the later says it stopped.",
        "replaces",
    ),
    (
        "I surf at Croyde every Sunday.",
        "Gave away my fountain pens, I only type now.",
        "The earlier is about surfing, the later about pens: different things, though the later is a change.",
        "unrelated",
    ),
)

_MAP = {  # what each variant's answer is called in the four-way vocabulary, and back
    "four": {r: r for r in RELATIONS},
    "binary": {"replaces": "replaces", "unrelated": "unrelated"},
    "both_true": {"replaces": "replaces", "both_true": "unrelated"},
}


@dataclass(frozen=True)
class Statement:
    text: str
    said_at: datetime
    words: str = ""  # the input it was taken from, when the writer knows it (not sent to the model)


@dataclass(frozen=True)
class Prompt:
    """One variant of the question: a fixed system message and the reply's enum."""

    name: str
    rules: str
    answers: tuple[str, ...]
    reasoned: bool = False
    confirm: str | None = None  # these variants' replaces is never asked again

    @property
    def system(self) -> str:
        shots = []
        for earlier, later, reason, relation in _EXAMPLES:
            answer = _answer_in(self.name, relation)
            said = f'"reason": "{reason}", ' if self.reasoned else ""
            shots.append(f'EARLIER: {earlier}\nLATER: {later}\n{{{said}"relation": "{answer}"}}')
        rules = self.rules.format(how=_HOW_REASONED if self.reasoned else _HOW_TERSE)
        return f"{rules}\n\nExamples:\n\n" + "\n\n".join(shots)

    def schema(self) -> dict[str, Any]:
        """The relation; when reasoned, the reason first; all required."""
        props: dict[str, Any] = {"reason": {"maxLength": 300, "title": "Reason", "type": "string"}}
        if not self.reasoned:
            props = {}
        answers = [a for a in self.answers if a != "replaces"] + ["replaces"]
        props["relation"] = {"enum": answers, "title": "Relation", "type": "string"}
        return {
            "properties": props,
            "required": list(props),
            "title": "Judgement",
            "type": "object",
        }

    def messages(self, earlier: Statement, later: Statement) -> list[dict[str, str]]:
        return _messages(self.system, earlier, later)

    def model(self) -> type[Judgement]:
        """Validates a reply: the reason, and one of this variant's answers."""
        return _reply_model(self.answers)

    def relation(self, answer: str) -> str:
        """The answer in the four-way vocabulary (`RELATIONS`)."""
        return _MAP[self.name][answer]

    @property
    def labels(self) -> tuple[str, ...]:
        """The relations (of `RELATIONS`) this variant can answer."""
        return tuple(self.relation(a) for a in self.answers)

    def read(self, got: Any) -> tuple[str, str, str]:
        """A validated reply as (relation, reason, the model's own answer)."""
        return self.relation(got.relation), got.reason, got.relation


_THING_RULES = """You compare two things a person said about their own life, on different days.
First name, in two to four words, the thing each statement is about (whose thing, and what: a
job, a home, a diet, a habit, a tool, a person in their life, a plan), in the order the reply
asks for them. Use the same words when it is the same thing.
Then say whether they are about the same thing of the same person ("yes" or "no").
Then say whether the EARLIER statement is still true after the LATER one ("yes" or "no"). It is
still true when the LATER one is about a different thing, about another person, only adds
details, or says the same again. It is no longer true only when the LATER one says that same
thing changed, stopped or has a new value."""

# (earlier, later, what the earlier is about, what the later is about, same thing, earlier still
# true), on topics in no benchmark set.
_THING_EXAMPLES: tuple[tuple[str, str, str, str, str, str], ...] = (
    (
        "Our broadband is with Virgin.",
        "We switched the broadband to a local fibre company last week.",
        "broadband provider",
        "broadband provider",
        "yes",
        "no",
    ),
    (
        "I shoot everything on an old Canon DSLR.",
        "Started baking sourdough every weekend.",
        "camera",
        "baking",
        "no",
        "yes",
    ),
    (
        "I keep bees.",
        "My two hives are at the bottom of the orchard, Buckfast bees.",
        "beekeeping",
        "beekeeping",
        "yes",
        "yes",
    ),
    (
        "I go sea fishing most weekends.",
        "My uncle Ray has given up fishing.",
        "my fishing",
        "uncle Ray's fishing",
        "no",
        "yes",
    ),
    (
        "I wear a Casio watch every day.",
        "My everyday watch is a Casio.",
        "everyday watch",
        "everyday watch",
        "yes",
        "yes",
    ),
    (
        "I keep bees.",
        "Sold the hives in the spring, I'm done with beekeeping.",
        "beekeeping",
        "beekeeping",
        "yes",
        "no",
    ),
    (
        "I surf at Croyde every Sunday.",
        "Gave away my fountain pens, I only type now.",
        "surfing",
        "writing with pens",
        "no",
        "yes",
    ),
    (
        "My kayak is a red Dagger.",
        "Sold the Dagger, my kayak now is a yellow Pyranha.",
        "kayak",
        "kayak",
        "yes",
        "no",
    ),
)


class ThingReply(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    earlier_about: str = Field(max_length=120)
    later_about: str = Field(max_length=120)
    same_thing: Literal["yes", "no"]
    earlier_still_true: Literal["yes", "no"]


@dataclass(frozen=True)
class Thing:
    """The default question: what is each about, the same thing, the earlier still true?"""

    name: str
    later_first: bool = False
    confirm: str | None = None  # the variant that must agree before a replaces stands

    def _order(self) -> tuple[str, str]:
        return ("later_about", "earlier_about") if self.later_first else ("earlier_about", "later_about")

    @property
    def system(self) -> str:
        """The same for both orders (a server's prompt cache serves the confirming question
        too); only the schema puts the LATER thing first."""
        shots = []
        for earlier, later, e_about, l_about, same, still in _THING_EXAMPLES:
            named = f'"earlier_about": "{e_about}", "later_about": "{l_about}"'
            reply = f'{{{named}, "same_thing": "{same}", "earlier_still_true": "{still}"}}'
            shots.append(f"EARLIER: {earlier}\nLATER: {later}\n{reply}")
        return _THING_RULES + "\n\nExamples:\n\n" + "\n\n".join(shots)

    def schema(self) -> dict[str, Any]:
        """The two names (in this variant's order), then the two answers; all required."""
        props: dict[str, Any] = {k: {"maxLength": 60, "type": "string"} for k in self._order()}
        props["same_thing"] = {"enum": ["yes", "no"], "type": "string"}
        props["earlier_still_true"] = {"enum": ["yes", "no"], "type": "string"}
        return {"properties": props, "required": list(props), "title": "Judgement", "type": "object"}

    def messages(self, earlier: Statement, later: Statement) -> list[dict[str, str]]:
        return _messages(self.system, earlier, later)

    def model(self) -> type[ThingReply]:
        return ThingReply

    @property
    def labels(self) -> tuple[str, ...]:
        return ("replaces", "unrelated")

    def read(self, got: Any) -> tuple[str, str, str]:
        replaces = got.same_thing == "yes" and got.earlier_still_true == "no"
        relation = "replaces" if replaces else "unrelated"
        reason = (
            f"{got.earlier_about} / {got.later_about}; same thing: {got.same_thing}; "
            f"earlier still true: {got.earlier_still_true}"
        )
        return relation, reason, relation


def scripted_reply(relation: str, reason: str = "scripted") -> dict[str, str]:
    """A reply that every prompt here reads as `relation` (one of `RELATIONS`), for a scripted
    model (the tests, the harnesses that fake the model): the four-way `relation` with its
    reason, and the `thing` prompt's names and yes/no answers (it reads adds_detail and same as
    unrelated, and asks a replaces twice)."""
    return {
        "reason": reason,
        "relation": relation,
        "earlier_about": reason,
        "later_about": reason,
        "same_thing": "no" if relation == "unrelated" else "yes",
        "earlier_still_true": "no" if relation == "replaces" else "yes",
    }


def _messages(system: str, earlier: Statement, later: Statement) -> list[dict[str, str]]:
    user = (
        f"EARLIER (said {earlier.said_at:%Y-%m-%d}): {earlier.text}\n"
        f"LATER (said {later.said_at:%Y-%m-%d}): {later.text}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _answer_in(variant: str, relation: str) -> str:
    for answer, four in _MAP[variant].items():
        if four == relation:
            return answer
    return next(a for a, four in _MAP[variant].items() if four == "unrelated")


class Judgement(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)

    reason: str = Field(default="", max_length=600)
    relation: str


@functools.cache
def _reply_model(answers: tuple[str, ...]) -> type[Judgement]:
    relation: Any = Literal[answers]  # built per call: a type only at run time
    return create_model("Judgement", __base__=Judgement, relation=(relation, ...))


_VARIANTS = {
    "four": (_RULES_FOUR, RELATIONS),
    "binary": (_RULES_BINARY, ("replaces", "unrelated")),
    "both_true": (_RULES_BOTH_TRUE, ("replaces", "both_true")),
}
PROMPTS: dict[str, Prompt | Thing] = {
    "thing": Thing("thing", confirm="thing_later_first"),
    "thing_later_first": Thing("thing_later_first", later_first=True),
} | {
    f"{name}{'_reasoned' if reasoned else ''}": Prompt(name, rules, answers, reasoned)
    for name, (rules, answers) in _VARIANTS.items()
    for reasoned in (False, True)
}
DEFAULT = "thing"
