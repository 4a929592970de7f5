"""Agent specs, the MoveAgent base and the random agent."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.base import MoveAgent, RandomAgent
from krypenv.krypkasino.view import SeatView
from krypenv.krypkasino.single import KrypkasinoEnv


class PythonRandom(RandomAgent):
    """The random agent forced through Python (no built-in kernel)."""

    native = None


class FirstMove(MoveAgent):
    """Plays the first legal move in the view's order."""

    name = "first-move"

    def choose(self, view: SeatView, u: float):
        return view.legal_moves[0]


def episode(env: KrypkasinoEnv, seed: int) -> list:
    obs, info = env.reset(seed=seed)
    out = []
    while True:
        a = int(np.flatnonzero(info["action_mask"])[-1])
        obs, r, term, _, info = env.step(a)
        out.append((obs.tobytes(), r))
        if term:
            return out


@pytest.mark.parametrize("players", [2, 4])
def test_random_agent_makes_the_builtin_random_choices(players: int) -> None:
    """Same seed, same game: the compiled built-in opponent and the Python random agent choose alike."""
    builtin = KrypkasinoEnv(players=players, opponents="random")
    python = KrypkasinoEnv(players=players, opponents=PythonRandom())
    for seed in range(3):
        assert episode(builtin, seed) == episode(python, seed)


def test_move_agent_plays_whole_games_with_capture_choices() -> None:
    env = KrypkasinoEnv(players=3, opponents=FirstMove())
    for seed in range(5):
        episode(env, seed)
    assert env.core.deals.done[0]


def test_specs() -> None:
    assert isinstance(agents.load("random"), RandomAgent)
    assert agents.load(" random ").name == "random"
    assert agents.load("tests.test_agents_base:FirstMove").name == "first-move"
    assert "random" in agents.known()
    for bad, match in [("", "non-empty"), ("nosuch", "unknown agent 'nosuch'.*known agents: .*random"),
                       ("random:x", "key=value"), ("random:x=1", "random:x=1"),
                       ("tests.test_agents_base:Nope", "cannot import"), ("numpy:pi", "not an agent")]:
        with pytest.raises(ValueError, match=match):
            agents.load(bad)

