"""Agent specs, the MoveAgent base and the random agent."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.base import MoveAgent, RandomAgent

from krypenv import agents
from krypenv.krypkasino.single import KrypkasinoEnv
from krypenv.krypkasino.view import SeatView


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
    assert agents.load("tests.agents.test_base:FirstMove").name == "first-move"
    assert "random" in agents.known()
    for bad, match in [("", "non-empty"), ("nosuch", "unknown agent 'nosuch'.*known agents: .*random"),
                       ("random:x", "key=value"), ("random:x=1", "random:x=1"),
                       ("tests.agents.test_base:Nope", "cannot import"), ("numpy:pi", "not an agent")]:
        with pytest.raises(ValueError, match=match):
            agents.load(bad)


def test_registry_is_game_aware(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names play the games they were registered for; random plays every game; the default game is Krypkasino."""
    from krypenv.agents import base

    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    base._REGISTRY.pop("rllib")  # rllib:PATH plays both games (tests/ray/test_rllib.py)
    base._REGISTRY.pop("tabular")  # tabular:PATH plays every game (tests/openspiel/test_tiny.py)
    base._REGISTRY.pop("mlp")  # mlp:PATH plays every game (tests/agents/test_mlp.py)
    base.register("folder", lambda: RandomAgent(), "always folds", games=("kungsholmskille",))
    assert set(agents.known("krypkasino")) == {"random", "greedy", "creeper", "expert", "pimc", "ppo", "champion",
                                               "endgame"}
    kille = agents.known("kungsholmskille")
    assert set(kille) == {"random", "folder", "timid", "expert", "pimc", "ppo"} and kille["folder"] == "always folds"
    assert set(agents.known()) == set(agents.known("krypkasino")) | {"folder", "timid"}
    assert agents.known("no-such-game") == {"random": "uniform over the legal actions"}
    assert isinstance(agents.load("random", game="kungsholmskille"), RandomAgent)
    assert agents.load("folder", game="kungsholmskille").name == "folder"
    assert agents.load("expert").name == agents.load("expert", game="krypkasino").name == "expert"
    with pytest.raises(ValueError, match=r"^agent 'greedy' plays krypkasino, not kungsholmskille; "
                                         r"known for kungsholmskille: expert, folder, pimc, ppo, random, timid, "
                                         r"or module:attr"):
        agents.load("greedy", game="kungsholmskille")
    assert agents.load("expert", game="kungsholmskille").game == "kungsholmskille"  # one name, an agent per game
    with pytest.raises(ValueError, match="agent 'folder' plays kungsholmskille, not krypkasino; known for krypkasino: "
                                         "champion, creeper, endgame, expert, greedy, pimc, ppo, random"):
        agents.load("folder")
    with pytest.raises(ValueError,
                       match=r"unknown agent 'nosuch'; known agents: expert, folder, pimc, ppo, random, timid,"):
        agents.load("nosuch", game="kungsholmskille")
    assert agents.load("tests.agents.test_base:FirstMove", game="kungsholmskille").name == "first-move"
    with pytest.raises(ValueError, match="games must be a tuple of game names"):
        base.register("bad", lambda: RandomAgent(), "bad", games="krypkasino")
