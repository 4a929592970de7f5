"""krypenv.training.treemmd: action values and reach against OpenSpiel's, MMD's closed form, convergence to Nash.

Oracles: OpenSpiel's ``action_value.TreeWalkCalculator`` (each information state's action values and
reach probabilities under a policy, walked history by history) on Kuhn and Leduc poker; the closed
form of MMD's step written out with a softmax; and a small deal of Krypkasino's ``tiny``, whose exact
NashConv the learner must drive to near 0 in a few seconds.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import action_value

from krypenv import agents
from krypenv.openspiel.tree import GameTree
from krypenv.training.critic import TreeValues
from krypenv.training.treemmd import Args, fit_weights, main, mmd_step, parse
from tests.training.options import assert_refused

MICRO = "ranks=A-2-3,hand=2,table=2"


@pytest.mark.parametrize(("name", "seed"), [("kuhn_poker", 0), ("leduc_poker", 1)])
def test_values_are_openspiel_s(name: str, seed: int) -> None:
    """Q of every reached information state's legal actions and its reach probability, as OpenSpiel's walk gives."""
    game = pyspiel.load_game(name)
    tv = TreeValues(GameTree.load(game))
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(tv.legal.shape[1]), len(tv.obs)) * tv.legal
    probs[rng.random(len(probs)) < 0.2] *= rng.random(tv.legal.shape[1]) < 0.5  # some pure, some zero
    probs[probs.sum(1) == 0] = tv.legal[probs.sum(1) == 0]
    probs /= probs.sum(1, keepdims=True)
    q, seen = tv.values(probs)
    pol = os_policy.TabularPolicy(game)
    keys = tv.tree.keys
    for k, key in enumerate(keys):
        pol.policy_for_key(str(key))[:] = probs[tv.back[k]]
    calc = action_value.TreeWalkCalculator(game)
    calc.compute_all_states_action_values([pol] * game.num_players())
    checked = 0
    for k, key in enumerate(keys):
        p, o = int(tv.tree.info_player[k]), tv.back[k]
        reach = calc.info_state_prob[(p, str(key))]
        assert seen[o] == pytest.approx(reach, abs=1e-12)
        cf = calc.info_state_cf_prob[(p, str(key))]
        if cf > 1e-12:
            want = calc.info_state_cf_prob_by_q_sum[(p, str(key))] / cf
            np.testing.assert_allclose(q[o][tv.legal[o]], want[tv.legal[o]], atol=1e-9)
            checked += 1
    assert checked > len(keys) // 2


def test_mmd_step_is_the_closed_form() -> None:
    """log-softmax of (log π + η·Q + α·η·log ρ)/(1 + α·η) over the legal actions, −∞ off them."""
    rng = np.random.default_rng(0)
    legal = rng.random((50, 6)) < 0.6
    legal[:, 0] = True
    logp = np.where(legal, np.log(rng.dirichlet(np.ones(6), 50)), -np.inf)
    rho = np.where(legal, np.log(rng.dirichlet(np.ones(6), 50)), -np.inf)
    q = rng.normal(0, 3, (50, 6))
    eta, alpha = 0.4, 0.7
    got = mmd_step(logp, q, rho, legal, eta, alpha)
    for i in range(50):
        y = (logp[i, legal[i]] + eta * q[i, legal[i]] + alpha * eta * rho[i, legal[i]]) / (1 + alpha * eta)
        want = y - np.log(np.exp(y).sum())
        np.testing.assert_allclose(got[i, legal[i]], want, atol=1e-12)
        assert np.all(got[i, ~legal[i]] == -np.inf)


def test_it_converges_to_an_equilibrium_of_a_small_deal(tmp_path: Path) -> None:
    """tiny's A-2-3 deal (882 information states, uniform NashConv 3.31): exact NashConv under 0.01 in 100
    iterations (seeds 0-3 reach 0.0001-0.0008 there), logged; the final checkpoint is that network."""
    row = main(Args(rules=MICRO, iterations=100, eval_every=50, hidden=32, progress=False, tensorboard=False,
                    out=str(tmp_path)))
    with (tmp_path / "log.csv").open() as f:
        logged = [float(r["nash_conv"]) for r in csv.DictReader(f) if r["nash_conv"]]
    assert len(logged) == 2 and logged[-1] == row["nash_conv"] < 0.01
    tree = GameTree.load("krypkasino", "tiny", 2, ranks="A-2-3", hand=2, table=2)
    agent = agents.load(f"mlp:{tmp_path / 'final.npz'}")
    probs = tree.policy_of(lambda o, m: agent.action_probabilities(_Batch(o, m)))
    assert tree.nash_conv(probs)["nash_conv"] == pytest.approx(row["nash_conv"], rel=1e-4, abs=1e-6)


class _Batch:
    """What the mlp agent reads of a decision batch."""

    def __init__(self, obs: np.ndarray, mask: np.ndarray) -> None:
        self.obs, self.mask, self.rules = obs, mask, type("R", (), {"players": 2})()


@pytest.mark.parametrize(("field", "value"), [
    ("eta_schedule", "cosine"), ("magnet_schedule", "exp"), ("iterations", 0), ("fit_steps", 0), ("hidden", 0),
    ("layers", 0), ("schedule_start", 0), ("eval_every", 0), ("players", 0), ("magnet_coef", -0.1),
    ("magnet_every", -1), ("floor", -1.0), ("max_seconds", -1.0), ("eta", 0.0), ("learning_rate", 0.0),
    ("magnet_ema", 1.5), ("magnet_ema", -0.1), ("sample_decisions", -1)])
def test_args_refuse_a_bad_value_naming_it(field: str, value: object) -> None:
    """Every checked option: a ValueError that names it; the command line turns it into one usage line."""
    assert_refused(Args, parse, field, value)


def test_edges_of_the_checks_are_accepted() -> None:
    """The smallest allowed values pass (the checks are not off by one)."""
    Args(iterations=1, fit_steps=1, hidden=1, layers=1, schedule_start=1, eval_every=1, players=1, magnet_coef=0.0,
         magnet_every=0, floor=0.0, max_seconds=0.0, magnet_ema=0.0, sample_decisions=0)
    Args(magnet_ema=1.0)


def test_fit_weights_are_reach_plus_floor_or_sampled_counts() -> None:
    """Without sample_decisions: reach + floor × mean reach, exactly; with it: whole counts, 0 where the reach is 0,
    their mean over many draws sample_decisions × the observation's share of the reach."""
    seen = np.array([0.5, 0.3, 0.0, 0.2, 1.0])
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(fit_weights(seen, 0.1, 0, rng), seen + 0.1 * seen.mean())
    draws = np.stack([fit_weights(seen, 0.1, 1000, rng) for _ in range(2000)])
    assert np.array_equal(draws, np.round(draws)) and (draws[:, 2] == 0).all()
    np.testing.assert_allclose(draws.mean(0), 1000 * seen / seen.sum(), rtol=0.01)


def test_sample_decisions_changes_the_run(tmp_path: Path) -> None:
    """The same run with the sampled weights ends on another network (the option is read), and still learns."""
    finals = []
    for k, n in enumerate([0, 64]):
        main(Args(rules=MICRO, iterations=5, eval_every=5, hidden=8, sample_decisions=n, progress=False,
                  tensorboard=False, out=str(tmp_path / str(k))))
        with np.load(tmp_path / str(k) / "final.npz") as z:
            finals.append({name: z[name].copy() for name in z.files if name != "card"})
    assert any(not np.array_equal(finals[0][name], finals[1][name]) for name in finals[0])
