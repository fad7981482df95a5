"""Phase 3: behavioural abstraction, the collision test with the embedded encoder's own
thresholds, union-find groups, and core schemas only with the user's opt-in."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from support.dream_fixtures import dream_once

from dcpm_cli.dream.calibrate import PAPER, PROFILES, calibrate, thresholds_for
from dcpm_cli.dream.integrity import check_graph
from dcpm_cli.dream.sweep import Collision, collision_groups, collision_scan, is_collision, is_redundant
from dcpm_cli.embed import MINILM_ID
from dcpm_cli.llm import ScriptedLLM
from dcpm_cli.models import Edge, MemoryItem, Node

# The paper's example: a wellness schema and a gardening/teaching schema that share no
# vocabulary, whose behavioural descriptions both describe patient, process-oriented
# stewardship (paper: cos_sem 0.18, cos_beh 0.81 with bge-m3). Not in the calibration set.
WELLNESS = (
    "wellness",
    "Sticks to a ten-minute morning stretch, a glass of water before coffee and lights out by eleven, "
    "expecting the benefits to show over months",
    "Practises patient, process-oriented stewardship: small steady investments made every day, "
    "trusting slow accumulation over quick results",
)
GARDENING = (
    "gardening",
    "Tends the vegetable beds and mentors new teachers at her school, checking on seedlings and "
    "lesson plans every week without hurrying them",
    "Practises patient, process-oriented stewardship: consistent attentive care given over time, "
    "trusting gradual growth over forced results",
)
# Within one domain, the same regularity twice: high in both spaces.
RUNNING = (
    "fitness",
    "Runs five kilometres every morning before work",
    "Keeps a fixed daily exercise routine before work",
)
RUNNING_AGAIN = (
    "fitness",
    "Goes for a 5 km run each morning before starting work",
    "Maintains a consistent daily exercise routine before work",
)
CORE = (
    "User operates from an organic-cultivation mental model: meaningful outcomes are emergent "
    "systems requiring patient, consistent micro-investment over time."
)


def cosines(embedder, a: tuple[str, str, str], b: tuple[str, str, str]) -> tuple[float, float]:
    sem = embedder.embed([a[1], b[1]])
    beh = embedder.embed([a[2], b[2]])
    return float(beh[0] @ beh[1]), float(sem[0] @ sem[1])


def test_the_papers_pair_collides_with_the_embedded_encoders_thresholds(embedder) -> None:
    t = PROFILES[MINILM_ID]
    assert (t.theta_beh, t.theta_sem) != (PAPER.theta_beh, PAPER.theta_sem)  # not bge-m3's, reused

    beh, sem = cosines(embedder, WELLNESS, GARDENING)
    assert sem < 0.25 and beh > 0.7  # far apart in meaning, close in behaviour
    assert is_collision(beh, sem, t.theta_beh, t.theta_sem)

    beh, sem = cosines(embedder, RUNNING, RUNNING_AGAIN)
    assert not is_collision(beh, sem, t.theta_beh, t.theta_sem)
    assert is_redundant(beh, sem, t.theta_beh, t.theta_sem)


def test_the_minilm_defaults_are_what_calibration_gives(embedder) -> None:
    report = calibrate(embedder)
    got, pinned = report.calibration, PROFILES[MINILM_ID]
    for name in ("eps1", "eps2", "theta_beh", "theta_sem"):
        assert getattr(got, name) == pytest.approx(getattr(pinned, name), abs=0.011), name
    assert report.stats["redundant_flagged"] == "0/10"


@dataclass
class RenamedMiniLM:
    """The real MiniLM under another model id: an encoder dcpm has no thresholds for."""

    inner: object
    model_id: str = "my-finetuned-minilm"
    dim: int = 384

    def embed(self, texts):
        return self.inner.embed(texts)  # type: ignore[attr-defined]


def test_an_unknown_encoder_is_calibrated_not_given_someone_elses_thresholds(tmp_path, embedder) -> None:
    from dcpm_cli.store import Store

    other = RenamedMiniLM(embedder)
    store = Store(str(tmp_path / "other"), other)  # type: ignore[arg-type]

    cal, note = thresholds_for(store, other)  # type: ignore[arg-type]

    assert "no thresholds known for my-finetuned-minilm" in note
    assert cal.method == "builtin-set" and cal.theta_beh != PAPER.theta_beh
    assert store.calibration_for("my-finetuned-minilm") == cal  # stored: computed once
    assert thresholds_for(store, other)[1] == ""  # type: ignore[arg-type]


def schema_graph(store, embedder, schemas: dict[str, tuple[str, str, str]]) -> None:
    """Schema nodes (ids in the given order) each with one fact as evidence."""
    facts = [MemoryItem(id=f"m_{nid}", kind="fact", text=s[1], topic=s[0]) for nid, s in schemas.items()]
    store.add_items(facts, embedder.embed([f.text for f in facts]))
    nodes = [Node(id=nid, kind="schema", text=s[1], domain=s[0]) for nid, s in schemas.items()]
    store.add_nodes(nodes, embedder.embed([n.text for n in nodes]))
    store.add_edges([Edge("evidence", nid, f"m_{nid}") for nid in schemas])


def test_core_schemas_appear_only_with_the_opt_in(store, embedder) -> None:
    schema_graph(store, embedder, {"n_a": WELLNESS, "n_b": GARDENING, "n_c": RUNNING})

    llm = ScriptedLLM()  # any call would fail: without the opt-in there must be none
    out = dream_once(store, embedder, llm)
    assert out.run.status == "ok" and llm.calls == [] and not out.run.core_schemas
    assert [n.kind for n in store.all_nodes()].count("core_schema") == 0

    llm = ScriptedLLM().enqueue(
        {"behaviour": WELLNESS[2]}, {"behaviour": GARDENING[2]}, {"behaviour": RUNNING[2]}, {"text": CORE}
    )
    out = dream_once(store, embedder, llm, core_schemas=True)

    assert out.run.status == "ok" and out.run.core_schemas
    assert (out.run.behaviours, out.run.collisions, out.run.core_created) == (3, 1, 1)
    (core,) = [n for n in store.all_nodes() if n.kind == "core_schema"]
    assert core.text == CORE and core.domain == "gardening+wellness"
    assert store.members_of(core.id) == ["n_a", "n_b"]
    assert store.get_nodes(["n_c"])["n_c"].behaviour == RUNNING[2]
    assert "patient" in llm.calls[3]["messages"][-1]["content"]  # the members, with behaviours
    assert check_graph(store).ok

    # Behaviours are cached on the nodes and the group already has its core: no call at all.
    again = ScriptedLLM()
    out = dream_once(store, embedder, again, core_schemas=True)
    assert again.calls == [] and out.run.core_created == 0


def test_no_collision_mode_skips_phase_three_even_with_the_opt_in(store, embedder) -> None:
    schema_graph(store, embedder, {"n_a": WELLNESS, "n_b": GARDENING})
    llm = ScriptedLLM()
    out = dream_once(store, embedder, llm, core_schemas=True, mode="no-collision")
    assert llm.calls == [] and not out.run.core_schemas
    assert "core schemas are off in no-collision mode" in out.notes


def test_a_new_member_joins_the_existing_core_schema(store, embedder) -> None:
    schema_graph(store, embedder, {"n_a": WELLNESS, "n_b": GARDENING})
    dream_once(
        store,
        embedder,
        ScriptedLLM().enqueue({"behaviour": WELLNESS[2]}, {"behaviour": GARDENING[2]}, {"text": CORE}),
        core_schemas=True,
    )
    music = (
        "music",
        "Practises the cello for twenty minutes every evening and lets skill come in its own time",
        "Practises patient, process-oriented stewardship: steady attention given every day, "
        "trusting gradual growth over forced results",
    )
    schema_graph(store, embedder, {"n_d": music})

    (before,) = [n for n in store.all_nodes() if n.kind == "core_schema"]
    wider = (
        "User grows whatever they care about (body, garden, pupils, music) by small daily attention, "
        "trusting slow accumulation over forced results."
    )
    llm = ScriptedLLM().enqueue({"behaviour": music[2]}, {"text": wider})  # abstraction, core again
    out = dream_once(store, embedder, llm, core_schemas=True)

    (core,) = [n for n in store.all_nodes() if n.kind == "core_schema"]
    assert core.id == before.id and store.members_of(core.id) == ["n_a", "n_b", "n_d"]
    assert len(llm.calls) == 2 and out.run.core_created == 0
    assert "cello" in llm.calls[1]["messages"][-1]["content"]  # the new member is in the prompt
    assert (core.text, core.domain) == (wider, "gardening+music+wellness")
    assert core.updated_at > before.updated_at
    _, sem, _ = store.node_vectors(["core_schema"])
    assert float(sem[0] @ embedder.embed([wider])[0]) > 0.99  # E_sem follows the new text
    assert check_graph(store).ok


def test_collision_scan_compares_cross_domain_pairs_with_behaviours_only(embedder) -> None:
    rows = [WELLNESS, GARDENING, RUNNING, RUNNING_AGAIN]
    nodes = [Node(id=f"n_{i}", kind="schema", text=r[1], domain=r[0]) for i, r in enumerate(rows)]
    nodes[3].domain = "sport"  # the same regularity filed under another domain
    sem = embedder.embed([r[1] for r in rows])
    beh = embedder.embed([r[2] for r in rows])
    t = PROFILES[MINILM_ID]

    found, redundant = collision_scan(nodes, sem, beh, t.theta_beh, t.theta_sem)
    assert [(c.a, c.b) for c in found] == [("n_0", "n_1")] and redundant == 1

    beh[1] = np.nan  # no behavioural description yet: not compared
    assert collision_scan(nodes, sem, beh, t.theta_beh, t.theta_sem)[0] == []


def test_union_find_groups_strongest_first_and_caps_their_size() -> None:
    chain = [Collision(f"s{i}", f"s{i + 1}", 0.9 - i / 100, 0.1) for i in range(7)]
    chain.append(Collision("x", "y", 0.8, 0.1))
    groups = collision_groups(chain, max_group=4)
    assert groups == [["s0", "s1", "s2", "s3"], ["s4", "s5", "s6", "s7"], ["x", "y"]]


# Schemas as Phase 2 writes them from the sample journal, and behavioural descriptions in the
# plain, generic register a small instruct model answers the abstraction prompt in: no shared
# wording between the two that collide, none of the domain's own words.
JOURNAL_SCHEMAS = {
    "n_garden": (
        "gardening",
        "Raises tomato seedlings slowly and resists bigger pots or extra feed to hurry them along",
        "Shows patience and prefers gradual, consistent progress over quick results.",
    ),
    "n_mentor": (
        "work",
        "Mentors the new junior with small real tasks and a short check-in every morning",
        "Invests in steady, incremental development through small regular steps rather than rushing.",
    ),
    "n_crunch": (
        "work",
        "Works past midnight whenever a launch deadline is close",
        "Pushes through intense bursts of effort under time pressure, sacrificing rest to finish.",
    ),
    "n_alone": (
        "fitness",
        "Prefers running alone by the river to group exercise classes",
        "Seeks solitude to recharge and avoids social stimulation when drained.",
    ),
    "n_sleep": (
        "sleep",
        "Goes to bed at 10:30 and treats eight hours of sleep as non-negotiable",
        "Protects recovery with firm routines and puts rest before other demands.",
    ),
}


def test_abstraction_over_realistic_schemas_finds_the_one_cross_domain_pattern(store, embedder) -> None:
    schema_graph(store, embedder, JOURNAL_SCHEMAS)
    order = sorted(JOURNAL_SCHEMAS)  # the sweeper describes schemas in id order
    core = "User grows things by patient, steady, small investments rather than forcing fast results."
    llm = ScriptedLLM().enqueue(*({"behaviour": JOURNAL_SCHEMAS[n][2]} for n in order), {"text": core})

    out = dream_once(store, embedder, llm, core_schemas=True)  # the stored MiniLM thresholds

    assert out.run.behaviours == 5 and out.run.collisions == 1 and out.run.core_created == 1
    (c,) = out.sweep.collisions
    assert {c.a, c.b} == {"n_garden", "n_mentor"} and c.cos_sem < 0.3 and c.cos_beh >= 0.49
    (node,) = [n for n in store.all_nodes() if n.kind == "core_schema"]
    assert store.members_of(node.id) == ["n_garden", "n_mentor"] and node.domain == "gardening+work"
    # Each abstraction call saw its schema and its domain, and no other schema.
    for call, nid in zip(llm.calls[:5], order, strict=True):
        asked = call["messages"][-1]["content"]
        assert JOURNAL_SCHEMAS[nid][1] in asked and f"life domain: {JOURNAL_SCHEMAS[nid][0]}" in asked
    # The deadline crunch and the early nights are alike in neither space: no core schema there.
    assert all("n_crunch" not in (x.a, x.b) for x in out.sweep.collisions)
