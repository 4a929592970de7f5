"""experiments/selfplay_speed.py's bound: every matrix product recorded, its FLOPs counted, a whole run measured.

The oracle of the FLOP count is the network's shapes by hand: a forward and backward pass of a two-layer MLP
does 2·B·(in·hidden + hidden·out) multiply-adds×2 forward, and the backward's products (the weights' gradients,
and the input gradient of every layer but the first).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import selfplay_speed

from krypenv.training import selfplay


def test_the_products_of_a_forward_and_backward_pass_are_counted() -> None:
    """An MLP of 7 -> 5 -> 3 on 11 rows: forward 2·11·(7·5 + 5·3); backward the two weight gradients (the same) and
    the second layer's input gradient (2·11·3·5); no other product."""
    net = torch.nn.Sequential(torch.nn.Linear(7, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    x = torch.randn(11, 7)
    products = selfplay_speed.Products()
    with products:
        net(x).sum().backward()
    forward = 2 * 11 * (7 * 5 + 5 * 3)
    assert selfplay_speed.flops(products.calls) == forward + forward + 2 * 11 * 3 * 5
    assert len(products.calls) == 5
    cpu, wall = selfplay_speed.replay(products.calls, seconds=0.05)
    assert cpu > 0 and wall > 0


def test_a_measurement_reports_rates_and_the_bound(tmp_path: Path) -> None:
    """Two iterations of the trainer: rates and a bound, the FLOPs a decision those of the compact network (less than
    the whole network's forward pass ×(1 + 3·epochs) at the largest, more than one forward pass)."""
    settings = {**selfplay_speed.BASE, "hidden": 8, "num_envs": 16, "num_steps": 8, "update_epochs": 1,
                "num_minibatches": 1, "magnet_coef": 0.0}
    got = selfplay_speed.measure(selfplay, settings, 3, tmp_path)
    assert got["wall"] > 0 and got["cpu"] > 0 and got["bound_cpu"] > 0 and got["gflops"] > 0
    whole = 2 * (344 * 8 + 8 * 8 + 8 * 105 + 8) / 1e6
    assert 2 * 8 * 8 / 1e6 < got["mflop"] < whole * 4
