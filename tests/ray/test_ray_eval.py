"""``krypenv eval --ray``: the same tournament on Ray (local, and a real two-node cluster) gives identical numbers."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.ray.helpers import NO_RAY, death_marker

ray = pytest.importorskip("ray", reason=NO_RAY)

from krypenv.eval import kungsholmskille as kille
from krypenv.eval import ray_pool
from krypenv.eval.krypkasino import EvalConfig, Results, evaluate

from krypenv.cli import main


def run_kille(config: kille.EvalConfig) -> tuple[kille.Results, list[str]]:
    """Evaluate Kungsholmskille episodes and keep every record line in game order."""
    lines: list[str] = []
    res = kille.evaluate(config, on_chunk=lambda part, ind: lines.extend(part.records or []))
    return res, lines


def assert_same_kille(a: tuple[kille.Results, list[str]], b: tuple[kille.Results, list[str]]) -> None:
    """Identical tables, episodes, money and records."""
    assert a[0].to_dict() == b[0].to_dict()
    for field in ("episodes", "money", "deals", "over", "pot_left", "winner"):
        assert (getattr(a[0].played, field) == getattr(b[0].played, field)).all(), field
    assert a[1] == b[1] and len(a[1]) == int(a[0].played.deals.sum())


def run(config: EvalConfig) -> tuple[Results, list[str]]:
    """Evaluate and keep every record line in game order."""
    lines: list[str] = []
    res = evaluate(config, on_chunk=lambda part, ind: lines.extend(part.records or []))
    return res, lines


def assert_same(a: tuple[Results, list[str]], b: tuple[Results, list[str]]) -> None:
    """Identical tables, games and records."""
    assert a[0].to_dict() == b[0].to_dict()
    assert (a[0].played.games == b[0].played.games).all()
    assert (a[0].played.scores == b[0].played.scores).all()
    assert (a[0].played.tabbes == b[0].played.tabbes).all()
    runs = 2 if a[0].config.independent else 1
    assert a[1] == b[1] and len(a[1]) == runs * len(a[0].played.games)


def test_local_ray_gives_identical_numbers(local_ray: None) -> None:
    config = EvalConfig(agents=("random", "greedy", "creeper"), deals=5, seed=7, batch=4, independent=True)
    local = run(config)
    on_ray = run(EvalConfig(**{**config.__dict__, "ray": ""}))
    assert_same(local, on_ray)
    assert sum(ray_pool.LAST_NODES.values()) == -(-len(local[0].played.games) // 4)


def test_local_ray_gives_identical_numbers_kungsholmskille(local_ray: None) -> None:
    """The same for a Kungsholmskille tournament: episodes of carried pots, money and records identical."""
    config = kille.EvalConfig(agents=("expert", "timid", "random"), players=3, deals=4, seed=7, batch=3)
    assert_same_kille(run_kille(config), run_kille(kille.EvalConfig(**{**config.__dict__, "ray": ""})))


def test_dead_worker_is_retried_and_numbers_stay(local_ray: None) -> None:
    spec = "tests.ray.helpers:DieOnce"
    config = EvalConfig(agents=(spec, "greedy"), deals=6, seed=3, batch=3)
    marker = death_marker()
    marker.unlink(missing_ok=True)
    on_ray = run(EvalConfig(**{**config.__dict__, "ray": ""}))
    assert marker.exists(), "no worker died: the test did not test a retry"
    marker.unlink()
    assert_same(run(config), on_ray)


def test_agent_error_on_ray_is_one_line(local_ray: None) -> None:
    config = EvalConfig(agents=("tests.ray.helpers:Broken", "random"), deals=2, ray="")
    with pytest.raises(ValueError, match=r"^an agent failed: KeyError: 'no such thing' at .*helpers\.py:\d+$"):
        evaluate(config)


@pytest.mark.slow
def test_two_node_cluster_tournament(two_nodes: str) -> None:
    config = EvalConfig(agents=("random", "expert"), deals=12, seed=11, batch=2)
    on_cluster = run(EvalConfig(**{**config.__dict__, "ray": two_nodes}))
    assert len(ray.nodes()) == 2
    assert len(ray_pool.LAST_NODES) == 2, f"chunks ran on {dict(ray_pool.LAST_NODES)}, not on both nodes"
    assert_same(run(config), on_cluster)
    kille_config = kille.EvalConfig(agents=("expert", "random"), players=4, deals=4, seed=11, batch=2)
    on_cluster_kille = run_kille(kille.EvalConfig(**{**kille_config.__dict__, "ray": two_nodes}))
    assert len(ray_pool.LAST_NODES) == 2, f"kille chunks ran on {dict(ray_pool.LAST_NODES)}, not on both nodes"
    assert_same_kille(run_kille(kille_config), on_cluster_kille)


@pytest.mark.parametrize("address, message", [
    ("127.0.0.1:1", "cannot reach the Ray cluster at '127.0.0.1:1'"),
    ("no-port", "bad Ray address 'no-port'"),
])
def test_bad_address_is_one_line(address: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    ray.shutdown()
    code = main(["eval", "--agents", "random,greedy", "--deals", "2", "--ray", address, "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code != 0 and message in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_core_imports_no_ray() -> None:
    code = ("import sys, krypenv, krypenv.agents, krypenv.eval.command, krypenv.eval.krypkasino, krypenv.cli, "
            "krypenv.krypkasino_v0, krypenv.kungsholmskille_v0; krypenv.agents.load('random'); "
            "assert 'ray' not in sys.modules, 'ray imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(__file__).parents[2]))
