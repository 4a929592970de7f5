"""``champion``: the strongest measured agent per table (krypenv.agents.krypkasino.champion)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from krypenv.agents.krypkasino.champion import (
    CHECKPOINTS,
    GUIDED,
    TWO_PLAYERS,
    TWO_PLAYERS_NET,
    TWO_PLAYERS_PLAIN,
    Champion,
    checkpoint_name,
    resolve,
)
from krypenv.agents.krypkasino.endgame import EndgameAgent
from krypenv.agents.krypkasino.guided import GuidedPIMC
from krypenv.agents.krypkasino.pimc import PIMCAgent
from krypenv.agents.krypkasino.ppo import add_metadata, metadata

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.krypkasino.rules import Rules
from tests.agents.krypkasino.test_heuristics import decisions_of
from tests.agents.krypkasino.test_ppo_agent import make_model


def test_registered_and_resolved_per_table() -> None:
    assert "champion" in agents.known() and "champion" in agents.known("krypkasino")
    assert "champion" not in agents.known("kungsholmskille")
    with pytest.raises(ValueError, match="agent 'champion' plays krypkasino, not kungsholmskille"):
        agents.load("champion", game="kungsholmskille")
    net = CHECKPOINTS / "exit-2p.npz"  # shipped: the expert-iteration student (docs/research/expert-iteration.md)
    assert resolve(2) == TWO_PLAYERS.format(net=net) == f"endgame:pimc:samples=256,z=1,policy=mlp:{net}"
    assert resolve(2, None, "/nowhere") == TWO_PLAYERS_PLAIN == "pimc:samples=256,z=1"  # without the file
    for players in (3, 4, 6):  # the shipped checkpoints (docs/results/krypkasino-players.md)
        assert resolve(players) == f"pimc:policy=ppo:{CHECKPOINTS / f'ppo-{players}p.zip'},{GUIDED}"
    assert resolve(5) == "pimc"
    teams = CHECKPOINTS / "ppo-4p-teams02+13.zip"  # shipped: 2v2, seats 0 and 2 against 1 and 3
    assert resolve(4, ((0, 2), (1, 3))) == f"pimc:policy=ppo:{teams},{GUIDED}"
    assert resolve(6, ((0, 2, 4), (1, 3, 5))) == "pimc" and resolve(6, ((0, 3), (1, 4), (2, 5))) == "pimc"
    assert resolve(4, ((0, 2), (1, 3)), "/nowhere") == "pimc"


def test_plays_each_table_with_its_agent(tmp_path: Path) -> None:
    """2 players: pimc with more worlds; 3 with a 3-player checkpoint there: guided on it; teams: pimc."""
    from krypenv.agents.krypkasino.move_features import VERSION

    path = tmp_path / "ppo-3p.zip"
    make_model(3, policy="moves").save(path)
    add_metadata(path, metadata(Rules(players=3), features=VERSION, env_steps=0, args={"gamma": 1.0,
                                                                                      "reward_scale": 0.1}))
    champ = agents.load(f"champion:checkpoints={tmp_path}")
    assert isinstance(champ, Champion) and champ.name == f"champion:checkpoints={tmp_path}"
    for players, kind in ((3, GuidedPIMC), (2, PIMCAgent)):
        for _, (_core, batch) in zip(range(3), decisions_of(players, 11, n=3)):
            check_actions(champ.name, batch, champ.act(batch))
        assert isinstance(champ.agent_for(batch.rules)[1], kind)
    assert isinstance(champ.agent_for(Rules(2))[1], PIMCAgent)  # no exit-2p.npz in that folder
    spec, two = agents.load("champion").agent_for(Rules(2))
    assert spec == resolve(2) and isinstance(two, EndgameAgent) and isinstance(two.inner, GuidedPIMC)
    assert (two.inner.samples, two.inner.z) == (256, 1.0)
    assert two.inner.net.agent.path == CHECKPOINTS / TWO_PLAYERS_NET
    assert resolve(4, ((0, 2), (1, 3)), tmp_path) == "pimc"


def test_a_team_table_looks_up_its_own_checkpoint(tmp_path: Path) -> None:
    """Teams: ``ppo-{P}p-teams{seats}.zip`` beside the no-teams file, used only if trained with those teams."""
    from krypenv.agents.krypkasino.move_features import VERSION

    assert checkpoint_name(4) == "ppo-4p.zip" and checkpoint_name(4, ((0, 2), (1, 3))) == "ppo-4p-teams02+13.zip"
    assert checkpoint_name(6, [[0, 3], [1, 4], [2, 5]]) == "ppo-6p-teams03+14+25.zip"
    teams = ((0, 2), (1, 3))
    path = tmp_path / "ppo-4p-teams02+13.zip"
    make_model(4, policy="moves").save(path)
    add_metadata(path, metadata(Rules(players=4), features=VERSION, env_steps=0, args={}))  # trained without teams
    assert resolve(4, teams, tmp_path) == "pimc" and resolve(4, None, tmp_path) == "pimc"
    add_metadata(path, metadata(Rules(players=4, teams=teams), features=VERSION, env_steps=0, args={}))
    assert resolve(4, teams, tmp_path) == f"pimc:policy=ppo:{path},{GUIDED}"
    assert resolve(4, None, tmp_path) == "pimc"
    champ = agents.load(f"champion:checkpoints={tmp_path}")
    assert isinstance(champ.agent_for(Rules(players=4, teams=teams))[1], GuidedPIMC)


def test_a_broken_checkpoint_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "ppo-3p.zip").write_bytes(b"not a zip")
    champ = agents.load(f"champion:checkpoints={tmp_path}")
    _, batch = next(decisions_of(3, 1, n=2))
    with pytest.raises(ValueError, match=r"^champion: ppo checkpoint .*ppo-3p.zip") as err:
        champ.act(batch)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="champion option checkpoints"):
        agents.load("champion:checkpoints=3")


def student_copy(folder: Path, **card: object) -> Path:
    """``exit-2p.npz`` copied into ``folder`` with its card's fields replaced by ``card``."""
    with np.load(CHECKPOINTS / TWO_PLAYERS_NET, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["card"] = np.array(json.dumps({**json.loads(str(arrays["card"])), **card}))
    path = folder / TWO_PLAYERS_NET
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(("card", "fits"), [({}, True), ({"players": 3}, False), ({"game": "kungsholmskille"}, False),
                                            ({"preset": "tiny"}, False), ({"preset": "standard"}, True)])
def test_the_two_player_search_needs_a_two_player_standard_student(tmp_path: Path, card: dict, fits: bool) -> None:
    """2 players: the search over ``<dir>/exit-2p.npz`` only when its card says Krypkasino, 2 players, standard."""
    path = student_copy(tmp_path, **card)
    assert resolve(2, None, tmp_path) == (TWO_PLAYERS.format(net=path) if fits else TWO_PLAYERS_PLAIN)


def test_a_broken_two_player_student_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / TWO_PLAYERS_NET).write_bytes(b"not an npz")
    with pytest.raises(ValueError, match=r"^champion: mlp checkpoint .*exit-2p.npz: not a readable") as err:
        agents.load(f"champion:checkpoints={tmp_path}").agent_for(Rules(2))
    assert "\n" not in str(err.value)
