"""The registry of games: one declaration per game, read by everything that serves more than one game.

Which games exist is written here and nowhere else.  The CLI, the UI, ``krypenv bench``,
``krypenv replay``, ``krypenv eval``, ``train.py`` and the tests read :data:`GAMES`; outside
this module and a game's own packages no code branches on a game's name.  A declaration is
data: the names of the game's modules, one per layer, imported only when that layer is used
(:meth:`Game.part`), so this module sits at the bottom of the house and imports no game.

=================  ==============================================================================
part               what the module named there supplies
=================  ==============================================================================
``entry``          the PettingZoo-style entry module: ``env``, ``raw_env``, ``GymEnv``, ``VecEnv``
``records``        game records: parse, check and replay one record (:mod:`krypenv.records`)
``bench``          registers the game's engine and env benchmarks on import (:mod:`krypenv.bench`)
``demo``           ``run_demo(players, seed)``: one deal between random players, printed
``agents``         registers the game's agent specs on import (:mod:`krypenv.agents.base`)
``eval``           the game's duplicate evaluation: ``EvalConfig``, ``evaluate``, ``Results``, ``Played``,
                   ``OPTIONS``, ``config_from_args``, ``default_out``, ``run_eval`` (:mod:`krypenv.eval`)
``training``       the game's pieces of ``train.py`` (:mod:`krypenv.training`)
``ui``             the game's adapter for terminal and web play (:mod:`krypenv.ui.session`)
``device``         ``DeviceVecEnv``: N games as tensors on the GPU or CPU (:mod:`krypenv.envs.device`)
``cuda_kernels``   the device env's CUDA kernels, ``build(policy_key)`` (an ``EnvKernels``; ``PARTS``,
                   ``POLICY_PARTS``, ``ORDER``) and ``engine_play()`` (numba-cuda is imported with them)
=================  ==============================================================================

Adding a game is one package per layer plus one :class:`Game` in :data:`GAMES` (see
``CONTRIBUTING.md``); the registry-driven tests (``tests/envs/test_conformance.py`` and the
others that loop over :data:`GAMES`) pick it up by themselves.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["DEFAULT_GAME", "GAMES", "PARTS", "Game", "game", "lazy_exports", "names"]

PARTS = ("entry", "records", "bench", "demo", "agents", "eval", "training", "ui", "device",
         "cuda_kernels")  # the module-valued fields


def lazy_exports(module: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module's ``__getattr__`` that imports each name of ``exports`` (``"module:attribute"``) on first access."""

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        source, attribute = where.split(":")
        return getattr(importlib.import_module(source), attribute)

    return __getattr__


@dataclass(frozen=True)
class Game:
    """One game's declaration: its names, its defaults and the module of each of its layers."""

    name: str  # the game's id on the command line, in records and in the registries ("krypkasino")
    title: str  # for people ("Krypkasino")
    rule_prefix: str  # the letter of its rule ids in its rules contract ("K": K1–K19)
    rules_doc: str  # the rules contract, relative to the repository root
    gym_id: str  # the Gymnasium id registered when krypenv is imported
    players: tuple[int, ...]  # the player counts its rules allow
    play_players: int  # the default table of ``krypenv play``, ``serve`` and ``demo``
    play_opponent: str  # the agent spec that fills the other seats there when none is given
    entry: str
    records: str
    bench: str
    demo: str
    agents: str
    eval: str
    training: str
    ui: str
    device: str
    cuda_kernels: str

    def part(self, part: str) -> ModuleType:
        """The module of one of the game's layers (one of :data:`PARTS`), imported on first use."""
        if part not in PARTS:
            raise ValueError(f"unknown part {part!r} of a game; parts: {', '.join(PARTS)}")
        return importlib.import_module(getattr(self, part))  # the registry's lazy load: no game at import time

    @property
    def gym_entry_point(self) -> str:
        """The ``module:attr`` of the game's Gymnasium env class, for ``gymnasium.register``."""
        return f"{self.entry}:GymEnv"


GAMES: dict[str, Game] = {
    game.name: game
    for game in (
        Game(
            name="krypkasino", title="Krypkasino", rule_prefix="K", rules_doc="docs/RULES.md",
            gym_id="krypenv/Krypkasino-v0", players=(2, 3, 4, 5, 6), play_players=3, play_opponent="expert",
            entry="krypenv.krypkasino_v0", records="krypenv.krypkasino.records", bench="krypenv.krypkasino.bench",
            demo="krypenv.krypkasino.demo", agents="krypenv.agents.krypkasino", eval="krypenv.eval.krypkasino",
            training="krypenv.training.krypkasino", ui="krypenv.ui.krypkasino", device="krypenv.krypkasino.device",
            cuda_kernels="krypenv.krypkasino.cuda_kernels",
        ),
        Game(
            name="kungsholmskille", title="Kungsholmskille", rule_prefix="L", rules_doc="docs/KILLE.md",
            gym_id="krypenv/Kungsholmskille-v0", players=(2, 3, 4, 5, 6), play_players=4, play_opponent="random",
            entry="krypenv.kungsholmskille_v0", records="krypenv.kungsholmskille.records",
            bench="krypenv.kungsholmskille.bench", demo="krypenv.kungsholmskille.demo",
            agents="krypenv.agents.kungsholmskille", eval="krypenv.eval.kungsholmskille",
            training="krypenv.training.kungsholmskille", ui="krypenv.ui.kungsholmskille",
            device="krypenv.kungsholmskille.device", cuda_kernels="krypenv.kungsholmskille.cuda_kernels",
        ),
    )
}
DEFAULT_GAME = "krypkasino"  # the game of a command without --game, and of a record that names none


def names() -> tuple[str, ...]:
    """The registered games' names, in registry order."""
    return tuple(GAMES)


def game(name: object) -> Game:
    """The declaration of the game called ``name``; ValueError naming the known games otherwise."""
    if not isinstance(name, str) or name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(GAMES)}")
    return GAMES[name]
