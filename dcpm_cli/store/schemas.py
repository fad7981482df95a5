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
