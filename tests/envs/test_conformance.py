"""The env-conformance suite, run over every game of :data:`krypenv.games.GAMES` (its entry module's classes).

PettingZoo's ``api_test``, ``seed_test`` and ``render_test``; pickling mid-game; Gymnasium's and
Stable-Baselines3's ``check_env``; the registered Gymnasium id; and the same game in all three
interfaces: for one seed, the same deck, and the AEC env (every seat playing the lowest legal action), the
Gymnasium env and game 0 of the VecEnv (the learner in seat 0, opponents playing the lowest
legal action) return the same observations, masks, rewards, terminations, truncations and
infos, the VecEnv's ``terminal_observation`` and ``terminal_action_mask`` included.  Game ``i``
of a VecEnv seeded ``s`` is the Gymnasium env seeded ``s + i`` (serial and parallel batches), and
SB3's ``seed(s)`` seeds as the constructor.  The Gymnasium env: sampled actions are legal, the
same seed plays the same episode, a random seat takes every seat; an external opponent's
illegal action is named.  Illegal actions raise (or lose) in every interface.
"""

from __future__ import annotations

import pickle
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from krypenv.games import GAMES, Game
from tests.envs.helpers import FirstIllegal, FirstLegal, first_legal_trajectory, lowest_legal


@pytest.fixture(params=list(GAMES.values()), ids=list(GAMES))
def game(request: pytest.FixtureRequest) -> Game:
    """Each registered game in turn."""
    return request.param


def entry(game: Game) -> ModuleType:
    """The game's entry module (``env``, ``raw_env``, ``GymEnv``, ``VecEnv``)."""
    return game.part("entry")


def play_aec(env: Any, steps: int) -> None:
    """``steps`` AEC steps of the lowest legal action (None for agents that are done)."""
    for _ in range(steps):
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))


def test_entry_module_and_registered_gym_id(game: Game) -> None:
    """The entry module names the interfaces; the registry's gym id makes the entry module's GymEnv."""
    module = entry(game)
    assert {"env", "raw_env", "GymEnv", "VecEnv"} <= set(module.__all__)
    assert gymnasium.spec(game.gym_id).entry_point == game.gym_entry_point == f"{game.entry}:GymEnv"
    env = gymnasium.make(game.gym_id, players=game.play_players)
    assert isinstance(env.unwrapped, module.GymEnv)
    assert env.unwrapped.core.players == game.play_players
    assert isinstance(module.env().unwrapped, module.raw_env)


@pytest.mark.parametrize("table", ["fewest", "default", "most"])
def test_pettingzoo_api_test(game: Game, table: str) -> None:
    """PettingZoo's API test at the smallest, default and largest table."""
    players = {"fewest": min(game.players), "default": game.play_players, "most": max(game.players)}[table]
    api_test(entry(game).env(players=players), num_cycles=300)


def test_pettingzoo_seed_and_render_tests(game: Game) -> None:
    """PettingZoo's seed test (same seed, same episode) and render test (every render mode)."""
    module = entry(game)
    seed_test(lambda: module.env(players=game.play_players), num_cycles=300)
    render_test(lambda render_mode=None: module.env(players=game.play_players, render_mode=render_mode))


def test_pickle_round_trip_mid_game(game: Game) -> None:
    """A pickled AEC env, Gymnasium env and VecEnv continue exactly as the originals."""
    module = entry(game)
    aec = module.raw_env(players=game.play_players)
    aec.reset(seed=5)
    play_aec(aec, 7)
    twin = pickle.loads(pickle.dumps(aec))
    for env in (aec, twin):
        play_aec(env, 9)
    assert aec.agent_selection == twin.agent_selection and aec.rewards == twin.rewards
    assert np.array_equal(aec.core.state, twin.core.state)
    seen, seen_twin = aec.observe(aec.agent_selection), twin.observe(twin.agent_selection)
    assert np.array_equal(seen["observation"], seen_twin["observation"])
    vec = module.VecEnv(3, players=game.play_players, seed=2)
    vec.reset()
    vec.step(lowest_legal(vec.action_masks()))
    copy = pickle.loads(pickle.dumps(vec))
    for _ in range(5):
        a, b = vec.step(lowest_legal(vec.action_masks())), copy.step(lowest_legal(copy.action_masks()))
        assert all(np.array_equal(x, y) for x, y in zip(a[:3], b[:3]))


def test_gymnasium_and_sb3_check_env(game: Game) -> None:
    """Gymnasium's checker through ``gymnasium.make`` (``illegal="lose"``: it steps a stale sample) and SB3's."""
    env = gymnasium.make(game.gym_id, players=game.play_players, illegal="lose", render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)
    sb3_check_env(entry(game).GymEnv(players=min(game.players)), warn=True)


def test_gymnasium_check_env_steps_a_stale_sample_that_the_default_env_refuses(game: Game) -> None:
    """The caveat of the env pages (the Gymnasium shell's docstring, "Checkers", on every game's page): Gymnasium's
    checker steps an action sampled before its seeded reset; ``illegal="raise"`` refuses it (an illegal action is an
    error, never a fix-up)."""
    from krypenv.envs import gym as shell  # whose docstring every game's environment page shows

    assert issubclass(entry(game).GymEnv, shell.GameGymEnv)
    doc = " ".join((shell.__doc__ or "").split())
    assert 'Gymnasium\'s ``check_env`` with ``illegal="lose"``' in doc and "fails by design" in doc
    env = gymnasium.make(game.gym_id, players=game.play_players)
    with pytest.raises(ValueError, match="illegal"):
        check_env(env.unwrapped)


def test_aec_gym_and_vec_return_the_same_game(game: Game) -> None:
    """Every seat plays the lowest legal action: AEC (seat 0), Gymnasium and VecEnv game 0 return the same."""
    module, players, seed = entry(game), game.play_players, 11
    aec = module.raw_env(players=players)
    aec.reset(seed=seed)
    deck = aec.core.deals.deck[0].copy()  # the first deal's whole deck, the cards not dealt yet included
    seen_aec: list[tuple] = []  # at each decision of player_0: obs, mask, reward since its last one, done flags
    for agent in aec.agent_iter():
        obs, reward, term, trunc, info = aec.last()
        if agent == "player_0":
            seen_aec.append((obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
            assert info["to_act"] == (not (term or trunc))
        aec.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    env = module.GymEnv(players=players, seat=0, opponents=FirstLegal())
    vec = module.VecEnv(1, players=players, seat=0, opponents=FirstLegal(), seed=seed)
    obs, info = env.reset(seed=seed)
    vec_obs = vec.reset()
    assert np.array_equal(env.core.deals.deck[0], deck) and np.array_equal(vec.core.deals.deck[0], deck)
    seen_gym = [(obs.tobytes(), info["action_mask"].tobytes(), 0.0, False, False)]
    while True:
        assert np.array_equal(vec_obs[0], obs) and np.array_equal(vec.action_masks()[0], info["action_mask"] != 0)
        assert info["seat"] == 0 and env.action_masks().tolist() == (info["action_mask"] != 0).tolist()
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, term, trunc, info = env.step(action)
        vec_obs, vec_rewards, vec_dones, vec_infos = vec.step(np.array([action]))
        assert vec_rewards.dtype == np.float32 and vec_rewards[0] == np.float32(reward)
        assert bool(vec_dones[0]) == (term or trunc)
        seen_gym.append((obs.tobytes(), info["action_mask"].tobytes(), reward, term, trunc))
        if term or trunc:
            final = vec_infos[0]
            assert np.array_equal(final["terminal_observation"], obs)
            assert np.array_equal(final["terminal_action_mask"], info["action_mask"])
            assert final["TimeLimit.truncated"] == trunc
            assert not np.array_equal(vec_obs[0], obs) or not info["action_mask"].any()  # auto-reset
            break
        assert vec_infos[0] == {}
    assert [s[:2] for s in seen_aec] == [s[:2] for s in seen_gym]
    assert [s[3:] for s in seen_aec] == [s[3:] for s in seen_gym]
    assert [s[2] for s in seen_aec[1:]] == [s[2] for s in seen_gym[1:]] and seen_aec[0][2] == 0.0


@pytest.mark.parametrize("opponents,n,steps", [("random", 4, 150), ("first", 3, 120), ("random", 64, 60)])
def test_vec_game_i_is_the_gym_env_seeded_seed_plus_i(game: Game, opponents: str, n: int, steps: int) -> None:
    """Game i of ``VecEnv(seed=s)`` plays as ``GymEnv`` reset with ``s + i`` (serial and parallel batches)."""
    module, players, seed = entry(game), game.play_players, 40
    vec = module.VecEnv(n, players=players, seed=seed, seat="random",
                        opponents=FirstLegal() if opponents == "first" else "random")
    assert vec.core.parallel == (n >= 64)
    obs = vec.reset()
    watched = [0, 1] if n < 64 else [0, 37]
    trajectories: dict[int, list] = {i: [] for i in watched}
    for _ in range(steps):
        actions = lowest_legal(vec.action_masks())
        next_obs, rewards, dones, _ = vec.step(actions)
        for i in watched:
            trajectories[i].append((obs[i].tobytes(), int(actions[i]), float(rewards[i]), bool(dones[i])))
        obs = next_obs
    for i in watched:
        opponent = FirstLegal() if opponents == "first" else "random"
        env = module.GymEnv(players=players, seat="random", opponents=opponent)
        trajectory = first_legal_trajectory(env, seed + i, steps)
        assert trajectory == trajectories[i], f"game {i} differs"


def test_vec_masks_attributes_and_external_batches(game: Game) -> None:
    """Masks of all games in one call (and per game through env_method); external agents asked in batches."""
    module = entry(game)
    agent = FirstLegal()
    vec = module.VecEnv(32, players=game.play_players, seed=1, opponents=agent)
    vec.reset()
    episodes = vec.core.episodes.copy()
    done_any = np.zeros(32, bool)
    for _ in range(40):
        masks = vec.action_masks()
        assert masks.dtype == bool and masks.shape == (32, vec.action_space.n) and masks.any(axis=1).all()
        _, _, dones, infos = vec.step(lowest_legal(masks))
        done_any |= dones
        assert all(("terminal_observation" in info) == bool(d) for info, d in zip(infos, dones))
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == vec.observation_space.shape
            assert not infos[i]["terminal_action_mask"].any()
            assert infos[i]["terminal_action_mask"].dtype == np.int8  # as the AEC env's action_mask
    assert max(agent.batch_sizes) > 16
    assert (vec.core.episodes > episodes).tolist() == done_any.tolist()
    rows = vec.env_method("action_masks", indices=[1, 3])
    assert np.array_equal(np.stack(rows), vec.action_masks()[[1, 3]])
    assert vec.get_attr("render_mode", [0, 2]) == [None, None] and vec.env_is_wrapped(object) == [False] * 32
    with pytest.raises(AttributeError, match="cannot set 'render_mode' per game on the batched VecEnv"):
        vec.set_attr("render_mode", "ansi")
    assert vec.get_attr("render_mode", 1) == [None] and vec.get_attr("render_mode", np.int64(2)) == [None]
    assert vec.env_is_wrapped(object, (0, 1, 2)) == [False] * 3
    with pytest.raises(ValueError, match=r"indices must be None, a game index or a sequence of them, got 1\.5"):
        vec.get_attr("render_mode", 1.5)
    with pytest.raises(AttributeError, match="^the batched VecEnv has no per-game method 'render'$"):
        vec.env_method("render")


@pytest.mark.parametrize("agent_opponents", [False, True], ids=["built-in", "agents"])
def test_vec_counts_every_episode_and_declares_its_observation_dtype(game: Game, agent_opponents: bool) -> None:
    """``core.episodes`` (what a league reads) is 1 + the episodes each game ended, with built-in opponents (the fused
    step) and agents alike; the observation space has the observations' dtype (SB3 sizes its buffers by it)."""
    vec = entry(game).VecEnv(8, players=game.play_players, seed=3,
                             opponents=FirstLegal() if agent_opponents else "random")
    obs = vec.reset()
    assert vec.observation_space.dtype == obs.dtype and vec.observation_space.contains(obs[0])
    ended = np.zeros(8, np.int64)
    for _ in range(300):
        ended += vec.step(lowest_legal(vec.action_masks()))[2]
    assert ended.min() >= 2
    assert vec.core.episodes.tolist() == (1 + ended).tolist()


@pytest.mark.parametrize("agent_opponents", [False, True], ids=["built-in", "agents"])
def test_vec_returns_arrays_that_later_steps_leave_alone(game: Game, agent_opponents: bool) -> None:
    """Observations, terminal observations and terminal masks are the caller's own: stepping on never changes them,
    and two games that end in one step do not share a terminal row.  Every game's info is a dict of its own."""
    module = entry(game)
    vec = module.VecEnv(64, players=game.play_players, seed=4, opponents=FirstLegal() if agent_opponents else "random")
    kept: list[tuple[np.ndarray, np.ndarray]] = [(obs := vec.reset(), obs.copy())]
    assert len({id(info) for info in vec.reset_infos}) == 64
    two_ended = False
    for _ in range(300):
        obs, _, dones, infos = vec.step(lowest_legal(vec.action_masks()))
        assert len({id(info) for info in infos}) == 64
        kept.append((obs, obs.copy()))
        ended = np.flatnonzero(dones)
        for i in ended:
            for key in ("terminal_observation", "terminal_action_mask"):
                kept.append((infos[i][key], infos[i][key].copy()))
        if len(ended) >= 2:
            two_ended = True
            first, second = infos[ended[0]]["terminal_observation"], infos[ended[1]]["terminal_observation"]
            before = second.copy()
            first += 1
            assert np.array_equal(second, before)
            first -= 1
    assert two_ended
    for array, copy in kept:
        assert np.array_equal(array, copy)


def test_vec_seed_method_seeds_as_the_constructor(game: Game) -> None:
    """SB3's ``seed(s)`` then ``reset()`` deals what ``VecEnv(seed=s)`` deals; the games of one batch differ."""
    module = entry(game)
    seeded_later = module.VecEnv(3, players=min(game.players))
    seeded_later.seed(9)
    seeded = module.VecEnv(3, players=min(game.players), seed=9)
    assert np.array_equal(seeded_later.reset(), seeded.reset())
    assert not np.array_equal(seeded.core.deals.deck[0], seeded.core.deals.deck[1])


def test_gym_sampled_actions_are_legal_and_masks_agree(game: Game) -> None:
    """``action_space.sample()`` draws only legal actions; ``action_masks()`` is the info's mask as bools."""
    env = entry(game).GymEnv(players=4)
    env.action_space.seed(0)
    _, info = env.reset(seed=2)
    for _ in range(300):
        action = env.action_space.sample()
        assert info["action_mask"][action] == 1
        assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
        _, _, term, trunc, info = env.step(action)
        if term or trunc:
            _, info = env.reset()


def test_gym_same_seed_same_episode_and_a_random_seat_takes_every_seat(game: Game) -> None:
    """Reset with the same seed, the same episode (actions and rewards); ``seat="random"`` draws every seat."""
    env = entry(game).GymEnv(players=3, seat="random")

    def episode() -> list[tuple[int, float]]:
        """One episode of the lowest legal action from seed 11: (action, reward) per step."""
        _, info = env.reset(seed=11)
        played = []
        while True:
            action = int(np.flatnonzero(info["action_mask"])[0])
            _, reward, term, trunc, info = env.step(action)
            played.append((action, reward))
            if term or trunc:
                return played

    episodes = [episode(), episode()]
    assert episodes[0] == episodes[1]
    assert {env.reset(seed=s)[1]["seat"] for s in range(30)} == {0, 1, 2}


def test_an_opponent_agents_illegal_action_names_the_agent_seat_and_game(game: Game) -> None:
    """An external opponent that chooses an illegal action: a ValueError naming it, its action, seat and game."""
    env = entry(game).GymEnv(players=3, seat=0, opponents=FirstIllegal())
    _, info = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"^agent 'cheater' chose illegal action \d+ \(.+\) for seat [12] in game 0; "
                                         r"legal actions: \d"):
        for _ in range(50):
            _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            if term or trunc:
                _, info = env.reset()


def test_illegal_action_raises_and_changes_nothing_everywhere(game: Game) -> None:
    """``illegal="raise"``: a ValueError naming the action and the legal ones, the same text idea in every interface."""
    module = entry(game)
    aec = module.raw_env(players=game.play_players)
    aec.reset(seed=3)
    illegal = int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"] == 0)[0])
    before, agent = aec.core.state.copy(), aec.agent_selection
    with pytest.raises(ValueError, match=rf"illegal .*\(?action {illegal}\)?.* for {agent}; legal"):
        aec.step(illegal)
    assert np.array_equal(aec.core.state, before) and aec.agent_selection == agent
    env = module.GymEnv(players=game.play_players)
    _, info = env.reset(seed=3)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    before = env.core.state.copy()
    with pytest.raises(ValueError, match=r"for player_0; legal"):
        env.step(illegal)
    assert np.array_equal(env.core.state, before)
    vec = module.VecEnv(3, players=game.play_players, seed=3)
    vec.reset()
    actions = lowest_legal(vec.action_masks())
    actions[1] = int(np.flatnonzero(~vec.action_masks()[1])[0])
    before = vec.core.state.copy()
    with pytest.raises(ValueError, match=r"^game 1: illegal .* legal"):
        vec.step(actions)
    assert np.array_equal(vec.core.state, before)


def test_illegal_lose_ends_the_episode_in_every_interface(game: Game) -> None:
    """``illegal="lose"``: the offender's episode ends at once (terminated), in all three interfaces."""
    module = entry(game)
    aec = module.raw_env(players=game.play_players, illegal="lose")
    aec.reset(seed=4)
    offender = aec.agent_selection
    aec.step(int(np.flatnonzero(aec.observe(offender)["action_mask"] == 0)[0]))
    assert all(aec.terminations.values()) and aec.rewards[offender] < 0
    env = module.GymEnv(players=game.play_players, illegal="lose")
    _, info = env.reset(seed=4)
    _, reward, term, trunc, _ = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert term and not trunc and reward < 0
    with pytest.raises(ValueError, match="episode is over"):
        env.step(0)
    for opponents in ("random", FirstLegal()):  # the fused step and the step with agents at the other seats
        vec = module.VecEnv(2, players=game.play_players, seed=4, illegal="lose", opponents=opponents)
        vec.reset()
        actions = lowest_legal(vec.action_masks())
        actions[0] = int(np.flatnonzero(~vec.action_masks()[0])[0])
        _, rewards, dones, infos = vec.step(actions)
        assert dones[0] and rewards[0] < 0 and not infos[0]["TimeLimit.truncated"]
        assert not dones[1]


@pytest.mark.parametrize("offender", [0, 2])
def test_vec_illegal_action_in_any_game_names_the_game_and_the_learners_seat(game: Game, offender: int) -> None:
    """The first and the last game alike: the refusal names the game and the learner's seat, and nothing moves."""
    vec = entry(game).VecEnv(3, players=game.play_players, seed=3, seat=1)
    vec.reset()
    actions = lowest_legal(vec.action_masks())
    actions[offender] = int(np.flatnonzero(~vec.action_masks()[offender])[0])
    before = vec.core.state.copy()
    with pytest.raises(ValueError, match=rf"^game {offender}: illegal .* for player_1; legal"):
        vec.step(actions)
    assert np.array_equal(vec.core.state, before)


def test_vec_step_before_reset_is_refused(game: Game) -> None:
    """Stepping a VecEnv never reset is a ValueError that says to reset first, and no game moves."""
    vec = entry(game).VecEnv(2, players=game.play_players, seed=3)
    before = vec.core.state.copy()
    with pytest.raises(ValueError, match=r"^call reset\(\) before step\(\)$"):
        vec.step(np.zeros(2, np.int64))
    assert np.array_equal(vec.core.state, before)


def test_maskable_ppo_trains_on_the_vecenv(game: Game) -> None:
    """sb3-contrib's MaskablePPO runs on 64 games (the parallel kernels), masks fetched in one call."""
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    vec = entry(game).VecEnv(64, players=min(game.players), seed=0)
    model = MaskablePPO("MlpPolicy", vec, n_steps=16, batch_size=512, n_epochs=1, seed=0, verbose=0,
                        policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=1024)
    obs = vec.reset()
    actions, _ = model.predict(obs, action_masks=vec.action_masks(), deterministic=True)
    assert vec.action_masks()[np.arange(64), actions].all()
    vec.step(actions)  # predict's dtype is one the VecEnv takes
