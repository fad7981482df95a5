"""Does a statement say that something changed? The words the writer's checks read (#18).

`changes_stance`: a detail the model would add to a memory that says a change in so many
words is a SUPERSEDE (no stance is rewritten in place). `no_change`: a `replaces` needs one.

A small model judges "the LATER statement replaces the EARLIER one" for a stance said again in
other words ("I don't drive" → "never learned to drive, no licence"), for a plan ("should really
switch banks") and for a question, as readily as for a change: each names the same thing as
the earlier statement, and a 1.5B model then says the earlier is no longer true. None of those
makes a belief untrue, and none says a change in words. So a `replaces` stands only if the
later statement

- says a change: a verb of change in any tense (switched, stopped, moved, sold, took up, broke
  up, retired, was born…), or a word that marks a state as new (now, these days, no longer,
  anymore, since, used to, from next week, for the first time, new, again); and
- is not a plan, a wish or a question (should, might, maybe, thinking of, want to, "?").

The lists are English and general (no benchmark's topics); a change told without any such
word ("I live in Leeds" after "I live in Bristol") is not linked, and stays beside the earlier
belief with its date: a missing link shows two beliefs, a wrong one hides a true belief.
"""

from __future__ import annotations

import re

from dcpm_cli.write.words import words

# Words that mark a state as new, whatever the verb.
_NEW_STATE = (
    r"now|nowadays|these days|any ?more|no longer|no more|since|from now on|as of|"
    r"from (?:this|next|last|the) \w+|lately|recently|at last|finally|"
    r"first time|used to|instead|after all|again|new|newly|former|ex"
)
# Verbs of change, stems with their inflections (sold/bought/left… spelled out).
_CHANGE_VERB = (
    r"switch\w*|chang\w*|mov(?:e|ed|es|ing)|stop\w*|quit\w*|start\w*|beg[ai]n\w*|"
    r"(?:gave|give|gives|giving|given) (?:up|away)|(?:took|take|takes|taking|taken) (?:up|over|on)|"
    r"sold|sell\w*|bought|buy\w*|left(?!-)|leav\w*|join\w*|drop\w*|ditch\w*|swap\w*|replac\w*|"
    r"upgrad\w*|downgrad\w*|cancel\w*|clos(?:e|ed|es|ing)|shut|end(?:ed|ing|s)?|finish\w*|"
    r"retir\w*|resign\w*|graduat\w*|marr(?:y|ied|ies)|divorc\w*|(?:broke|break|broken|split) up|"
    r"separat\w*|engaged|born|arriv\w*|died|dies|passed away|lost|"
    r"(?:got|get|gets|getting) (?:a|an|my|our|the|rid|into|back)|became|become\w*|"
    r"turn(?:ed|s)? (?:me |us |him |her |them )?into|(?:went|gone|go|going|goes|came|come|coming) back|"
    r"back (?:in|to|on|at)|cut (?:down|out|back|off)|upp(?:ed)|increas\w*|rais(?:e|ed)|bump\w*|"
    r"reduc\w*|lower\w*|doubl\w*|halv\w*|transferr?\w*|promot\w*|hired|fired|laid off|redundan\w*|"
    r"sign\w* up|enrol\w*|defer\w*|shelv\w*|postpon\w*|pull\w* out|step\w* down|hand\w* (?:over|in)|"
    r"adopt\w*|rehom\w*|convert\w*|migrat\w*|rewr[io]t\w*|trad\w* in|renew\w*|unsubscrib\w*|"
    r"delet\w*|uninstall\w*|install\w*|learn(?:ed|t)|passed|failed|recover\w*|diagnos\w*|"
    r"prescrib\w*|put (?:me|us|him|her|them) on|(?:taken|took) off|went (?:up|down|over|part|full)|"
    r"(?:moved|switched) (?:over|across)|relocat\w*|emigrat\w*|downsiz\w*|"
    # a phrasal verb around its object: "cut caffeine out", "gave it up", "took the job on"
    r"(?:cut|gave|giving|given|took|taken|packed) "
    r"(?:\w+ ){1,3}?(?:out|up|down|back|off|on|in)|"
    r"gone|took (?:a|an|the|my) \w+ (?:job|role|position)|accepted|appointed|elected"
)
_SAYS_CHANGE = re.compile(rf"\b(?:{_NEW_STATE}|{_CHANGE_VERB})\b", re.IGNORECASE)
# A change verb right after "never" is a stance said again ("never learned to drive").
_NEVER = re.compile(rf"\bnever (?:(?:really|even|ever) )?(?:{_CHANGE_VERB})\b", re.IGNORECASE)
# Strong words of change: a detail that says one is a change of stance.
_STANCE_CHANGED = re.compile(
    r"\b(no longer|any ?more|stopped|quit|gave up|switched|instead|used to|now|sold|moved|dropped|"
    r"changed|started|back to|again|left|new)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(
    r"\b(?:should|shall|might|maybe|perhaps|thinking (?:of|about)|considering|plan(?:ning|s)? to|"
    r"want(?:s|ing)? to|wanna|hop(?:e|es|ing) to|would like|'d like|wish\w*|tempted|someday|"
    r"about to|if only|in the future)\b",
    re.IGNORECASE,
)


# People in a speaker's life: a statement that opens on one of them ("My partner's started…")
# is about them. Words on one line name the same person ("my mum" is "my mother").
_PEOPLE = (
    "partner wife husband spouse boyfriend girlfriend fiance fiancé fiancee fiancée other-half",
    "ex",
    "son", "daughter",
    "kid kids child children",
    "baby babies",
    "mum mom mother mam mummy mommy",
    "dad father daddy",
    "parents folks",
    "brother", "sister", "sibling siblings", "twin",
    "grandma gran granny nan nana grandmother",
    "grandad granddad grandpa grandfather",
    "grandparents", "granddaughter", "grandson", "grandkids grandchildren",
    "aunt auntie", "uncle", "cousin", "nephew", "niece",
    "friend mate pal bestie",
    "flatmate roommate room-mate housemate",
    "neighbour neighbor",
    "colleague coworker co-worker",
    "boss manager",
    "landlord landlady",
    "in-laws",
    "stepdad", "stepmum stepmom", "stepson", "stepdaughter",
)  # fmt: skip
_SAME_PERSON = {w: set(line.split()) for line in _PEOPLE for w in line.split()}
_PERSON = "|".join(sorted((re.escape(w) for w in _SAME_PERSON), key=len, reverse=True))
_OPENS_ON_SOMEONE = re.compile(
    rf"^\W*(?:(?:so|oh|well|and|but|btw|apparently|turns out|guess what|news|update)\W+)*"
    rf"(?:my|our|the user's|user's)\s+(?:\w+\s+)?({_PERSON})(?:s|es)?\b(?:\s+([A-Z][\w'-]*))?",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours|ourselves|"
    r"user|user's)\b",
    re.IGNORECASE,
)


def someone_else(earlier: str, later: str) -> str:
    """Why `later` cannot replace `earlier` because it is another person's ('' if it may): it
    opens on someone in the speaker's life ("My flatmate Joe has stopped doing parkrun"), says
    nothing more of the speaker (no I, me, my, we, our after that), and `earlier` names neither
    that person (in any word for them: mum or mother) nor the name given ("Joe"). A change of a
    partner's bedtime leaves the speaker's own as it was. (A name alone, "Tom gave up…", was
    tried and dropped: on a fresh set it took "Landlord's put the rent up" for a person.)"""
    later = later.replace("’", "'")
    m = _OPENS_ON_SOMEONE.search(later)
    if m is None or _FIRST_PERSON.search(later[m.end() :]):
        return ""
    words = _SAME_PERSON[m.group(1).lower()]
    name = m.group(2) if m.group(2) and m.group(2)[0].isupper() else None
    named = "|".join(re.escape(w) for w in words)
    if re.search(rf"\b(?:{named})(?:s|es)?\b", earlier, re.IGNORECASE):
        return ""
    if name and re.search(rf"\b{re.escape(name)}\b", earlier):
        return ""
    return f"the later statement is about someone else (their {m.group(1)}), not the speaker"


def no_change(text: str, words: str = "") -> str:
    """Why `text` (a later statement; `words`: the input it was taken from, if any) may not
    replace an earlier belief ('' if it may): it is a plan, a wish or a question, or neither it
    nor its input says a change."""
    if m := _PLAN.search(text):
        return f"a plan or a wish ({m.group(0)!r}), not a change"
    if text.rstrip().endswith("?"):
        return "a question, not a change"
    for t in (text, words):
        for m in _SAYS_CHANGE.finditer(t):
            if not any(n.start() <= m.start() < n.end() for n in _NEVER.finditer(t)):
                return ""
    return "it says no change (no word of change or of a new state)"


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def sentence_naming(phrase: str, text: str) -> str:
    """The sentence of `text` that holds most of `phrase`'s words (its end mark kept: "?" makes
    a question); `text` itself if none holds any."""
    want = set(words(phrase))
    best, most = text, 0
    for m in _SENTENCE.finditer(text):
        n = len(want & set(words(m.group(0))))
        if n > most:
            best, most = m.group(0).strip(), n
    return best


def changes_stance(new: str) -> str:
    """Why `new`, judged a detail added to a memory, is a change of stance ('' if it is not):
    it says a change in so many words."""
    if m := _STANCE_CHANGED.search(new):
        return f"the new item says a change ({m.group(0)!r})"
    return ""
