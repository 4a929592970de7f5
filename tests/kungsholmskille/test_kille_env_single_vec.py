"""The Kungsholmskille Gymnasium env and batched VecEnv: checkers, honest rewards, same seed same game everywhere."""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.agent_api import DecisionBatch
from krypenv.kungsholmskille.actions import BUD, KNACKA, N_ACTIONS
from krypenv.kungsholmskille.single import KungsholmskilleEnv
from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv


class FirstLegal:
    """A deterministic agent: the lowest legal action; records its batch sizes."""

    name = "first-legal"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def act(self, batch: DecisionBatch) -> np.ndarray:
        self.batch_sizes.append(len(batch))
        assert batch.mask.any(axis=1).all() and batch.obs.shape[0] == len(batch)
        return batch.mask.argmax(axis=1)


class Cheater:
    """Always bud, legal or not."""

    name = "cheater"

    def act(self, batch: DecisionBatch) -> np.ndarray:
        return np.zeros(len(batch), np.int64)


def lowest_legal(masks: np.ndarray) -> np.ndarray:
    """The lowest legal action of every row."""
    return masks.argmax(axis=1)


TEST_ID = "krypenv-test/Kungsholmskille-v0"  # the real id is registered by krypenv/__init__.py at integration


@pytest.mark.parametrize("players,seat", [(2, 1), (4, 0), (6, 3)])
def test_return_is_the_learners_net_money(players: int, seat: int) -> None:
    """Every money change of the learner reaches its own rewards, also those in opponents' turns (L3, L12, L14, L15)."""
    env = KungsholmskilleEnv(players=players, seat=seat)
    rng = np.random.default_rng(players)
    for seed in range(8):
        _obs, info = env.reset(seed=seed)
        total = 0.0
        while True:
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _obs, r, term, trunc, info = env.step(a)
            total += r
            if term or trunc:
                break
        assert total == env.core.money[0, seat] == info["money"][seat]
        if term:
            assert sum(info["money"]) == 0


def test_truncation_after_max_deals() -> None:
    """L16: everybody says bud; after max_deals budrundor the episode is truncated with the antes paid so far."""
    bud = type("Bud", (), {"act": lambda self, b: np.where(b.mask[:, BUD] == 1, BUD, b.mask.argmax(axis=1))})()
    env = KungsholmskilleEnv(players=3, opponents=bud, max_deals=4)
    _obs, info = env.reset(seed=0)
    rewards = []
    while True:
        _obs, r, term, trunc, info = env.step(BUD if info["action_mask"][BUD] else int(info["action_mask"].argmax()))
        rewards.append(r)
        if term or trunc:
            break
    assert trunc and not term and sum(rewards) == -2 - 3 and info["deal"] == 3
    with pytest.raises(ValueError, match="reset"):
        env.step(BUD)


def test_illegal_actions() -> None:
    env = KungsholmskilleEnv(players=3)
    _obs, info = env.reset(seed=1)
    before = env.core.state.copy()
    with pytest.raises(ValueError, match=r"illegal move 'play:kille' \(action 278\) .*legal moves: bud, knacka"):
        env.step(278)
    with pytest.raises(ValueError, match="integer"):
        env.step(1.5)
    assert np.array_equal(env.core.state, before)
    env.step(BUD)
    lose = KungsholmskilleEnv(players=3, illegal="lose")
    _obs, info = lose.reset(seed=1)
    _obs, r, term, _trunc, info = lose.step(278)
    assert term and r == -2 - 2 * 20 and not info["action_mask"].any()
    with pytest.raises(ValueError, match=r"agent 'cheater' chose illegal action 0 \(bud\) for seat 1 in game 0"):
        _knock_and_play(KungsholmskilleEnv(players=3, opponents=Cheater(), seat=0))


def _knock_and_play(env: KungsholmskilleEnv) -> None:
    """The learner knocks whenever it can (so opponents face fold decisions), else plays its lowest legal action."""
    _obs, info = env.reset(seed=0)
    for _ in range(200):
        mask = info["action_mask"]
        _obs, _r, term, trunc, info = env.step(KNACKA if mask[KNACKA] else int(mask.argmax()))
        if term or trunc:
            _obs, info = env.reset()


@pytest.mark.parametrize("kw,field", [
    ({"seat": 3, "players": 3}, "seat"), ({"opponents": "greedy"}, "opponents"),
    ({"opponents": ["random"] * 3, "players": 3}, "opponents"), ({"max_deals": 0}, "max_deals"),
    ({"players": 7}, "players"),
])
def test_bad_config_names_the_field(kw: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        KungsholmskilleEnv(**kw)
    with pytest.raises(ValueError, match=field):
        KungsholmskilleVecEnv(2, **kw)


def test_action_space_sample_is_legal_and_random_seats() -> None:
    env = KungsholmskilleEnv(players=4, seat="random")
    env.action_space.seed(0)
    _obs, info = env.reset(seed=2)
    for _ in range(300):
        a = env.action_space.sample()
        assert info["action_mask"][a] == 1 and np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
        _obs, _r, term, trunc, info = env.step(a)
        if term or trunc:
            _obs, info = env.reset()
    assert {env.reset(seed=s)[1]["seat"] for s in range(30)} == {0, 1, 2, 3}


def test_vec_rewards_auto_reset_and_masks_in_one_call() -> None:
    vec = KungsholmskilleVecEnv(16, players=4, seed=3, seat="random", max_deals=5)
    obs = vec.reset()
    returns = np.zeros(16)
    finished = 0
    for _ in range(300):
        masks = vec.action_masks()
        assert masks.shape == (16, N_ACTIONS) and masks.any(axis=1).all()
        obs, rew, done, infos = vec.step(lowest_legal(masks))
        assert rew.dtype == np.float32 and obs.dtype == np.int16
        returns += rew
        for i in np.flatnonzero(done):
            assert returns[i] == infos[i]["money"]
            assert not infos[i]["terminal_action_mask"].any()
            returns[i] = 0
            finished += 1
    assert finished > 16
    rows = vec.env_method("action_masks", indices=[1, 3])
    assert np.array_equal(np.stack(rows), vec.action_masks()[[1, 3]])


def test_vec_illegal_action_raises_before_any_game_moves_and_external_batches() -> None:
    vec = KungsholmskilleVecEnv(4, players=3, seed=2)
    vec.reset()
    actions = lowest_legal(vec.action_masks())
    actions[2] = 278
    before = vec.core.state.copy()
    with pytest.raises(ValueError, match=r"game 2: illegal move 'play:kille'"):
        vec.step(actions)
    assert np.array_equal(vec.core.state, before)
    agent = FirstLegal()
    vec = KungsholmskilleVecEnv(32, players=4, seed=1, opponents=agent)
    vec.reset()
    for _ in range(10):
        vec.step(lowest_legal(vec.action_masks()))
    assert max(agent.batch_sizes) > 16


