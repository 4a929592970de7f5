"""krypenv.training.average: the loss against a numpy oracle, the reservoir's sampling probability, the ring, polyak;
selfplay's ``--average`` options each land, the last iterate is untouched and the average is measured, exported and
resumed."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch

from krypenv import agents
from krypenv.training.average import Averager, Buffer, cross_entropy, policy_probabilities, polyak
from krypenv.training.mmdnet import Policy
from krypenv.training.selfplay import Args, main
from tests.training.exact import nash_conv_of

FAST = {"device": "cpu", "preset": "tiny", "num_envs": 16, "num_steps": 8, "hidden": 8, "progress": False,
        "tensorboard": False, "update": "critic", "magnet_every": 0, "seed": 5}


def test_cross_entropy_is_the_numpy_oracle_s() -> None:
    """−Σ target·log π over the legal actions, averaged over rows; illegal entries (any value) count nothing."""
    rng = np.random.default_rng(0)
    mask = rng.random((50, 7)) < 0.6
    mask[:, 3] = True
    logits = np.where(mask, rng.normal(size=mask.shape), -1e9)
    top = logits.max(1, keepdims=True)
    logp = logits - top - np.log(np.exp(logits - top).sum(1, keepdims=True))
    target = np.where(mask, rng.random(mask.shape), 0.0)
    target /= target.sum(1, keepdims=True)
    want = np.mean([-sum(target[i, a] * logp[i, a] for a in range(7) if mask[i, a]) for i in range(50)])
    noisy = np.where(mask, target, 5.0)  # garbage where illegal: must be ignored
    got = cross_entropy(torch.tensor(logp), torch.tensor(noisy), torch.tensor(mask))
    assert float(got) == pytest.approx(want, rel=1e-9)


def _kept(kind: str, size: int, batches: list[int], seed: int) -> np.ndarray:
    """The stream numbers a buffer holds after offering rows 0, 1, ... in batches of the given sizes."""
    buf = Buffer(kind, size, 1, 2, torch.int64, seed)
    n = 0
    for b in batches:
        rows = torch.arange(n, n + b)[:, None]
        buf.add(rows, torch.ones((b, 2), dtype=torch.bool), lambda o, m: torch.full(m.shape, 0.5))
        n += b
    return buf.obs[:buf.filled, 0].numpy()


@pytest.mark.parametrize("batches", [[1] * 40, [40], [7, 3, 20, 10], [5, 35]])
def test_the_reservoir_keeps_every_row_with_probability_size_over_rows(batches: list[int]) -> None:
    """Over 3,000 seeds each of 40 rows offered (one at a time or in batches) is held with probability 10/40; the
    buffer holds 10 distinct rows.  5 binomial standard deviations (0.04) of tolerance a row; and the first 10 rows
    together (kept before any draw, each later draw evicting one: an off-by-one in the draw moves them by 0.02), 5 of
    their mean's standard deviations (0.013)."""
    trials, size, n = 3000, 10, sum(batches)
    counts = np.zeros(n)
    for seed in range(trials):
        kept = _kept("reservoir", size, batches, seed)
        assert len(kept) == size and len(set(kept.tolist())) == size
        counts[kept] += 1
    p = size / n
    assert np.abs(counts / trials - p).max() < 5 * np.sqrt(p * (1 - p) / trials)
    assert abs(counts[:size].mean() / trials - p) < 5 * np.sqrt(p * (1 - p) / (trials * size))


def test_the_reservoir_fills_first_and_the_ring_keeps_the_last() -> None:
    """Until full, both hold every row; the ring then holds the last ``size`` rows whatever the batches."""
    assert sorted(_kept("reservoir", 10, [3, 4], 0)) == list(range(7))
    assert sorted(_kept("ring", 10, [3, 4], 0)) == list(range(7))
    assert sorted(_kept("ring", 10, [3, 4, 12, 5], 0)) == list(range(14, 24))
    assert sorted(_kept("ring", 1, [3], 0)) == [2]


@pytest.mark.parametrize(("kw", "name"), [({"kind": "fifo"}, "kind"), ({"size": 0}, "size")])
def test_a_bad_buffer_is_refused_naming_it(kw: dict, name: str) -> None:
    """A kind other than reservoir or ring, a size under 1: ValueError naming it; size 1 is accepted."""
    with pytest.raises(ValueError, match=name):
        Buffer(**{"kind": "ring", "size": 4, "obs_size": 1, "n_actions": 2, "obs_dtype": torch.int8, "seed": 0, **kw})
    Buffer("reservoir", 1, 1, 2, torch.int8, 0)


def test_batches_come_from_the_filled_rows_only() -> None:
    """A half-filled buffer's batches hold offered rows only (not the zeros of empty slots)."""
    buf = Buffer("ring", 100, 1, 2, torch.int64, 0)
    buf.add(torch.arange(1, 6)[:, None], torch.ones((5, 2), dtype=torch.bool), lambda o, m: torch.ones(m.shape))
    obs, _, probs = buf.batch(500)
    assert set(obs[:, 0].tolist()) == {1, 2, 3, 4, 5} and bool((probs == 1).all())



def test_an_empty_buffer_refuses_a_batch_naming_it() -> None:
    """A batch before any row was offered is a clear error, not rows of zeros (the buffer starts empty)."""
    buf = Buffer("reservoir", 10, 1, 2, torch.int64, 0)
    with pytest.raises(ValueError, match="buffer is empty"):
        buf.batch(4)
    buf.add(torch.ones((1, 1), dtype=torch.int64), torch.ones((1, 2), dtype=torch.bool), lambda o, m: m.float() / 2)
    assert buf.filled == 1 and len(buf.batch(4)[0]) == 4



def test_the_buffer_draws_from_its_seed() -> None:
    """Two reservoirs of one seed keep the same rows and draw the same batches; another seed differs."""
    def run(seed: int) -> tuple[list[int], list[int]]:
        buf = Buffer("reservoir", 20, 1, 2, torch.int64, seed)
        for start in range(0, 400, 50):
            buf.add(torch.arange(start, start + 50)[:, None], torch.ones((50, 2), dtype=torch.bool),
                    lambda o, m: m.float())
        return buf.obs[:, 0].tolist(), buf.batch(30)[0][:, 0].tolist()

    assert run(7) == run(7) and run(7) != run(8)
@pytest.mark.parametrize("kind", ["reservoir", "ring"])
def test_the_average_network_fits_its_buffer(kind: str) -> None:
    """Fitted to one decision's probabilities (0.7, 0.2, 0.1) for 300 steps at lr 1e-2, the average network
    plays them to within 0.02: the Adam steps move it (a near-1 eps would leave it near its start)."""
    torch.manual_seed(3)
    net = Policy(4, 3, 8, 1)
    avg = Averager(net, kind, 8, 1e-2, 300, 16, 0.0, torch.int64, 0)
    obs, mask = torch.tensor([[1, 0, 1, 0]]), torch.ones((1, 3), dtype=torch.bool)
    target = torch.tensor([[0.7, 0.2, 0.1]])
    avg.buffer.add(obs, mask, lambda o, m: target)
    avg.updated(net)
    assert torch.allclose(policy_probabilities(avg.net, obs, mask), target, atol=0.02)
    assert avg.loss == pytest.approx(float(-(target * target.log()).sum()), abs=0.05)


def test_policy_probabilities_are_the_whole_network_s() -> None:
    """The compact probabilities put back in every action's column equal the full network's."""
    torch.manual_seed(0)
    net = Policy(30, 9, 16, 2, critic=True)
    obs = (torch.rand(40, 30) < 0.2).to(torch.int8)
    mask = torch.rand(40, 9) < 0.4
    mask[:, 2] = True
    want = net(obs, mask)[0].exp().masked_fill(~mask, 0.0)
    assert torch.allclose(policy_probabilities(net, obs, mask), want, atol=1e-6)


def test_polyak_moves_the_parameters_that_far() -> None:
    """avg ← avg + rate·(net − avg), parameter by parameter."""
    torch.manual_seed(1)
    avg, net = Policy(5, 3, 4, 1), Policy(5, 3, 4, 1)
    before = [p.detach().clone() for p in avg.parameters()]
    polyak(avg, net, 0.3)
    assert all(torch.allclose(a, b + 0.3 * (p - b)) for a, b, p in zip(avg.parameters(), before, net.parameters()))


def _arrays(path: Path) -> dict[str, np.ndarray]:
    """A checkpoint's arrays."""
    with np.load(path) as z:
        return {k: z[k].copy() for k in z.files if k != "card"}


def _differ(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two checkpoints' arrays differ anywhere."""
    return any(not np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("kind", ["reservoir", "ring", "polyak"])
def test_the_average_leaves_the_last_iterate_alone_and_is_exported(kind: str, tmp_path: Path) -> None:
    """With --average the policy's run is bit for bit the one without; final-avg.npz is another network that plays,
    and the same seed repeats it."""
    kw = {**FAST, "total_timesteps": 3 * 128, "average_size": 100, "average_rate": 0.5}
    main(Args(**kw, out=str(tmp_path / "none")))
    main(Args(**kw, average=kind, out=str(tmp_path / "a")))
    main(Args(**kw, average=kind, out=str(tmp_path / "b")))
    assert not _differ(_arrays(tmp_path / "none" / "final.npz"), _arrays(tmp_path / "a" / "final.npz"))
    assert not (tmp_path / "none" / "final-avg.npz").exists()
    avg = _arrays(tmp_path / "a" / "final-avg.npz")
    assert _differ(avg, _arrays(tmp_path / "a" / "final.npz"))
    assert not _differ(avg, _arrays(tmp_path / "b" / "final-avg.npz"))
    card = agents.load(f"mlp:{tmp_path / 'a' / 'final-avg.npz'}").card
    assert card["trained"]["policy"] == f"average ({kind})" and card["trained"]["args"]["average"] == kind


@pytest.mark.parametrize(("base", "change"), [
    ({"average": "ring"}, {"average": "reservoir"}), ({"average": "ring"}, {"average": "polyak"}),
    ({"average": "ring"}, {"average_size": 50}), ({"average": "reservoir", "average_size": 50}, {"average_size": 60}),
    ({"average": "ring"}, {"average_lr": 3e-3}), ({"average": "ring"}, {"average_steps": 3}),
    ({"average": "ring"}, {"average_batch": 7}), ({"average": "polyak"}, {"average_rate": 0.2})])
def test_each_average_option_changes_the_average(base: dict, change: dict, tmp_path: Path) -> None:
    """Three iterations with and without the option (same seed): the final average networks differ."""
    kw = {**FAST, "total_timesteps": 3 * 128, "average_size": 200, **base}
    main(Args(**kw, out=str(tmp_path / "a")))
    main(Args(**{**kw, **change}, out=str(tmp_path / "b")))
    assert _differ(_arrays(tmp_path / "a" / "final-avg.npz"), _arrays(tmp_path / "b" / "final-avg.npz"))


def test_nash_conv_avg_is_the_exported_average_s(tmp_path: Path) -> None:
    """nash_conv_avg in log.csv at the measured iterations equals the exact NashConv of that iteration's
    ckpt-ITERATION-avg.npz (and differs from the last iterate's)."""
    pytest.importorskip("pyspiel")
    main(Args(**FAST, rules="ranks=A-2-3,hand=2,table=2", total_timesteps=3 * 128, eval_every=2, checkpoint_every=1,
              average="ring", average_size=300, out=str(tmp_path)))
    with (tmp_path / "log.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [bool(r["nash_conv_avg"]) for r in rows] == [False, True, True]
    nash_conv, card = nash_conv_of(tmp_path / "ckpt-000002-avg.npz")
    assert float(rows[1]["nash_conv_avg"]) == pytest.approx(nash_conv, rel=1e-5)
    assert rows[1]["nash_conv_avg"] != rows[1]["nash_conv"]
    assert card["trained"]["nash_conv"] == pytest.approx(float(rows[1]["nash_conv_avg"]))


def test_a_resumed_run_continues_the_average(tmp_path: Path) -> None:
    """--resume loads the average network: after one more iteration of polyak it is the saved average moved
    average_rate of the way to the new last iterate."""
    kw = {**FAST, "average": "polyak", "average_rate": 0.25, "out": str(tmp_path)}
    main(Args(**kw, total_timesteps=2 * 128))
    saved = torch.load(tmp_path / "state.pt", weights_only=True)["average"]
    main(Args(**kw, total_timesteps=3 * 128, resume=True))
    net, avg = _arrays(tmp_path / "final.npz"), _arrays(tmp_path / "final-avg.npz")
    for key, name in [("pi_w", "pi.weight"), ("pi_b", "pi.bias")]:
        want = saved[name].numpy() + 0.25 * (net[key] - saved[name].numpy())
        assert np.allclose(avg[key], want, atol=1e-6), key
