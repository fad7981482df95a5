"""The dream run log and the per-embedder calibrations System 2 keeps."""

from __future__ import annotations

from dcpm_cli.models import Calibration, DreamRun
from dcpm_cli.store import schemas as S
from dcpm_cli.store.base import Lance
from dcpm_cli.store.sql import quote as _q


class DreamLog:
    """One row per dream run (written at its start, updated as it goes) and the calibrations."""

    def __init__(self, lance: Lance) -> None:
        self._t = lance

    def save_run(self, run: DreamRun) -> None:
        """Insert or replace the log row of one run."""
        data = self._t.arrow_of([run], S.DREAM_RUNS)
        merge = self._t.table(S.DREAM_RUNS).merge_insert("id")
        merge.when_matched_update_all().when_not_matched_insert_all().execute(data)

    def runs(self, n: int | None = 10) -> list[DreamRun]:
        """The last n runs, newest first."""
        rows = self._t.rows(S.DREAM_RUNS, None)
        rows.sort(key=lambda r: r["started_at"], reverse=True)
        return [Lance.model_of(DreamRun, r) for r in rows[:n]]

    def declined_clusters(self) -> set[str]:
        """Signatures of fact clusters an induction call already declined (no valid action)."""
        out: set[str] = set()
        for r in self._t.rows(S.DREAM_RUNS, None, ["declined"]):
            out.update(r["declined"] or [])
        return out

    def forget_declined(self) -> int:
        """Clear the declines of every logged run (`dcpm dream --retry-declined`); returns how
        many signatures were forgotten. The caller is in a write section."""
        runs = [r for r in self.runs(None) if r.declined]
        forgotten = len({s for r in runs for s in r.declined})
        for r in runs:
            r.declined = []
        if runs:
            merge = self._t.table(S.DREAM_RUNS).merge_insert("id")
            merge.when_matched_update_all().when_not_matched_insert_all().execute(
                self._t.arrow_of(runs, S.DREAM_RUNS)
            )
        return forgotten

    def save_calibration(self, cal: Calibration) -> None:
        self._t.table(S.CALIBRATIONS).add(self._t.arrow_of([cal], S.CALIBRATIONS))

    def calibration_for(self, embedder_id: str) -> Calibration | None:
        """The newest calibration stored for this embedder, if any."""
        rows = self._t.rows(S.CALIBRATIONS, f"embedder = {_q(embedder_id)}")
        if not rows:
            return None
        return Lance.model_of(Calibration, max(rows, key=lambda r: r["created_at"]))
