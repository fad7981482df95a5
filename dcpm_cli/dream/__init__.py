"""System 2, the nightly engine (`dcpm dream`), one module per step:

- `triage` and `cluster`: Phase 1, no LLM: the facts to consolidate, two-stage DBSCAN,
  each cluster's centroid and graph context;
- `induce`: Phase 2, one validated induction call per cluster;
- `sweep`: Phase 3 (opt-in): behavioural abstraction, collision scan, core schemas;
- `calibrate` (with `calibration_set`): per-embedder radii and collision thresholds;
- `integrity`: the graph's invariants, a check and a repair;
- `run`: one dream: lock, budgets (`budget`), phases, run log; `overview` feeds
  `dcpm schemas`.

Nothing heavy is imported here.
"""
