"""Seeds as the docs promise them, in every interface of every game, across episodes and processes.

A seed is None or a non-negative integer (:mod:`krypenv.rng`): an integer seeds an env's stream, so
the same seed plays the same episodes in the AEC, Gymnasium and VecEnv interfaces ("same seed,
same trajectories", docs/games/), in any batch size and in any process; game ``i`` of
``VecEnv(seed=s)`` is the Gymnasium env seeded ``s + i`` from episode to episode; ``reset()``
without a seed continues the stream; and with no seed at all an env draws fresh entropy, so two
unseeded envs (or processes) play different games.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from krypenv.games import GAMES, Game
from tests.envs.helpers import lowest_legal

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=list(GAMES.values()), ids=list(GAMES))
def game(request: pytest.FixtureRequest) -> Game:
    """Each registered game in turn."""
    return request.param


def entry(game: Game) -> ModuleType:
    """The game's entry module."""
    return game.part("entry")


def highest_legal(masks: np.ndarray) -> np.ndarray:
    """Each row's highest legal action (it ends Kungsholmskille pots soon: a fold or a play, not a bud)."""
    return (masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)).astype(np.int64)


def aec_digest(module: ModuleType, players: int, seeds: list[int | None], steps: int) -> str:
    """SHA-1 of the observations and rewards of ``steps`` AEC steps per reset (every seat the highest legal action),
    one reset per entry of ``seeds``."""
    env = module.env(players=players)
    h = hashlib.sha1()
    for seed in seeds:
        env.reset(seed=seed)
        for _ in range(steps):
            if not env.agents:
                break
            obs, reward, term, trunc, _ = env.last()
            h.update(obs["observation"].tobytes() + np.float64(reward).tobytes())
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))
    return h.hexdigest()


def gym_episodes(module: ModuleType, players: int, seeds: list[int | None], episodes: int) -> list[list[bytes]]:
    """``episodes`` whole Gymnasium episodes (random seat, random opponents, the highest legal action), the first
    reset with each seed of ``seeds`` in turn and later resets without one; each episode's observations."""
    env = module.GymEnv(players=players, seat="random", opponents="random")
    out = []
    for k in range(episodes):
        obs, info = env.reset(seed=seeds[k] if k < len(seeds) else None)
        steps = [obs.tobytes()]
        while True:
            obs, reward, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            steps.append(obs.tobytes() + np.float64(reward).tobytes())
            if term or trunc:
                break
        out.append(steps)
    return out


def vec_episodes(module: ModuleType, players: int, n: int, seed: int | None, steps: int) -> dict[int, list[list]]:
    """Per game of ``VecEnv(n, seed=seed)`` (random seat and opponents, the highest legal action): its episodes'
    observations, split where it auto-resets."""
    vec = module.VecEnv(n, players=players, seed=seed, seat="random", opponents="random")
    obs = vec.reset()
    games: dict[int, list[list]] = {i: [[obs[i].tobytes()]] for i in range(n)}
    for _ in range(steps):
        obs, rewards, dones, infos = vec.step(highest_legal(vec.action_masks()))
        for i in range(n):
            if dones[i]:
                games[i][-1].append(infos[i]["terminal_observation"].tobytes() + np.float64(rewards[i]).tobytes())
                games[i].append([obs[i].tobytes()])
            else:
                games[i][-1].append(obs[i].tobytes() + np.float64(rewards[i]).tobytes())
    return games


def test_reset_without_a_seed_continues_the_stream(game: Game) -> None:
    """reset(seed=s), then reset(): the same second episode every time (the stream goes on), not the first again;
    Gymnasium and AEC alike."""
    module = entry(game)
    first = gym_episodes(module, game.play_players, [5], 3)
    assert first == gym_episodes(module, game.play_players, [5], 3)
    assert first[1] != first[0] and first[2] != first[1]
    assert aec_digest(module, game.play_players, [5, None], 40) == aec_digest(module, game.play_players, [5, None], 40)
    assert aec_digest(module, game.play_players, [5, None], 40) != aec_digest(module, game.play_players, [5, 5], 40)


def test_no_seed_draws_fresh_entropy(game: Game) -> None:
    """Envs never given a seed play different games: two AEC envs, two Gymnasium envs, the games of one VecEnv and of
    two VecEnvs."""
    module, players = entry(game), game.play_players
    assert aec_digest(module, players, [None], 30) != aec_digest(module, players, [None], 30)
    assert gym_episodes(module, players, [], 1) != gym_episodes(module, players, [], 1)
    a, b = (vec_episodes(module, players, 3, None, 5) for _ in range(2))
    assert len({json.dumps([s.hex() for s in g[0]]) for g in (*a.values(), *b.values())}) == 6


@pytest.mark.parametrize("seed", [0, 7, np.uint16(7), np.int64(123456789)])
def test_game_i_of_a_vec_env_is_the_gym_env_seeded_s_plus_i_across_episodes(game: Game, seed: Any) -> None:
    """Every episode of game i of ``VecEnv(n, seed=s)`` (auto-reset) is the Gymnasium env's, first reset with
    ``s + i`` and then without a seed; any batch size gives game i the same episodes; numpy seeds are integers."""
    module, players = entry(game), game.play_players
    small, large = vec_episodes(module, players, 2, seed, 120), vec_episodes(module, players, 5, int(seed), 120)
    for i in range(2):
        assert small[i][:-1] == large[i][:-1], f"game {i} depends on the batch size"
        finished = small[i][:-1]
        assert len(finished) >= 2, "the run should span episodes"
        assert gym_episodes(module, players, [int(seed) + i], len(finished)) == finished


def test_vec_seed_method_reseeds_mid_run(game: Game) -> None:
    """``seed(s)`` after play then ``reset()`` deals what a fresh ``VecEnv(seed=s)`` deals; ``seed(None)`` keeps the
    streams going."""
    module, players = entry(game), game.play_players
    vec = module.VecEnv(3, players=players, seed=1)
    vec.reset()
    for _ in range(10):
        vec.step(lowest_legal(vec.action_masks()))
    vec.seed(4)
    assert np.array_equal(vec.reset(), module.VecEnv(3, players=players, seed=4).reset())
    vec.seed(None)
    again = vec.reset()
    assert not np.array_equal(again, module.VecEnv(3, players=players, seed=4).reset())


SCRIPT = """
import json, sys
from krypenv.games import GAMES
from tests.envs.test_seeding import aec_digest, gym_episodes, vec_episodes
seed = None if sys.argv[1] == "none" else int(sys.argv[1])
out = {}
for name, game in GAMES.items():
    module = game.part("entry")
    out[name] = [aec_digest(module, game.play_players, [seed, None], 30),
                 [[s.hex() for s in e] for e in gym_episodes(module, game.play_players, [seed], 2)],
                 {i: [[s.hex() for s in e] for e in g] for i, g in vec_episodes(module, game.play_players, 2,
                                                                                   seed, 40).items()}]
print(json.dumps(out))
"""


def in_process(seed: int | None) -> str:
    """SCRIPT's output, computed here."""
    out = {}
    for name, game in GAMES.items():
        module = game.part("entry")
        out[name] = [aec_digest(module, game.play_players, [seed, None], 30),
                     [[s.hex() for s in e] for e in gym_episodes(module, game.play_players, [seed], 2)],
                     {str(i): [[s.hex() for s in e] for e in g]
                      for i, g in vec_episodes(module, game.play_players, 2, seed, 40).items()}]
    return json.dumps(out)


@pytest.mark.slow
def test_seeds_give_the_same_games_in_any_process() -> None:
    """Two fresh processes (different hash seeds) and this one play the same games from the same seed, in all three
    interfaces of every game; without a seed two processes play different ones."""
    def run(seed: str, hash_seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", SCRIPT, seed], env=env, cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=300)
        return out.stdout.strip()

    seeded = run("11", "1")
    assert seeded == run("11", "2") == in_process(11)
    assert run("none", "3") != run("none", "3")
