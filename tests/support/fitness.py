"""The paper's supersedes example as inputs and scripted replies, and what the writer must make
of it: one chain of five beliefs."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from dcpm_cli.ingest.text import parse_time
from dcpm_cli.models import JUDGED, RawInput
from dcpm_cli.store import Store
from support.replies import extraction, item, item_id, replaced

# The paper's supersedes example: one user's stance on group fitness, five times in seven months.
FITNESS = [
    (
        "2025-01-12",
        "Working out with other people is what keeps me going. The group pushes me to hit "
        "physical milestones I would never reach alone.",
        "Finds working out with others a motivator that pushes them to new physical milestones",
    ),
    (
        "2025-03-03",
        "I've stopped going to classes. These days I'd rather train alone with my headphones in.",
        "Prefers to work out alone and has stopped going to group classes",
    ),
    (
        "2025-04-27",
        "Went back to Zumba this week after all! I missed the music and the crowd.",
        "Has returned to Zumba classes and enjoys exercising in a group again",
    ),
    (
        "2025-06-14",
        "For my birthday I took six friends to my Zumba class. Best birthday workout ever.",
        # Told as a change ("now"), as a link needs (write/change.py): the paper's own words
        # here, a birthday at the class, say none.
        "Now brings friends along to their Zumba class, as they did for their birthday",
    ),
    (
        "2025-08-09",
        "Hiking has become my thing. It's more fulfilling than any fitness class, and I'd rather be "
        "somewhere welcoming and chatty than competitive.",
        "Finds hiking more fulfilling than fitness classes, prefers welcoming interactive "
        "environments over competitive ones",
    ),
]


def fitness_raws(session: str = "journal") -> list[RawInput]:
    return [
        RawInput(text=text, session=session, source="test", said_at=parse_time(day))
        for day, text, _ in FITNESS
    ]


def fitness_replies(raws: list[RawInput], start: int = 0) -> list[dict[str, Any]]:
    """Extraction (and, after the first, a judgement that it replaces the previous stance) per input."""
    out: list[dict[str, Any]] = []
    for i in range(start, len(raws)):
        day, _, stance = FITNESS[i]
        out.append(extraction(item(stance, kind="identity", attribute="group fitness", when=day)))
        if i > 0:
            out.extend(replaced())  # the previous stance, the only current one
    return out


def all_events(store: Store, ids: list[str]) -> list[Any]:
    seen: dict[str, Any] = {}
    for i in ids:
        for e in store.events_for(i):
            seen[e.id] = e
    return sorted(seen.values(), key=lambda e: e.at)


def assert_one_chain_of_five(store: Store, raws: list[RawInput]) -> None:
    ids = [item_id(r) for r in raws]
    for start in (ids[0], ids[2], ids[4]):  # any hit recovers the whole arc
        chain = store.chain(start)
        assert [c.id for c in chain] == ids
    chain = store.chain(ids[2])
    assert chain[0].supersedes is None
    assert chain[-1].superseded_by is None
    for old, new in pairwise(chain):
        assert old.superseded_by == new.id
        assert new.supersedes == old.id
    assert [c.text for c in chain] == [stance for _, _, stance in FITNESS]
    assert [c.event_at.date().isoformat() for c in chain] == [day for day, _, _ in FITNESS]
    assert [c.raw_ids for c in chain] == [[r.id] for r in raws]
    assert [c.is_current for c in chain] == [False, False, False, False, True]
    assert len(store.all_items()) == 5  # nothing deleted
    events = all_events(store, ids)
    ops = [e.op for e in events if e.op != JUDGED]
    assert sorted(ops) == ["ADD", "SUPERSEDE", "SUPERSEDE", "SUPERSEDE", "SUPERSEDE"]
    # Each link was judged, and the judgement names both stances.
    judgements = sorted((e.target_id, e.item_id) for e in events if e.op == JUDGED)
    assert judgements == sorted(pairwise(ids))
