"""The Kungsholmskille Gymnasium env and batched VecEnv: checkers, honest rewards, same seed same game everywhere."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from krypenv import kungsholmskille_v0
from krypenv.agent_api import DecisionBatch
from krypenv.kungsholmskille.actions import BUD, KNACKA, N_ACTIONS
from krypenv.kungsholmskille.aec import raw_env
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


def test_gymnasium_check_env_through_make() -> None:
    import gymnasium

    if TEST_ID not in gymnasium.registry:
        gymnasium.register(id=TEST_ID, entry_point=kungsholmskille_v0.GYM_ENTRY_POINT)
    # the determinism check steps an action sampled before reset, so illegal="lose" (a stale action ends the episode)
    env = gymnasium.make(TEST_ID, players=3, illegal="lose", render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)
    env = gymnasium.make(TEST_ID, seat=1, opponents="random", players=4, first_dealer=0, max_deals=7,
                         skip_forced=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (75 + 23 * 4,) and info["seat"] == 1 and env.action_space.n == N_ACTIONS


@pytest.mark.parametrize("players", [2, 5])
def test_sb3_check_env(players: int) -> None:
    sb3_check_env(KungsholmskilleEnv(players=players), warn=True)


def test_v0_module_exports_and_entry_point() -> None:
    assert kungsholmskille_v0.GymEnv is KungsholmskilleEnv and kungsholmskille_v0.VecEnv is KungsholmskilleVecEnv
    module, name = kungsholmskille_v0.GYM_ENTRY_POINT.split(":")
    import importlib

    assert getattr(importlib.import_module(module), name) is KungsholmskilleEnv
    assert kungsholmskille_v0.GYM_ID == "krypenv/Kungsholmskille-v0"


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


@pytest.mark.parametrize("players,opponents,skip", [(2, "random", False), (4, "random", True), (3, "first", False)])
def test_game_i_equals_the_gym_env_seeded_seed_plus_i(players: int, opponents: str, skip: bool) -> None:
    """Same seed → same trajectories: game i of VecEnv(seed=s) is the Gymnasium env reset with seed s + i."""
    n, seed, steps = 4, 100, 120
    opp = "random" if opponents == "random" else FirstLegal()
    vec = KungsholmskilleVecEnv(n, players=players, seed=seed, opponents=opp, seat="random", skip_forced=skip,
                                max_deals=3)
    obs = vec.reset()
    traj_v: list[list] = [[] for _ in range(n)]
    for _ in range(steps):
        actions = lowest_legal(vec.action_masks())
        obs2, rew, done, _infos = vec.step(actions)
        for i in range(n):
            traj_v[i].append((obs[i].tobytes(), int(actions[i]), float(rew[i]), bool(done[i])))
        obs = obs2
    assert any(d for t in traj_v for *_, d in t)  # auto-resets happened
    for i in range(n):
        env = KungsholmskilleEnv(players=players, opponents=FirstLegal() if opponents == "first" else "random",
                                 seat="random", skip_forced=skip, max_deals=3)
        o, info = env.reset(seed=seed + i)
        traj_g = []
        for _ in range(steps):
            a = int(np.flatnonzero(info["action_mask"])[0])
            o2, r, term, trunc, info = env.step(a)
            traj_g.append((o.tobytes(), a, r, term or trunc))
            o = o2
            if term or trunc:
                o, info = env.reset()
        assert traj_g == traj_v[i], f"game {i} differs"


def test_aec_gym_and_vec_play_the_same_game_for_the_same_seed() -> None:
    """Every seat playing the lowest legal action: the AEC game equals the Gymnasium and VecEnv games."""
    aec = raw_env(players=3)
    aec.reset(seed=7)
    seq_aec, ret_aec = [], 0.0
    for agent in aec.agent_iter():
        obs, r, term, trunc, _ = aec.last()
        if agent == "player_0":
            ret_aec += r
        if term or trunc:
            aec.step(None)
            continue
        a = int(np.flatnonzero(obs["action_mask"])[0])
        if agent == "player_0":
            seq_aec.append((obs["observation"].tobytes(), a))
        aec.step(a)
    env = KungsholmskilleEnv(players=3, seat=0, opponents=FirstLegal())
    o, info = env.reset(seed=7)
    seq_gym, ret_gym = [], 0.0
    vec = KungsholmskilleVecEnv(1, players=3, seat=0, opponents=FirstLegal(), seed=7)
    vo = vec.reset()
    while True:
        a = int(np.flatnonzero(info["action_mask"])[0])
        assert np.array_equal(vo[0], o)
        seq_gym.append((o.tobytes(), a))
        o, r, term, trunc, info = env.step(a)
        vo, vr, vd, vinfo = vec.step(np.array([a]))
        ret_gym += r
        assert vr[0] == r and vd[0] == (term or trunc)
        if term or trunc:
            assert vinfo[0]["money"] == info["money"][0] and np.array_equal(vinfo[0]["terminal_observation"], o)
            break
    assert seq_aec == seq_gym and ret_aec == ret_gym == aec.core.money[0, 0]


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


def test_parallel_batch_game_equals_a_single_game() -> None:
    """The parallel drivers (64 games) play game i exactly as a one-game VecEnv seeded seed + i."""
    big = KungsholmskilleVecEnv(64, players=4, seed=50, seat="random", max_deals=4)
    small = KungsholmskilleVecEnv(1, players=4, seed=55, seat="random", max_deals=4)
    assert big.core.parallel and not small.core.parallel
    ob, os_ = big.reset(), small.reset()
    for _ in range(80):
        assert np.array_equal(ob[5], os_[0])
        ab, as_ = lowest_legal(big.action_masks()), lowest_legal(small.action_masks())
        ob, rb, db, _ = big.step(ab)
        os_, rs, ds, _ = small.step(as_)
        assert rb[5] == rs[0] and db[5] == ds[0]


def test_maskable_ppo_on_the_parallel_vecenv() -> None:
    """sb3-contrib's MaskablePPO runs on 64 games (the parallel drivers), masks fetched in one call."""
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    vec = KungsholmskilleVecEnv(64, players=3, seed=0)
    assert vec.core.parallel
    model = MaskablePPO("MlpPolicy", vec, n_steps=16, batch_size=512, n_epochs=1, seed=0, verbose=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    obs = vec.reset()
    actions, _ = model.predict(obs, action_masks=vec.action_masks(), deterministic=True)
    assert vec.action_masks()[np.arange(64), actions].all()
    vec.step(actions)  # predict's dtype is one the VecEnv takes
