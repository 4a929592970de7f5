"""The Kungsholmskille engine benchmark: the row ``krypenv bench`` prints, as Krypkasino's."""

from __future__ import annotations

import pytest

from krypenv.kungsholmskille.bench import bench_engine


@pytest.mark.parametrize("batch", [1, 64])
def test_bench_engine_reports(batch: int) -> None:
    """bench_engine returns the Krypkasino-style row for a batch size (serial and parallel paths)."""
    row = bench_engine(batch, 0.05, players=3, seed=1)
    assert set(row) == {"batch", "players", "decisions_per_s", "deals_per_s", "bytes_per_deal"}
    assert row["batch"] == batch and row["players"] == 3 and row["bytes_per_deal"] == 832
    assert row["decisions_per_s"] >= 3 * row["deals_per_s"] > 0  # a deal has at least P decisions
