"""``krypenv bench``'s registry of benchmarks: every game's, in the games' order whatever was imported first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from krypenv import bench
from krypenv.games import GAMES


def test_every_game_registers_its_benchmarks_under_its_name() -> None:
    """Loading the games registers at least one batched and one plain benchmark per game, each marked with it."""
    bench.load_games()
    for name in GAMES:
        mine = {b for b, game in bench.GAME_OF.items() if game == name}
        assert mine & set(bench.BATCH_BENCHMARKS), name
        assert mine & set(bench.BENCHMARKS), name


def test_output_order_follows_the_registry_not_the_import_order() -> None:
    """The same key order when the games' benchmarks were registered in reverse (a later game imported first)."""
    bench.load_games()
    for registry in (bench.BATCH_BENCHMARKS, bench.BENCHMARKS):
        reverse = dict(reversed(list(registry.items())))
        ordered = [name for name, _ in bench._in_game_order(reverse)]
        games = [bench.GAME_OF.get(name) for name in ordered]
        ranks = [list(GAMES).index(g) if g in GAMES else len(GAMES) for g in games]
        assert ranks == sorted(ranks), ordered


def test_rate_per_s_counts_only_the_timed_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU benchmarks' CPU twins: the warm-up call is not counted, the timed calls are, until the time is up."""
    from krypenv import bench as B

    clock = iter(range(100))
    monkeypatch.setattr(B.time, "perf_counter", lambda: float(next(clock)))
    made = []

    def play() -> int:
        made.append(len(made) + 1)  # 1, 2, 3, ... units per call
        return made[-1]

    # start at 0; after call 2 (the first timed) the clock reads 1 < 3, after call 3 it reads 2, after 4 it reads 3
    assert B.rate_per_s(play, 3.0) == (2 + 3 + 4) / 4
    assert len(made) == 4


def test_gpu_engine_twin_plays_each_row_from_its_own_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU twin of a game's GPU engine benchmark: rows seeded 1, 2, …, the streams carried from call to call, the
    rate the decisions written per call over the time; the launch list and the bytes passed through."""
    from krypenv import bench as B
    from krypenv.rng import seed_range

    clock = iter(range(100))
    monkeypatch.setattr(B.time, "perf_counter", lambda: float(next(clock)))
    seen = []

    def cpu_play(rng: np.ndarray, decisions: np.ndarray) -> None:
        assert decisions.dtype == np.int64 and decisions.shape == (3,)  # the compiled twins' counts (no recompile)
        seen.append(rng.copy())
        decisions[:] = np.arange(len(decisions)) + 1
        rng += np.uint64(1)

    launch = lambda deals: (deals,)
    args, rate, nbytes = B.gpu_engine("R", "D", launch, 3, cpu_play, 77)
    assert args == {"rng": "R", "decisions": "D", "launch": launch} and nbytes == 77
    # the warm-up call, then three timed ones of 6 decisions (the clock reads 1, 2, 3 after them; 4 at the division)
    assert rate(2.5) == 3 * 6 / 4
    assert np.array_equal(seen[0], seed_range(1, 3))
    assert [int(r[0] - seen[0][0]) for r in seen] == [0, 1, 2, 3]


def test_interleaved_rounds_alternate_the_order() -> None:
    """experiments/bench_compare.py's rounds: every label once a round, the order reversed every other round."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
    from bench_compare import interleaved

    calls: list[str] = []
    runs = interleaved(["a", "b", "c"], 3, lambda label: calls.append(label) or f"{label}{len(calls)}")
    assert calls == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    assert runs == {"a": ["a1", "a6", "a7"], "b": ["b2", "b5", "b8"], "c": ["c3", "c4", "c9"]}
