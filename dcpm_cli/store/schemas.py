"""Arrow schemas of the store's tables, as first created by migration m001."""

from __future__ import annotations

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

RAW = "raw_inputs"
ITEMS = "items"
EVENTS = "events"
NODES = "nodes"
EDGES = "edges"
META = "_meta"
MIGRATIONS = "_migrations"


def _vector(dim: int) -> pa.DataType:
    return pa.list_(pa.float32(), dim)


def initial(dim: int) -> dict[str, pa.Schema]:
    return {
        META: pa.schema([("key", pa.string()), ("value", pa.string())]),
        RAW: pa.schema(
            [
                ("id", pa.string()),
                ("text", pa.string()),
                ("role", pa.string()),
                ("session", pa.string()),
                ("source", pa.string()),
                ("said_at", TS),
                ("created_at", TS),
                ("content_hash", pa.string()),
                ("status", pa.string()),
                ("error", pa.string()),
                ("attempts", pa.int32()),
                ("vector", _vector(dim)),
            ]
        ),
        ITEMS: pa.schema(
            [
                ("id", pa.string()),
                ("kind", pa.string()),
                ("text", pa.string()),
                ("topic", pa.string()),
                ("subject", pa.string()),
                ("attribute", pa.string()),
                ("salience", pa.float32()),
                ("event_at", TS),
                ("created_at", TS),
                ("updated_at", TS),
                ("raw_ids", pa.list_(pa.string())),
                ("supersedes", pa.string()),
                ("superseded_by", pa.string()),
                ("content_hash", pa.string()),
                ("vector", _vector(dim)),
            ]
        ),
        EVENTS: pa.schema(
            [
                ("id", pa.string()),
                ("at", TS),
                ("op", pa.string()),
                ("item_id", pa.string()),
                ("raw_id", pa.string()),
                ("target_id", pa.string()),
                ("previous_text", pa.string()),
                ("new_text", pa.string()),
                ("detail", pa.string()),
            ]
        ),
        NODES: pa.schema(
            [
                ("id", pa.string()),
                ("kind", pa.string()),
                ("text", pa.string()),
                ("domain", pa.string()),
                ("behaviour", pa.string()),
                ("created_at", TS),
                ("updated_at", TS),
                ("vector", _vector(dim)),
                ("behaviour_vector", _vector(dim)),
            ]
        ),
        EDGES: pa.schema(
            [
                ("id", pa.string()),
                ("kind", pa.string()),
                ("src", pa.string()),
                ("dst", pa.string()),
                ("created_at", TS),
            ]
        ),
    }


# -- added by migration m002 ------------------------------------------------------------------

DREAM_RUNS = "dream_runs"
CALIBRATIONS = "dream_calibrations"


def dream_tables() -> dict[str, pa.Schema]:
    """The run log of `dcpm dream` and the per-embedder System 2 calibrations."""
    i32 = pa.int32()
    return {
        DREAM_RUNS: pa.schema(
            [
                ("id", pa.string()),
                ("started_at", TS),
                ("ended_at", TS),
                ("status", pa.string()),
                ("mode", pa.string()),
                ("core_schemas", pa.bool_()),
                ("extracted", i32),
                ("facts", i32),
                ("clusters", i32),
                ("clusters_done", i32),
                ("clusters_skipped", i32),
                ("clusters_failed", i32),
                ("nodes_created", i32),
                ("evidence_added", i32),
                ("edges_added", i32),
                ("behaviours", i32),
                ("collisions", i32),
                ("core_created", i32),
                ("actions_applied", i32),
                ("actions_rejected", i32),
                ("llm_calls", i32),
                ("prompt_tokens", pa.int64()),
                ("completion_tokens", pa.int64()),
                ("seconds", pa.float64()),
                ("rejections", pa.list_(pa.string())),
                ("declined", pa.list_(pa.string())),
                ("note", pa.string()),
                ("settings", pa.string()),
            ]
        ),
        CALIBRATIONS: pa.schema(
            [
                ("embedder", pa.string()),
                ("eps1", pa.float64()),
                ("eps2", pa.float64()),
                ("theta_beh", pa.float64()),
                ("theta_sem", pa.float64()),
                ("method", pa.string()),
                ("detail", pa.string()),
                ("created_at", TS),
            ]
        ),
    }


# -- added by migration m003 ------------------------------------------------------------------

PASSAGES = "passages"


def passages(dim: int) -> pa.Schema:
    """Windows of neighbouring user inputs in one session: the read path's context-level keys
    (text for BM25; vector = the normalised mean of the inputs' vectors)."""
    return pa.schema(
        [
            ("id", pa.string()),
            ("session", pa.string()),
            ("text", pa.string()),
            ("raw_ids", pa.list_(pa.string())),
            ("first_at", TS),
            ("last_at", TS),
            ("vector", _vector(dim)),
        ]
    )


# -- added by migration m005, dropped by m006 (claims are files now: store/claims.py) --------

CLAIMS = "claims"


def claims() -> pa.Schema:
    """Raw inputs a process is extracting now: who (host:pid:nonce) and until when the claim
    holds; a claim whose process is gone, or whose lease ran out, may be taken over."""
    return pa.schema([("raw_id", pa.string()), ("owner", pa.string()), ("expires_at", TS)])
