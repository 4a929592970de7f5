"""krypenv.training.mmdnet's compact arithmetic: the same values and gradients as the whole network, the same run.

The oracle is the whole network (:meth:`Policy.evaluate` without ``cols`` and ``acts``) on the same batch:
Hypothesis draws batches with columns that are 0 in every row (some negative values, some −0.0) and masks
that leave actions illegal in every row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from krypenv.training import mmdnet
from krypenv.training.mmdnet import LANES, Policy, compact, padded, probabilities, sample, used_columns
from krypenv.training.selfplay import Args, main


def batch(seed: int, rows: int, dim: int, actions: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations with about half the columns 0 everywhere (−0.0 in one of them) and a mask with about half
    the actions illegal everywhere, every row with a legal action."""
    g = torch.Generator().manual_seed(seed)
    obs = torch.randint(-3, 4, (rows, dim), generator=g).to(dtype) * (torch.rand(dim, generator=g) < 0.5)
    if dtype.is_floating_point:
        obs[:, 0] = -0.0
    mask = (torch.rand(rows, actions, generator=g) < 0.4) & (torch.rand(actions, generator=g) < 0.5)
    mask[torch.arange(rows), torch.randint(0, actions, (rows,), generator=g)] = True
    return obs, mask


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40), st.integers(1, 30), st.integers(1, 40),
       st.sampled_from([torch.int8, torch.float32]), st.booleans())
def test_compact_values_and_gradients_are_the_whole_network_s(seed: int, rows: int, dim: int, actions: int,
                                                              dtype: torch.dtype, critic: bool) -> None:
    """Log-probabilities of the legal actions, values, Q and every parameter's gradient: the whole network's."""
    obs, mask = batch(seed, rows, dim, actions, dtype)
    torch.manual_seed(seed)
    net = Policy(dim, actions, 8, 2, critic)
    outs, grads = [], []
    for small in (False, True):
        o, m, cols, acts = compact(obs, mask) if small else (obs, mask, None, None)
        logp, value, q = net.evaluate(o, m, cols, acts)
        full = torch.full((rows, actions), -1e9) if small else logp
        if small:
            full = full.index_copy(1, acts, logp)
        loss = (probabilities(logp, m) * torch.where(m, logp, 0.0)).sum() + value.pow(2).sum()
        if critic:
            loss = loss + q.pow(2).sum()
        net.zero_grad()
        loss.backward()
        outs.append((torch.where(mask, full, 0.0), value))
        grads.append([p.grad.clone() for p in net.parameters()])
    assert torch.allclose(outs[0][0], outs[1][0], atol=1e-5) and torch.allclose(outs[0][1], outs[1][1], atol=1e-5)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(*grads))


@pytest.mark.parametrize("critic", [False, True])
def test_evaluate_is_the_network_by_hand(critic: bool) -> None:
    """The whole network by hand: ReLU layers, a softmax over the legal actions, Q 0 off them, value Σ π·Q (critic)
    or the value head's one output; on the compact columns the same."""
    obs, mask = batch(7, 9, 12, 20, torch.float32)
    net = Policy(12, 20, 6, 2, critic)
    h = obs
    for layer in net.hidden:
        h = (h @ layer.weight.T + layer.bias).clamp_min(0)
    logits = h @ net.pi.weight.T + net.pi.bias
    p = torch.where(mask, logits.exp(), 0.0)
    p = p / p.sum(1, keepdim=True)
    out = h @ net.v.weight.T + net.v.bias
    q = torch.where(mask, out, 0.0) if critic else None
    value = (p * q).sum(1) if critic else out[:, 0]
    o, m, cols, acts = compact(obs, mask)
    for got_logp, got_value, got_q, legal in (net.evaluate(obs, mask) + (mask,), net.evaluate(o, m, cols, acts) + (m,)):
        want_p = p if legal is mask else p[:, acts]
        assert got_value.shape == (9,) and torch.allclose(got_value, value, atol=1e-5)
        assert torch.allclose(torch.where(legal, got_logp.exp(), 0.0), want_p, atol=1e-6)
        if critic:
            assert torch.allclose(got_q, q if legal is mask else q[:, acts], atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int64, torch.float32, torch.float64, torch.bool])
def test_used_columns_are_the_nonzero_ones_on_either_path(dtype: torch.dtype) -> None:
    """The CPU path (an OR of the bits) and the general one (ne(0).any(0)) both find every nonzero column, negative
    values included; −0.0 may count (a superset is exact), +0.0 never."""
    x = torch.zeros((5, 7), dtype=dtype)
    x[2, 1], x[4, 5], x[0, 6] = 1, (-1 if dtype != torch.bool else 1), 1
    if dtype.is_floating_point:
        x[3, 3] = -0.0
    want = torch.tensor([False, True, False, False, False, True, True])
    fast, general = used_columns(x), used_columns(x.t().contiguous().t())  # the second is not contiguous
    assert (fast[want]).all() and (general == want).all()
    assert fast[[0, 2, 4]].tolist() == [False, False, False]


def test_padded_adds_the_first_illegal_actions_up_to_the_lanes() -> None:
    """The legal actions in order, then the first others up to LANES; all of a game with fewer actions."""
    legal = torch.zeros(40, dtype=torch.bool)
    legal[[3, 17, 39]] = True
    got = padded(legal).tolist()
    assert len(got) == LANES and got == sorted(got) and {3, 17, 39} <= set(got)
    assert got == [*range(14), 17, 39]  # 3 legal, the first 13 others
    almost = torch.zeros(40, dtype=torch.bool)
    almost[5:20] = True  # 15 legal: one more
    assert padded(almost).tolist() == [0, *range(5, 20)]
    many = torch.ones(40, dtype=torch.bool)
    assert padded(many).tolist() == list(range(40))
    assert padded(torch.tensor([False, True, False])).tolist() == [0, 1, 2]


def test_compact_keeps_the_columns_and_actions_it_is_given() -> None:
    """Given columns and actions (an iteration's, a superset of the batch's) are the ones used."""
    obs, mask = batch(2, 6, 10, 20, torch.int8)
    cols, acts = torch.arange(10), torch.arange(20)
    o, m, got_cols, got_acts = compact(obs, mask, cols, acts)
    assert torch.equal(got_cols, cols) and torch.equal(got_acts, acts)
    assert torch.equal(o, obs.float()) and torch.equal(m, mask)


def test_probabilities_are_exp_with_illegal_entries_zero() -> None:
    """exp of the legal log-probabilities, exactly 0 elsewhere, and the same gradient as exp."""
    mask = torch.tensor([[True, False, True], [False, True, False]])
    logits = torch.randn(2, 3, requires_grad=True)
    logp = torch.log_softmax(logits.masked_fill(~mask, -1e9), -1)
    got = probabilities(logp, mask)
    want = logp.exp()
    assert torch.equal(got[~mask], torch.zeros(3)) and torch.allclose(got, want)
    g1 = torch.autograd.grad((got * torch.arange(3.0)).sum(), logits, retain_graph=True)[0]
    g2 = torch.autograd.grad((want * torch.arange(3.0)).sum(), logits)[0]
    assert torch.allclose(g1, g2)


def test_sample_on_compact_actions_picks_the_whole_network_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same uniforms pick the same actions from the whole mask and from its compact columns."""
    obs, mask = batch(3, 64, 10, 30, torch.int8)
    net = Policy(10, 30, 8, 2)
    draws = torch.rand(64, 1)
    monkeypatch.setattr(torch, "rand", lambda n, *_, **__: draws)
    with torch.no_grad():
        whole = sample(net.evaluate(obs, mask)[0], mask)
        o, m, cols, acts = compact(obs, mask)
        small = acts[sample(net.evaluate(o, m, cols, acts)[0], m)]
    assert torch.equal(whole, small) and mask[torch.arange(64), whole].all()


def test_sample_with_and_without_the_mask_and_one_uniform_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mask changes how, not what: the same uniforms, the same actions; a uniform on a cumulative probability
    picks that action; each row draws its own uniform (1,000 rows of two equal actions pick both)."""
    obs, mask = batch(4, 50, 10, 30, torch.int8)
    logp = Policy(10, 30, 8, 2).evaluate(obs, mask)[0].detach()
    draws = torch.rand(50, 1)
    with monkeypatch.context() as m:
        m.setattr(torch, "rand", lambda n, *_, **__: draws)
        assert torch.equal(sample(logp), sample(logp, mask))
        m.setattr(torch, "rand", lambda n, *_, **__: torch.full((n, 1), 0.5))  # on a cumulative probability: its action
        half = torch.log(torch.tensor([[0.5, 0.5, 0.0]]))
        assert sample(half, torch.tensor([[True, True, False]])).tolist() == [0]
    two = torch.log(torch.full((1000, 2), 0.5))
    assert set(sample(two, torch.ones(1000, 2, dtype=torch.bool)).tolist()) == {0, 1}


@pytest.mark.parametrize("update", ["ppo", "critic"])
def test_a_compact_run_is_the_whole_network_s(update: str, tmp_path: Path) -> None:
    """Three iterations on tiny with and without compact arithmetic, same seed: the same log and network (to
    rounding; the compact rollout, its update batch and its actions' indices among the compact columns)."""
    rows, nets = [], []
    for small in (True, False):
        out = tmp_path / str(small)
        rows.append(main(Args(device="cpu", preset="tiny", num_envs=32, num_steps=8, total_timesteps=3 * 256,
                              hidden=16, update=update, magnet_every=2, compact=small, progress=False,
                              tensorboard=False, seed=5, out=str(out))))
        with np.load(out / "final.npz") as z:
            nets.append({k: z[k].copy() for k in z.files if k != "card"})
    assert rows[0]["episodes"] == rows[1]["episodes"]
    for key in ("entropy", "kl_magnet", "pg_loss", "v_loss"):
        assert rows[0][key] == pytest.approx(rows[1][key], rel=1e-4, abs=1e-6)
    assert all(np.allclose(nets[0][k], nets[1][k], atol=1e-5) for k in nets[0])


def test_the_slow_exp_is_not_what_probabilities_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """probabilities never takes exp of an illegal entry's −1e9 (the slow path it exists to avoid)."""
    seen = []
    real = torch.Tensor.exp
    monkeypatch.setattr(torch.Tensor, "exp", lambda t: seen.append(float(t.min())) or real(t))
    mask = torch.tensor([[True, False, False]])
    mmdnet.probabilities(torch.log_softmax(torch.zeros(1, 3).masked_fill(~mask, -1e9), -1), mask)
    assert seen and min(seen) > -1e3
