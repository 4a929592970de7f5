"""Expert iteration's labelling on Ray (krypenv.training.distill --ray): the same shards, bit for bit, as here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tests.ray.helpers import NO_RAY

ray = pytest.importorskip("ray", reason=NO_RAY)

from krypenv.eval import ray_pool

from krypenv.training import distill as D
from krypenv.training.labels import ARRAYS, LabelSet


def shards(args: D.Args) -> list:
    """Label iteration 0 of ``args`` into its folder; the shards read back."""
    core = D.training_part(args.game).distill_core(args.players, args.preset, 1)
    labels = LabelSet(Path(args.out) / "labels", {"game": args.game, "players": args.players, "preset": args.preset,
                                                  "obs_size": core.dim, "n_actions": core.n_actions,
                                                  "state_size": core.state.shape[1]})
    D.label_iteration(args, labels, D.jobs_of(args, 0, ""))
    return [labels.read(p) for p in labels.shards()]


def test_labels_on_two_nodes_are_the_local_labels(two_nodes: str, tmp_path: Path) -> None:
    args = D.Args(out=str(tmp_path / "here"), teacher="pimc:samples=2", shards=3, games_per_shard=3, seed=11)
    here = shards(args)
    there = shards(dataclasses.replace(args, out=str(tmp_path / "ray"), ray=two_nodes))
    assert len(here) == len(there) == 3
    for (a, ca), (b, cb) in zip(here, there):
        assert all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True) for k in ARRAYS)
        assert {k: v for k, v in ca.items() if k != "seconds"} == {k: v for k, v in cb.items() if k != "seconds"}
    assert sum(ray_pool.LAST_NODES.values()) == 3 and len(ray_pool.LAST_NODES) == 2  # both nodes labelled
