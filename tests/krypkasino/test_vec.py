"""The batched SB3 VecEnv: equal to the Gymnasium env game by game, masks in one call, MaskablePPO trains on it."""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.agent_api import DecisionBatch
from krypenv.krypkasino.actions import N_ACTIONS
from krypenv.krypkasino.aec import raw_env
from krypenv.krypkasino.single import KrypkasinoEnv
from krypenv.krypkasino.vec import KrypkasinoVecEnv


class FirstLegal:
    """A deterministic agent: the lowest legal action."""

    name = "first-legal"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def act(self, batch: DecisionBatch) -> np.ndarray:
        self.batch_sizes.append(len(batch))
        return batch.mask.argmax(axis=1)


def lowest_legal(masks: np.ndarray) -> np.ndarray:
    """The lowest legal action of every row."""
    return masks.argmax(axis=1)


@pytest.mark.parametrize("players,opponents", [(2, "random"), (3, "random"), (3, "first")])
def test_game_i_equals_the_gym_env_seeded_seed_plus_i(players: int, opponents: str) -> None:
    """Same seed → same trajectories: game i of VecEnv(seed=s) is the Gymnasium env reset with seed s + i."""
    n, seed, steps = 5, 100, 150
    opp = "random" if opponents == "random" else FirstLegal()
    vec = KrypkasinoVecEnv(n, players=players, seed=seed, opponents=opp, seat="random")
    obs = vec.reset()
    traj_v = [[] for _ in range(n)]
    for _ in range(steps):
        actions = lowest_legal(vec.action_masks())
        obs2, rew, done, _infos = vec.step(actions)
        for i in range(n):
            traj_v[i].append((obs[i].tobytes(), int(actions[i]), float(rew[i]), bool(done[i])))
        obs = obs2
    for i in range(n):
        env = KrypkasinoEnv(players=players, opponents=FirstLegal() if opponents == "first" else "random",
                            seat="random")
        o, info = env.reset(seed=seed + i)
        traj_g = []
        for _ in range(steps):
            a = int(np.flatnonzero(info["action_mask"])[0])
            o2, r, term, _trunc, info = env.step(a)
            traj_g.append((o.tobytes(), a, r, term))
            o = o2
            if term:
                o, info = env.reset()
        assert traj_g == traj_v[i], f"game {i} differs"


def test_aec_and_gym_env_deal_the_same_deck_for_the_same_seed() -> None:
    aec = raw_env(players=3)
    aec.reset(seed=42)
    gym_env = KrypkasinoEnv(players=3)
    gym_env.reset(seed=42)
    vec = KrypkasinoVecEnv(2, players=3, seed=42)
    vec.reset()
    deck = aec.core.deals.deck[0]
    assert np.array_equal(gym_env.core.deals.deck[0], deck) and np.array_equal(vec.core.deals.deck[0], deck)


def test_aec_with_deterministic_players_matches_gym_env() -> None:
    """With every seat playing the lowest legal action, the AEC game equals the Gymnasium game step for step."""
    aec = raw_env(players=3)
    aec.reset(seed=7)
    seq_aec = []
    for agent in aec.agent_iter():
        obs, _, term, trunc, _ = aec.last()
        if term or trunc:
            aec.step(None)
            continue
        a = int(np.flatnonzero(obs["action_mask"])[0])
        if agent == "player_0":
            seq_aec.append(a)
        aec.step(a)
    env = KrypkasinoEnv(players=3, seat=0, opponents=FirstLegal())
    _, info = env.reset(seed=7)
    seq_gym = []
    while True:
        a = int(np.flatnonzero(info["action_mask"])[0])
        seq_gym.append(a)
        _, _, term, _, info = env.step(a)
        if term:
            break
    assert seq_aec == seq_gym
    assert np.array_equal(aec.core.deals.scores(), env.core.deals.scores())


def test_rewards_sum_to_minus_final_score_and_auto_reset() -> None:
    vec = KrypkasinoVecEnv(16, players=4, seed=3, seat="random")
    obs = vec.reset()
    returns = np.zeros(16)
    finished = 0
    for _ in range(400):
        masks = vec.action_masks()
        assert masks.shape == (16, N_ACTIONS) and masks.any(axis=1).all()
        obs, rew, done, infos = vec.step(lowest_legal(masks))
        assert rew.dtype == np.float32 and obs.shape == (16, vec.observation_space.shape[0])
        returns += rew
        for i in np.flatnonzero(done):
            assert returns[i] == pytest.approx(-infos[i]["score"])
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert not infos[i]["terminal_action_mask"].any()
            returns[i] = 0
            finished += 1
    assert finished > 16


def test_masks_in_one_call_and_env_method() -> None:
    vec = KrypkasinoVecEnv(8, players=2, seed=0)
    vec.reset()
    masks = vec.action_masks()
    rows = vec.env_method("action_masks")
    assert len(rows) == 8 and all(np.array_equal(r, m) for r, m in zip(rows, masks))
    assert vec.has_attr("action_masks")
    assert np.array_equal(np.stack(vec.env_method("action_masks", indices=[1, 3])), masks[[1, 3]])
    with pytest.raises(AttributeError):
        vec.env_method("render")


def test_external_opponents_are_called_in_batches() -> None:
    agent = FirstLegal()
    vec = KrypkasinoVecEnv(32, players=3, seed=1, opponents=agent)
    vec.reset()
    for _ in range(20):
        vec.step(lowest_legal(vec.action_masks()))
    assert max(agent.batch_sizes) > 16


def test_illegal_action_raises_before_any_game_moves() -> None:
    vec = KrypkasinoVecEnv(4, players=3, seed=2)
    vec.reset()
    actions = lowest_legal(vec.action_masks())
    actions[2] = int(np.flatnonzero(vec.action_masks()[2] == 0)[0])
    before = vec.core.state.copy()
    with pytest.raises(ValueError, match="game 2: illegal action"):
        vec.step(actions)
    assert np.array_equal(vec.core.state, before)
    with pytest.raises(ValueError, match=r"actions must be 4 integers .*shape \(3,\)"):
        vec.step(np.zeros(3, np.int64))


def test_seeding_through_sb3_seed() -> None:
    a = KrypkasinoVecEnv(3, players=2)
    a.seed(9)
    b = KrypkasinoVecEnv(3, players=2, seed=9)
    assert np.array_equal(a.reset(), b.reset())
    assert not np.array_equal(a.core.deals.deck[0], a.core.deals.deck[1])


def test_maskable_ppo_trains_on_the_vecenv() -> None:
    """sb3-contrib's MaskablePPO runs a few thousand steps on the batched env (masks fetched in one call)."""
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    vec = KrypkasinoVecEnv(64, players=2, seed=0)
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=512, n_epochs=1, seed=0, verbose=0,
                        policy_kwargs={"net_arch": [64]})
    model.learn(total_timesteps=4096)
    assert model.num_timesteps >= 4096
    obs = vec.reset()
    actions, _ = model.predict(obs, action_masks=vec.action_masks(), deterministic=True)
    assert vec.action_masks()[np.arange(64), actions].all()
    vec.step(actions)  # predict's dtype is one the VecEnv takes
