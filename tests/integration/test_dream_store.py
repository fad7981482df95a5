"""The store verbs System 2 relies on, its migration, and the dream lock."""

from __future__ import annotations

import numpy as np
import pytest
from support.dream_fixtures import add_facts, fact_items

from dcpm_cli.errors import LockBusy
from dcpm_cli.models import Calibration, DreamRun, Edge, Node
from dcpm_cli.store import Store
from dcpm_cli.store import schemas as S


def test_a_store_from_before_the_dream_tables_gains_them(store: Store, embedder) -> None:
    import lancedb

    items = add_facts(store, embedder, fact_items())
    db = lancedb.connect(store.uri)
    for name in (S.DREAM_RUNS, S.CALIBRATIONS):
        db.drop_table(name)
    db.open_table(S.MIGRATIONS).delete("name = 'm002_dream_runs'")

    reopened = Store(store.uri, embedder)

    assert "m002_dream_runs" in reopened.applied_migrations()
    assert reopened.dream_runs() == [] and reopened.calibration_for(embedder.model_id) is None
    assert len(reopened.all_items()) == len(items)


def test_graph_verbs_round_trip(store: Store, embedder) -> None:
    items = add_facts(store, embedder, fact_items())
    a = Node(id="n_a", kind="schema", text="Works late before deadlines", domain="work")
    core = Node(id="n_core", kind="core_schema", text="Pushes through", domain="sleep+work")
    store.add_nodes([a, core], embedder.embed([a.text, core.text]))
    store.add_edges([Edge("evidence", "n_a", items[0].id), Edge("evidence", "n_a", items[1].id)])
    store.add_edges([Edge("member", "n_core", "n_a"), Edge("evidence", "n_a", items[0].id)])  # a repeat

    assert store.evidence_of("n_a") == sorted([items[0].id, items[1].id])
    assert store.members_of("n_core") == ["n_a"]
    assert store.evidence_counts() == {"n_a": 2}
    assert store.evidenced_fact_ids() == {items[0].id, items[1].id}
    assert store.nodes_with_evidence([items[1].id, "m_nothing"]) == {"n_a": [items[1].id]}
    assert store.node_counts() == {("schema", "work"): 1, ("core_schema", "sleep+work"): 1}

    nodes, sem, beh = store.node_vectors(["schema"])
    assert [n.id for n in nodes] == ["n_a"] and sem.shape == (1, 384) and np.isnan(beh).all()
    vector = embedder.embed(["persists under pressure"])[0]
    store.set_behaviours({"n_a": ("persists under pressure", vector)})
    nodes, sem, beh = store.node_vectors(["schema"])
    assert nodes[0].behaviour == "persists under pressure"
    assert float(beh[0] @ vector) == pytest.approx(1.0, abs=1e-5)
    assert float(sem[0] @ embedder.embed([a.text])[0]) == pytest.approx(1.0, abs=1e-5)

    facts, vectors = store.items_with_vectors(["fact"])
    assert len(facts) == len(items) and vectors.shape == (len(items), 384)


def test_the_run_log_keeps_each_run_once_newest_first(store: Store) -> None:
    first = DreamRun(id="d_1")
    store.save_dream_run(first)
    first.status, first.declined, first.rejections = "ok", ["sig1"], ["cluster 1: why"]
    store.save_dream_run(first)  # updated in place, not appended
    second = DreamRun(id="d_2", status="budget")
    store.save_dream_run(second)

    runs = store.dream_runs()
    assert [r.id for r in runs] == ["d_2", "d_1"]
    assert runs[1].status == "ok" and runs[1].rejections == ["cluster 1: why"]
    assert store.declined_clusters() == {"sig1"}
    assert store.last_dream_runs(1)[0]["status"] == "budget"


def test_the_newest_calibration_wins(store: Store) -> None:
    store.save_calibration(Calibration("m", 0.5, 0.4, 0.6, 0.4, method="first"))
    store.save_calibration(Calibration("m", 0.55, 0.4, 0.6, 0.4, method="second"))
    assert store.calibration_for("m").method == "second"  # type: ignore[union-attr]
    assert store.calibration_for("other") is None


def test_the_dream_lock_is_never_waited_for(store: Store) -> None:
    with store.dream_lock():
        with pytest.raises(LockBusy) as e, store.dream_lock():
            pass
        assert e.value.exit_code == 5
        # The writers' lock is a different one: `dcpm add` works during a dream.
        with store.write(timeout=1):
            pass
    with store.dream_lock():  # released
        pass
