"""Per-action move features (krypenv.agents.krypkasino.move_features) and the move-scoring policy
(krypenv.agents.krypkasino.move_policy)."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino.move_features import (
    MOVE_FEATURES,
    N_FEATS,
    N_MOVE,
    action_features,
    legal_features,
    row_features,
)

from krypenv.krypkasino.actions import CONFIRM, TAKE
from krypenv.krypkasino.cards import HAND_VALUE, POINTS
from krypenv.krypkasino.config import C_E0
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.vec import KrypkasinoVecEnv
from tests.krypkasino import oracle

COUNT = 2 * N_MOVE  # index of the move count


def positions(players: int, seed: int, n: int = 48, steps: int = 40):
    """(env, features) at the learner's decisions of n games under random play, every step of the way."""
    env = KrypkasinoVecEnv(n, seat="random", players=players, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield env, action_features(env.core, np.arange(n))
        masks = env.action_masks()
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))


def leads_to(view, move) -> list[int]:
    """The actions from the view's choice state that still lead to ``move`` (module docstring)."""
    card, cap = move
    if view.pending < 0:
        return [card]
    more = [TAKE + c for c in range(52) if cap[c] > view.fixed[c]]
    return more or [CONFIRM]


@pytest.mark.parametrize("players", [2, 3, 5])
def test_counts_are_the_moves_each_legal_action_leads_to(players):
    """Nonzero rows are exactly the legal actions (the mask), and each counts the legal moves it leads to."""
    choosing = 0
    for env, feats in positions(players, seed=players):
        assert feats.shape == (env.num_envs, 105, N_FEATS) and feats.dtype == np.float32
        np.testing.assert_array_equal(feats[:, :, COUNT] > 0, env.action_masks())
        for i in range(env.num_envs):
            view = env.core.seat_view(i, int(env.core.deals.turn[i]))
            want = np.zeros(105)
            for move in view.legal_moves:
                for a in leads_to(view, move):
                    want[a] += 1
            np.testing.assert_allclose(feats[i, :, COUNT] * 4, want)
            assert not feats[i, want == 0].any()  # an illegal action is all zero
            choosing += view.pending >= 0
    assert choosing > 0  # capture choices were among the positions


def cheapest(table: np.ndarray, v: int) -> int | None:
    """Brute force (tests/krypkasino/oracle.py): the fewest table-card points a card of played value v must take,
    None if it creeps."""
    card = v - 1 if v < 14 else 0  # a club of that value (an ace for 14)
    caps = oracle.maximal_captures(tuple(int(x) for x in table), card)
    return min(int(np.dot(cap, POINTS)) for cap in caps) if caps else None


def lookahead(view, card: int, left: np.ndarray) -> dict[str, float]:
    """Features 10-14 by brute force: the compulsory captures of unseen cards and of our remaining hand on ``left``."""
    unseen = view.unseen.astype(np.int64)
    must = pts = 0.0
    for v in range(2, 15):
        k = int(unseen[HAND_VALUE == v].sum())
        cost = cheapest(left, v) if k else None
        if cost is not None:
            must, pts = must + k, pts + k * cost
    hand = view.hand.astype(np.int64).copy()
    hand[card] -= 1
    own_must = own_pts = 0.0
    for c in np.flatnonzero(hand):
        cost = cheapest(left, int(HAND_VALUE[c]))
        if cost is not None:
            own_must, own_pts = own_must + hand[c], own_pts + hand[c] * (cost + POINTS[c])
    n, own = max(int(unseen.sum()), 1), max(int(hand.sum()), 1)
    return {"card": POINTS[card] / 3, "opp_must": must / n, "opp_pts": pts / n / 5, "own_must": own_must / own,
            "own_pts": own_pts / own / 5}


def test_single_move_features_are_what_the_move_does():
    """Where an action leads to one move, min = max = that move's points, creep, cards taken, what is left, and the
    compulsory captures one play ahead (checked against the brute-force oracle on tables of up to 12 cards)."""
    checked = ahead = 0
    for env, feats in positions(2, seed=11, steps=30):
        for i in range(env.num_envs):
            view = env.core.seat_view(i, int(env.core.deals.turn[i]))
            on_table = int(view.table.sum())
            for card, cap in view.legal_moves:
                acts = leads_to(view, (card, cap))
                if len(acts) != 1 or feats[i, acts[0], COUNT] * 4 != 1:
                    continue
                f = feats[i, acts[0]]
                np.testing.assert_array_equal(f[:N_MOVE], f[N_MOVE:COUNT])
                taken = int(cap.sum())
                left = view.table - cap
                if taken == 0:
                    left[card] += 1
                got = dict(zip(MOVE_FEATURES, f[:N_MOVE]))
                assert got["pts"] == pytest.approx(T.points_now(view.table, on_table, card, cap) / 10)
                assert got["creep"] == (taken == 0) and got["sweep"] == (taken > 0 and taken == on_table)
                assert got["taken"] == pytest.approx(taken / 5)
                assert got["left"] == pytest.approx(int(left @ POINTS) / 10)
                assert got["after"] == pytest.approx(left.sum() / 10)
                assert 0 <= got["setup"] <= 2 and 0 <= got["risk"] <= 1
                checked += 1
                if left.sum() <= 12 and ahead < 300:
                    for name, value in lookahead(view, card, left).items():
                        assert got[name] == pytest.approx(value, abs=1e-6), name
                    ahead += 1
    assert checked > 500 and ahead == 300


def test_features_do_not_depend_on_hidden_cards():
    """Swapping cards between the opponent's hand and the undealt deck changes no feature (public information only)."""
    env, before = next(positions(2, seed=5, n=32, steps=1))
    st = env.core.deals.state
    rng = np.random.default_rng(0)
    swapped = 0
    for i in range(env.num_envs):
        opp = 1 - int(st[i, kernels.TURN])
        hand = kernels.HANDS + 52 * opp
        held = [c for c in range(52) if st[i, hand + c] > 0]
        pos = int(st[i, kernels.POS])
        for _ in range(3):
            x = int(rng.choice(held))
            p = int(rng.integers(pos, 104))
            y = int(st[i, kernels.DECK + p])
            if x == y or st[i, hand + x] == 0:
                continue
            st[i, hand + x] -= 1
            st[i, hand + y] += 1
            st[i, kernels.DECK + p] = x
            swapped += 1
    after = action_features(env.core, np.arange(env.num_envs))
    assert swapped > 40
    np.testing.assert_array_equal(before, after)


def test_parallel_and_serial_agree_and_batches_do_not_matter():
    env, _feats = next(positions(3, seed=8, n=100, steps=1))
    for _ in range(5):
        env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
    whole = action_features(env.core, np.arange(100))  # parallel driver (>= 64)
    parts = np.concatenate([action_features(env.core, np.arange(k, min(k + 7, 100))) for k in range(0, 100, 7)])
    np.testing.assert_array_equal(whole, parts)
    np.testing.assert_array_equal(action_features(env.core, np.array([42, 3])), whole[[42, 3]])


@pytest.mark.parametrize("players, variant", [(2, "court"), (3, "spades"), (4, "court"), (6, "spades")])
def test_legal_features_are_the_legal_rows_of_every_actions_features(players: int, variant: str) -> None:
    """legal_features == action_features(...)[np.nonzero(mask)], card and capture-choice decisions, both drivers."""
    env = KrypkasinoVecEnv(80, seat="random", players=players, seed=11, set_aside=variant)
    env.reset()
    rng = np.random.default_rng(players)
    rules, choices = env.core.rules, 0
    for step in range(70):
        masks = env.action_masks().astype(np.int8)
        rows = np.arange(80) if step % 2 else rng.permutation(80)[:int(rng.integers(1, 64))]  # parallel, serial
        full = action_features(env.core, rows)
        args = (env.core.deals.state, env.core.choice, rows, masks[rows], players, rules.hand_size,
                variant == "spades")
        got = legal_features(*args)
        np.testing.assert_array_equal(got, full[np.nonzero(masks[rows])])
        if step % 10 == 0:  # whole state rows, as stored labels hold them
            whole = row_features(env.core.state[rows], int(env.core.packed[C_E0]), players, rules.hand_size,
                                 variant == "spades")
            np.testing.assert_array_equal(whole, full)
        choices += int((env.core.choice[rows, 0] >= 0).sum())
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    assert choices > 20  # capture choices were among the decisions


def test_a_mask_without_a_legal_action_is_refused() -> None:
    """A mask that calls a reachable action illegal would misplace features: a clear error, not a wrong row."""
    env = KrypkasinoVecEnv(4, seat="random", players=2, seed=3)
    env.reset()
    masks = env.action_masks().astype(np.int8)
    rules = env.core.rules
    args = (env.core.deals.state, env.core.choice, np.arange(4))
    legal_features(*args, masks, 2, rules.hand_size, False)
    masks[1, np.flatnonzero(masks[1])[-1]] = 0
    with pytest.raises(ValueError, match="a move reaches an action that the mask says is illegal"):
        legal_features(*args, masks, 2, rules.hand_size, False)
    for bad in (masks[:3], masks[:, :104], masks[:, :, None]):  # one row short, one action short, 3 dimensions
        with pytest.raises(ValueError, match=r"legal_features: masks of shape .* for 4 rows; expected \(4, 105\)"):
            legal_features(*args, bad, 2, rules.hand_size, False)
    good = env.action_masks().astype(np.int8)[[0, 2, 3]]  # 3 rows, 3 masks: the shape's other edge, accepted
    legal_features(args[0], args[1], np.array([0, 2, 3]), good, 2, rules.hand_size, False)


# --------------------------------------------------------------------------- the policy network and its VecEnv
pytest.importorskip("sb3_contrib")


def test_feature_vecenv_appends_the_learners_action_features():
    from krypenv.agents.krypkasino.move_policy import MoveFeatureVecEnv, input_dim

    env = KrypkasinoVecEnv(8, seat="random", players=3, seed=2)
    venv = MoveFeatureVecEnv(env)
    obs = venv.reset()
    assert obs.shape == (8, input_dim(351)) == (8, 351 + 105 * N_FEATS) and obs.dtype == np.float32
    assert venv.observation_space.contains(obs[0])
    for _ in range(60):
        np.testing.assert_array_equal(obs[:, :351], env._obs)
        np.testing.assert_array_equal(obs[:, 351:].reshape(8, 105, N_FEATS), action_features(env.core, np.arange(8)))
        masks = np.stack(venv.env_method("action_masks"))
        obs, _, dones, infos = venv.step(np.array([np.flatnonzero(m)[-1] for m in masks]))
        for i in np.flatnonzero(dones):
            term = infos[i]["terminal_observation"]
            assert term.shape == (input_dim(351),) and not term[351:].any()
    with pytest.raises(ValueError, match="wraps a KrypkasinoVecEnv"):
        MoveFeatureVecEnv(venv)


def test_scorer_is_shared_across_actions_and_ignores_illegal_rows():
    """Two legal actions with equal features differ only by their bias; an illegal action's features are never read."""
    import torch as th
    from krypenv.agents.krypkasino.move_policy import MoveScorer

    th.manual_seed(0)
    net = MoveScorer(10, [16])
    x = th.zeros(2, 10 + 105 * N_FEATS)
    acts = x[:, 10:].view(2, 105, N_FEATS)
    acts[:, 3, :] = acts[:, 40, :] = th.rand(N_FEATS) + 0.5
    acts[1, 77, :N_MOVE] = 9.0  # count 0: not a legal action
    logits = net.forward_actor(x)
    bias = net.bias(net.body(x[:, :10]))
    d = logits - bias
    assert th.allclose(d[:, 3], d[:, 40]) and (d[:, 3] != 0).all()
    assert (d[:, 77] == 0).all() and (d[:, 0] == 0).all()
