"""``champion``: the strongest Krypkasino agent measured for the table it sits at.

The table (player count, teams) is only known when the agent is first asked to act; it then
builds, once per table, the first agent of this lookup that applies:

| players | teams | champion                                                                   |
|---------|-------|----------------------------------------------------------------------------|
| 2       | —     | :data:`TWO_PLAYERS` over ``<dir>/exit-2p.npz`` (the expert-iteration       |
|         |       | student): 256 worlds rolled out by the student, z = 1, and the last round  |
|         |       | (deck empty) solved exactly, ``endgame:``.  It beats ``pimc`` by 3.09      |
|         |       | [1.59, 4.59] points per deal and the champion before it by 1.63 [0.08,     |
|         |       | 3.19] (1,000 decks, seed 4711), confirmed on 1,000 fresh decks (seed       |
|         |       | 9200): 1.92 [0.31, 3.53]; 42.5 ms per decision on 2 cores                  |
|         |       | (docs/research/expert-iteration.md).  Without that file (or if it was not  |
|         |       | trained for 2 players and the standard deck): :data:`TWO_PLAYERS_PLAIN`,   |
|         |       | ``pimc:samples=256,z=1``, the champion before it, which beats ``pimc`` by  |
|         |       | 2.15 [1.07, 3.23] over 2,000 fresh decks of two seeds                      |
| 3–6     | none  | ``pimc:policy=ppo:<dir>/ppo-{P}p.zip`` with :data:`GUIDED` options, when   |
|         |       | that checkpoint exists and was trained for P players without teams         |
|         |       | (shipped: ``ppo-3p.zip``, ``ppo-4p.zip`` and ``ppo-6p.zip``; over each of  |
|         |       | them the search beats pimc over the decks of two seeds: results)           |
| 4, 6    | teams | the same over ``<dir>/ppo-{P}p-teams{seats}.zip`` (``checkpoint_name``)    |
|         |       | when it was trained with these teams (shipped: ``ppo-4p-teams02+13.zip``,  |
|         |       | 2v2 with partners opposite; the search beats pimc on two seeds: results)   |
| any     | any   | else ``pimc`` at its defaults: determinized search with expert rollouts    |
|         |       | (results, Evaluation); more worlds were measured with 2 players only       |

The champions are measured on the standard deck and deal only: at a table of another preset
or custom deck (RULES.md K20–K22) ``champion`` raises a ValueError naming the preset.

``<dir>`` is the ``checkpoints`` option, by default the repository's ``checkpoints/`` folder
(beside the ``agents`` package), so the spec works from any working directory.  A checkpoint
that exists but cannot be read, or whose search cannot be built, is a one-line ValueError
naming ``champion`` and the spec it tried, never a silent fallback.  :func:`resolve` names
the spec for a table without building it.

| option      | default                | meaning                                            |
|-------------|------------------------|----------------------------------------------------|
| checkpoints | the repository's       | folder of ``exit-2p.npz`` and the                  |
|             |                        | ``ppo-{P}p[-teams…].zip`` files                    |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import load, register
from krypenv.agents.checkpoint import SHIPPED

from krypenv.agent_api import Agent, DecisionBatch
from krypenv.krypkasino.rules import teams_tag

CHECKPOINTS = SHIPPED
GUIDED = "samples=32"  # the options of the policy-guided search (docs/results/krypkasino-search.md: measured)
TWO_PLAYERS_NET = "exit-2p.npz"  # the 2-player student whose search is the champion (an mlp file: no pickle)
TWO_PLAYERS = "endgame:pimc:samples=256,z=1,policy=mlp:{net}"  # docs/research/expert-iteration.md: measured
TWO_PLAYERS_PLAIN = "pimc:samples=256,z=1"  # without that file: the 2-player champion before it (docs/results)
FALLBACK = "pimc"


def _teams(teams: Any) -> tuple[tuple[int, ...], ...] | None:
    """Teams as a tuple of seat tuples (None: no teams), from rules or checkpoint metadata."""
    return None if not teams else tuple(tuple(int(s) for s in t) for t in teams)


def checkpoint_name(players: int, teams: Any = None) -> str:
    """``ppo-{P}p.zip``, with teams ``ppo-{P}p-teams02+13.zip`` (the tag of ``krypenv eval``'s folders)."""
    tag = teams_tag(_teams(teams))
    return f"ppo-{players}p" + (f"-teams{tag}" if tag else "") + ".zip"


def resolve(players: int, teams: Any = None, checkpoints: str | Path = CHECKPOINTS) -> str:
    """The spec ``champion`` plays at a table of ``players`` with ``teams`` (see the module docstring)."""
    if players == 2:
        return _two_players(Path(checkpoints) / TWO_PLAYERS_NET)
    path = Path(checkpoints) / checkpoint_name(players, teams)
    if path.is_file():
        from krypenv.agents.krypkasino.ppo import read_metadata

        try:
            meta = read_metadata(path)
        except ValueError as exc:
            raise ValueError(f"champion: {exc}") from None
        if int(meta["players"]) == players and _teams(meta.get("teams")) == _teams(teams):
            return f"pimc:policy=ppo:{path},{GUIDED}"
    return FALLBACK


def _two_players(net: Path) -> str:
    """The 2-player spec: the search over ``net`` if that file is a 2-player standard-deck Krypkasino student."""
    if not net.is_file():
        return TWO_PLAYERS_PLAIN
    from krypenv.agents.mlp import MLPAgent

    try:
        student = MLPAgent(net)
    except ValueError as exc:
        raise ValueError(f"champion: {exc}") from None
    fits = (student.trained_game, student.players, student.card.get("preset", "standard")) == \
        ("krypkasino", 2, "standard")
    return TWO_PLAYERS.format(net=net) if fits else TWO_PLAYERS_PLAIN


class Champion:
    """``champion``: builds and plays the strongest measured agent of each table it meets."""

    name = "champion"

    def __init__(self, checkpoints: str = str(CHECKPOINTS)) -> None:
        if not isinstance(checkpoints, str) or not checkpoints:
            raise ValueError(f"champion option checkpoints must be a folder, got {checkpoints!r}")
        self.checkpoints = checkpoints
        self.agents: dict[tuple[int, Any], tuple[str, Agent]] = {}

    def agent_for(self, rules: Any) -> tuple[str, Agent]:
        """(spec, agent) for the table of ``rules``, built on first use."""
        if not rules.is_standard:
            raise ValueError(f"champion: the champions are measured and trained on the standard deck and deal; "
                             f"they cannot play the {rules.preset_name} one (RULES.md K22: pick another agent, "
                             f"e.g. expert or pimc)")
        key = (int(rules.players), _teams(rules.teams))
        if key not in self.agents:
            spec = resolve(key[0], key[1], self.checkpoints)
            try:
                self.agents[key] = spec, load(spec)
            except ValueError as exc:
                raise ValueError(f"champion: cannot build {spec!r} for {key[0]} players: {exc}") from None
        return self.agents[key]

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The actions of the table's champion."""
        return self.agent_for(batch.rules)[1].act(batch)


register("champion", Champion, "the strongest agent measured for the table: with 2 players "
         "endgame:pimc:samples=256,z=1,policy=mlp:checkpoints/exit-2p.npz; "
         "policy-guided search over checkpoints/ppo-{P}p[-teams…].zip where one fits (3, 4, 6 players, 2v2); "
         "else pimc (module krypenv.agents.krypkasino.champion)",
         games=("krypkasino",), presets=("standard",))
