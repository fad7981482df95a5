"""Facts for System 2 tests: realistic extracted facts in several life domains, written so
that each theme is one DBSCAN cluster under the embedded encoder's default radii, stored
directly as memory items (vectors from the real embedder)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from dcpm_cli.models import MemoryItem, short_hash

# theme → (topic, facts)
THEMES: dict[str, tuple[str, list[str]]] = {
    "deadlines": (
        "work",
        [
            "Worked until 1am to finish the sales deck before Monday's deadline",
            "Stayed up past midnight finishing the budget report before it was due",
            "Works late into the night whenever a project deadline is close",
            "Pulled an all-nighter to finish the tender documents before the deadline",
            "Worked until 2am the night before the release deadline",
        ],
    ),
    "insomnia": (
        "sleep",
        [
            "Could not fall asleep until 3am again last night",
            "Has been lying awake for hours most nights this month",
            "Wakes up at 4am and cannot get back to sleep",
            "Sleeps badly and struggles to fall asleep most nights",
        ],
    ),
    "running": (
        "fitness",
        [
            "Ran 8 km along the river before breakfast",
            "Goes running before breakfast three mornings a week",
            "Did a 10 km run on Saturday morning before breakfast",
            "Signed up for the city half marathon in May and runs every other morning",
        ],
    ),
}

# Facts that belong to no theme: noise for DBSCAN.
LONERS: list[tuple[str, str]] = [
    ("home", "Repainted the hallway a pale green"),
    ("travel", "Booked a train to Lisbon for the autumn"),
    ("family", "Her niece starts primary school in September"),
]


def fact_items(
    themes: dict[str, tuple[str, list[str]]] | None = None, *, loners: bool = True
) -> list[MemoryItem]:
    """One MemoryItem per fact, with stable ids and dates a few days apart."""
    themes = THEMES if themes is None else themes
    start = datetime(2026, 3, 1, 12, tzinfo=UTC)
    items: list[MemoryItem] = []
    rows = [(topic, text) for topic, texts in themes.values() for text in texts]
    if loners:
        rows += LONERS
    for i, (topic, text) in enumerate(rows):
        when = start + timedelta(days=3 * i)
        items.append(
            MemoryItem(
                id="m_" + short_hash("fixture", text),
                kind="fact",
                text=text,
                topic=topic,
                event_at=when,
                created_at=when,
                updated_at=when,
            )
        )
    return items


def add_facts(store: Any, embedder: Any, items: list[MemoryItem]) -> list[MemoryItem]:
    store.add_items(items, embedder.embed([i.text for i in items]))
    return items


def ids_of(items: list[MemoryItem], theme: str) -> list[str]:
    """The ids of a theme's facts, in the order they were written."""
    texts = set(THEMES[theme][1])
    return [i.id for i in items if i.text in texts]


# -- scripted induction replies ---------------------------------------------------------------


def create(kind: str, text: str, domain: str, facts: list[str] | None = None, ref: str | None = None) -> dict:
    action: dict[str, Any] = {"action": f"create_{kind}", "text": text, "domain": domain}
    if facts is not None:
        action["facts"] = facts
    if ref is not None:
        action["ref"] = ref
    return action


def evidence(node: str, facts: list[str] | None = None) -> dict:
    return {"action": "add_evidence", "node": node, "facts": facts or []}


def edge(src: str, dst: str, relation: str = "related_to") -> dict:
    return {"action": "add_edge", "src": src, "dst": dst, "relation": relation}


def reply(*actions: dict) -> dict:
    return {"actions": list(actions)}


LATE = "Works late into the night before deadlines"
SLEEPLESS = "Struggles to fall asleep and lies awake at night"
RUNNER = "Runs before breakfast several mornings a week"
CRUNCH = "May need help protecting sleep during the next deadline crunch"


def night_one() -> list[dict]:
    """Replies for the three fixture clusters (deadlines, insomnia, running), in order."""
    return [
        reply(
            create("schema", LATE, "work", ref="late"), create("intention", CRUNCH, "work", ["F3"], "crunch")
        ),
        reply(create("schema", SLEEPLESS, "sleep")),
        reply(create("schema", RUNNER, "fitness")),
    ]


def dream_once(store: Any, embedder: Any, llm: Any, writer: Any = None, **options: Any) -> Any:
    from dcpm_cli.dream.run import DreamOptions, dream
    from dcpm_cli.ops.check import check

    # As `dcpm dream` runs it: the store checked and repaired first.
    repair = lambda s: check(s, repair=True)  # noqa: E731
    return dream(store, embedder, llm, DreamOptions.resolve(**options), writer=writer, repair=repair)
