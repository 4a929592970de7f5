"""The device envs on the CPU backend (krypenv.envs.device), over every registered game.

The oracles: the game's SB3 VecEnv (same seed, same actions: the same observations, masks,
rewards, dones and terminal observations, tests/envs/device_helpers.py) over a grid of player
counts, presets, reward modes, teams and seats; the AEC env for self-play (every seat the
caller's, per-seat rewards every step); the rules' totals for final values.  The CUDA backend
is held to the same oracles in numba's simulator (tests/cuda) and on a GPU (experiments/device_check.py).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
import torch

from krypenv import agents
from krypenv.envs import cuda as cuda_mod
from krypenv.envs.cuda import CudaUnavailableError
from krypenv.games import GAMES, Game
from tests.envs.device_helpers import against_device, against_vecenv, host

GRID = {  # game -> configurations: player counts, presets, reward modes, teams, seats, match lengths
    "krypkasino": [
        {"players": 2}, {"players": 3, "seat": "random"}, {"players": 4, "teams": [[0, 2], [1, 3]]},
        {"players": 2, "preset": "tiny", "deals": 3}, {"players": 3, "preset": "small", "reward": "relative"},
        {"players": 6, "set_aside": "spades", "last_capture_point": True},
    ],
    "kungsholmskille": [
        {"players": 2}, {"players": 4, "seat": "random"}, {"players": 3, "preset": "small", "skip_forced": True},
        {"players": 6, "max_deals": 2}, {"players": 5, "pot_deals": 3},
    ],
}


@pytest.fixture(params=list(GAMES.values()), ids=list(GAMES))
def game(request: pytest.FixtureRequest) -> Game:
    """Each registered game."""
    return request.param


def device_env(game: Game, n: int, **kw: Any) -> Any:
    """The game's device env on the CPU backend."""
    return game.part("device").DeviceVecEnv(n, device="cpu", **kw)


def test_every_config_plays_as_the_vecenv(game: Game) -> None:
    """Game i of the device env is game i of the SB3 VecEnv, step for step, over the grid of configurations."""
    entry = game.part("entry")
    for k, config in enumerate(GRID[game.name]):
        n = 8 + k
        tally = against_vecenv(entry.VecEnv(n, seed=100 + k, **config), device_env(game, n, seed=100 + k, **config),
                               steps=120, seed=k)
        assert tally.episodes > 0, config


def test_python_agents_as_opponents_play_as_in_the_vecenv(game: Game) -> None:
    """On the CPU any agent plays for the other seats, asked in batches, with the VecEnv's uniforms."""
    expert = agents.load("expert", game=game.name)
    entry = game.part("entry")
    tally = against_vecenv(entry.VecEnv(6, players=3, opponents=[expert, "random"], seed=7),
                           device_env(game, 6, players=3, opponents=[expert, "random"], seed=7), steps=100, seed=1)
    assert tally.episodes > 0


def test_self_play_is_the_aec_env_with_every_seats_rewards(game: Game) -> None:
    """opponents="self": the caller acts for whoever is to act; per-seat rewards each step are the AEC env's, and
    game i is the AEC env seeded seed + i."""
    P, n, seed = 3, 4, 11
    dev = device_env(game, n, players=P, opponents="self", seed=seed)
    obs, info = dev.reset()
    aecs = [game.part("entry").raw_env(players=P) for _ in range(n)]
    for i, env in enumerate(aecs):
        env.reset(seed=seed + i)
    for step in range(150):
        seats = host(info["seat"])
        for i, env in enumerate(aecs):
            agent = env.agent_selection
            assert agent == f"player_{seats[i]}", (step, i)
            ob = env.observe(agent)
            assert np.array_equal(ob["observation"], host(obs)[i]) and np.array_equal(
                ob["action_mask"].astype(bool), host(info["action_mask"])[i]), (step, i)
        actions = host(info["action_mask"]).argmax(axis=1)  # the lowest legal action
        obs, rewards, term, trunc, info = dev.step(actions)
        assert rewards.shape == (n, P)
        for i, env in enumerate(aecs):
            env.step(int(actions[i]))
            expect = [env.rewards.get(f"player_{s}", 0.0) for s in range(P)]
            assert np.allclose(host(rewards)[i], expect), (step, i, host(rewards)[i], expect)
            if host(term)[i] or host(trunc)[i]:
                env.reset(seed=None)  # the AEC continues its stream, as the device env's auto-reset does
                assert not env.terminations[env.agent_selection]
        if step == 40:
            break


def test_self_play_rewards_add_up_to_the_final_values(game: Game) -> None:
    """In self-play a seat's rewards over an episode are minus its final score (Krypkasino) or its money
    (Kungsholmskille); Krypkasino's scores total the deck's points (K4, K14 tabbes cancel), Kungsholmskille's money
    is zero-sum once the pot went out (L14, L15)."""
    P, n = 4, 32
    dev = device_env(game, n, players=P, opponents="self", seed=5)
    _, info = dev.reset()
    got = np.zeros((n, P))
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(400):
        mask = host(info["action_mask"])
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        _, rewards, term, trunc, info = dev.step(actions)
        got += host(rewards)
        for i in np.flatnonzero(host(term) | host(trunc)):
            final = host(info["final_values"])[i]
            if game.name == "krypkasino":
                assert np.allclose(got[i], -final)
                assert final.sum() == dev.core.rules.total_points
            else:
                assert np.allclose(got[i], final)
                if host(term)[i]:
                    assert final.sum() == 0
            got[i] = 0
            ends += 1
    assert ends > 20


def test_seeds(game: Game) -> None:
    """The same seed gives the same games, reset(seed) restarts them, game i of seed s is game 0 of seed s + i, and a
    reset without a seed continues the streams."""
    a, b = device_env(game, 3, seed=9), device_env(game, 1, seed=11)
    oa, _ = a.reset()
    ob, _ = b.reset()
    assert np.array_equal(host(oa)[2], host(ob)[0])
    first = host(a.reset(seed=9)[0]).copy()
    assert np.array_equal(first, host(oa))
    assert not np.array_equal(host(a.reset()[0]), first)  # the streams went on
    assert np.array_equal(host(a.reset(seed=9)[0]), first)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        a.reset(seed=-1)


def test_bad_input_is_a_clear_error_and_changes_nothing(game: Game) -> None:
    """Actions of the wrong count or dtype, an illegal action, stepping before reset, bad opponents and sizes."""
    env = device_env(game, 4, seed=1)
    with pytest.raises(ValueError, match="call reset"):
        env.step(np.zeros(4, np.int64))
    obs, info = env.reset()
    before = host(obs).copy()
    for bad in (np.zeros(3, np.int64), np.zeros(4, np.float32), np.zeros(4, bool), np.zeros((4, 2), np.int64)):
        with pytest.raises(ValueError, match="actions must be 4 integers"):
            env.step(bad)
    actions = host(info["action_mask"]).argmax(axis=1)
    actions[2] = int(np.flatnonzero(~host(info["action_mask"])[2])[0])
    with pytest.raises(ValueError, match=r"game 2: illegal (action|move) .* legal (actions|moves)"):
        env.step(actions)
    assert np.array_equal(host(obs), before)  # nothing moved
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        device_env(game, 0)
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        game.part("device").DeviceVecEnv(2, device="meta")
    with pytest.raises(ValueError, match="only 'random' and 'self' are built in"):
        device_env(game, 2, opponents="expert")
    with pytest.raises(ValueError, match="list of"):
        device_env(game, 2, players=3, opponents=["self"])


def test_illegal_lose_ends_only_that_game(game: Game) -> None:
    """illegal="lose": an illegal action ends its game's episode (the forfeit), the other games play on."""
    env = device_env(game, 3, seed=2, illegal="lose")
    _, info = env.reset()
    actions = host(info["action_mask"]).argmax(axis=1)
    actions[1] = int(np.flatnonzero(~host(info["action_mask"])[1])[0])
    _, rewards, term, trunc, _ = env.step(actions)
    assert host(term | trunc).tolist()[1] is True
    assert host(rewards)[1] < 0  # the penalty (Krypkasino) or the fines (Kungsholmskille)


def test_tensors_are_the_envs_buffers(game: Game) -> None:
    """The returned tensors are views of the env's arrays (no copy), overwritten by the next step."""
    env = device_env(game, 2, seed=3)
    obs, info = env.reset()
    assert obs.data_ptr() == env.reset()[0].data_ptr()
    assert torch.equal(env.action_masks(), info["action_mask"]) and info["action_mask"].dtype == torch.bool
    again, *_ = env.step(host(info["action_mask"]).argmax(axis=1))
    assert again.data_ptr() == obs.data_ptr()


def test_cuda_without_what_it_needs_names_it(game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """device="cuda" without numba-cuda, or without a driver and GPU, is one error naming what is missing."""
    cls = game.part("device").DeviceVecEnv
    monkeypatch.setattr(cuda_mod, "SIMULATOR", False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba_cuda" else object())
    missing = r"numba-cuda package is not installed \(pip install 'krypenv\[cuda\]'"
    with pytest.raises(CudaUnavailableError, match=missing):
        cls(2, device="cuda")
    monkeypatch.undo()
    monkeypatch.setattr(cuda_mod, "SIMULATOR", False)
    if importlib.util.find_spec("numba_cuda") is not None and not torch.cuda.is_available():
        with pytest.raises(CudaUnavailableError, match="no CUDA driver or GPU|without CUDA"):
            cls(2, device="cuda")


def test_cpu_backend_rejects_nothing_the_gpu_would_play(game: Game) -> None:
    """On the GPU an agent must bring a device policy; the compiled baselines do, for the game they play."""
    from krypenv.envs.device import device_kinds

    expert = agents.load("expert", game=game.name)
    assert callable(expert.device_policy)
    kinds, played = device_kinds([expert, "self"], 3, game.name, on_gpu=True)
    assert played == {1: expert} and kinds[2] == kinds[0]

    class Plain:
        name, game = "plain", None

        def act(self, batch: Any) -> np.ndarray:
            return batch.mask.argmax(axis=1)

    Plain.game = game.name
    with pytest.raises(ValueError, match="cannot play inside the CUDA kernels"):
        device_kinds([Plain(), "random"], 3, game.name, on_gpu=True)
    assert device_kinds([Plain(), "random"], 3, game.name, on_gpu=False)[1][1].name == "plain"


def test_against_itself_on_the_cpu(game: Game) -> None:
    """The self-play comparison helper passes for two identical CPU envs and fails for different seeds (it can fail)."""
    against_device(device_env(game, 5, players=3, opponents="self", seed=1),
                   device_env(game, 5, players=3, opponents="self", seed=1), steps=60, seed=2)
    with pytest.raises(AssertionError, match="differs"):
        against_device(device_env(game, 5, players=3, opponents="self", seed=1),
                       device_env(game, 5, players=3, opponents="self", seed=2), steps=60, seed=2)
