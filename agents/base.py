"""Agent building blocks and the spec strings that name agents everywhere, for every game.

Every agent follows :class:`krypenv.agent_api.Agent`: ``name`` and ``act(batch) -> actions``.
:class:`RandomAgent` plays any game from its masks alone.  Rule-based agents subclass
:class:`MoveAgent` and only choose a *move* from ``view.legal_moves`` of one seat view (any
view with ``legal_moves`` and ``action_for``, :class:`krypenv.agent_api.MoveView`; in
Krypkasino a (card, capture) pair of :class:`krypenv.krypkasino.view.SeatView`); the base
class turns it into the next action (in Krypkasino a card, then table-card choices when the
card has several captures) and makes the same choice again at each step, so it needs no
memory between calls.

Spec strings (``agents.load(spec, game="krypkasino")``):

| spec                  | agent                                                            |
|-----------------------|------------------------------------------------------------------|
| ``random``            | uniform over the legal actions (every game)                      |
| ``name``              | a registered agent with default options (``agents.known(game)``) |
| ``name:k=v,k2=v2``    | a registered agent with options, e.g. ``pimc:samples=32``        |
| ``ppo:PATH``          | a learned policy loaded from a checkpoint (registered by name)   |
| ``module:attr``       | a user's agent: ``attr`` of an importable module, a class        |
|                       | (called with no arguments) or an agent object                    |

**Games.**  Each registered name plays the games it was registered for
(``register(..., games=("krypkasino",))``, the default) or every game (``games=None``, as
``random``).  ``load(spec, game)`` builds agents for one game (default ``krypkasino``) and
``known(game)`` lists that game's agents (``known()``: all of them).  A bad spec, or a name
registered for another game only, raises ValueError naming it and listing the game's known
agents.  ``register(..., limits=...)`` declares the options a spec from outside (``krypenv
serve``'s requests) may set, with their bounds (:class:`Limit`); the server refuses every
other option and every ``module:attr`` (:mod:`krypenv.ui.menu`).  One name may serve several games
with a different agent each (``expert``, ``pimc``); ``load`` marks the agent with the game it was
built for (``agent.game``) and :func:`check_game` (used by the harnesses) refuses it at another
game's table.  A ``module:attr`` agent is the user's to match to the game.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from krypenv.agent_api import NATIVE_RANDOM, Agent, DecisionBatch, MoveView
from krypenv.games import DEFAULT_GAME  # the game of load() and register() when none is named
from krypenv.rng import k_pick_legal

__all__ = ["BOOL", "DEFAULT_GAME", "Entry", "Limit", "MoveAgent", "RandomAgent", "check_game", "find_entry", "known",
           "load", "parse_options", "register"]



class MoveAgent:
    """Base of rule-based agents: subclasses implement :meth:`choose` on a :class:`~krypenv.agent_api.MoveView`."""

    name = "move-agent"

    def choose(self, view: MoveView, u: float) -> Any:
        """The move to play, one of ``view.legal_moves``; ``u`` is a uniform in [0, 1) for tie-breaking."""
        raise NotImplementedError

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The next action towards the chosen move, for every decision of the batch.

        When a move takes several actions (a Krypkasino capture choice) ``view.legal_moves``
        holds only the moves still open (the pending card with the cards fixed so far), so
        choosing again among them always completes a legal move; ``u`` is drawn afresh from
        the game's stream at every step.
        """
        u = batch.uniforms(1)[:, 0]
        return np.array([view.action_for(self.choose(view, float(uk))) for view, uk in zip(batch.views(), u)],
                        dtype=np.int64)


class RandomAgent:
    """``random``: uniform over the legal actions of any game (built-in compiled opponents choose alike)."""

    name = "random"
    native = NATIVE_RANDOM

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The ⌊u·n⌋-th legal action of each mask, u drawn from the game's stream."""
        out = np.empty(len(batch), np.int64)
        k_pick_legal(batch.mask, batch.uniforms(1)[:, 0], out)
        return out


# --------------------------------------------------------------------------- registry and specs
@dataclass(frozen=True)
class Limit:
    """The values one option may take in a spec from outside (a web request): a range, or a set of choices.

    ``checkpoint`` names a learned-policy kind (``"ppo"``) whose ``KIND:NAME`` values are also
    allowed, NAME being one of the checkpoints the caller trusts (see :mod:`krypenv.ui.menu`).
    """

    lo: float | None = None
    hi: float | None = None
    integer: bool = True
    choices: tuple[Any, ...] | None = None
    checkpoint: str | None = None

    def describe(self) -> str:
        """The allowed values in words, for error messages."""
        if self.choices is not None:
            words = [str(c).lower() if isinstance(c, bool) else str(c) for c in self.choices]
            return "one of " + ", ".join(words + ([f"{self.checkpoint}:NAME"] if self.checkpoint else []))
        return f"{'an integer' if self.integer else 'a number'} from {self.lo:g} to {self.hi:g}"

    def admits(self, value: Any) -> bool:
        """True if ``value`` (as :func:`parse_options` reads it) is allowed; checkpoint values are the caller's
        to check."""
        if self.choices is not None:
            return any(value is c or (type(value) is type(c) and value == c) for c in self.choices)
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (self.integer and not isinstance(value, int))):
            return False
        return bool(self.lo is not None and self.hi is not None and self.lo <= value <= self.hi)


BOOL = Limit(choices=(True, False))


@dataclass(frozen=True)
class Entry:
    """A registered agent: how to build it from options, its idea in a line, and the games it plays."""

    factory: Callable[..., Agent]
    summary: str
    takes_path: bool = False  # options are one path (``ppo:PATH``), not k=v pairs
    games: tuple[str, ...] | None = (DEFAULT_GAME,)  # None: every game
    limits: dict[str, Limit] = field(default_factory=dict)  # options a spec from outside may set, and their bounds
    presets: tuple[str, ...] | None = None  # the presets (K22, L22) it plays; None: every one
    argument: str = "PATH"  # with takes_path: what the one option is, as the docs show it (``endgame:SPEC``)

    def plays(self, game: str) -> bool:
        """True if this agent plays ``game``."""
        return self.games is None or game in self.games


_REGISTRY: dict[str, tuple[Entry, ...]] = {}  # name -> its entries, one per set of games (same name, other games)


def register(name: str, factory: Callable[..., Agent], summary: str, takes_path: bool = False,
             games: tuple[str, ...] | None = (DEFAULT_GAME,), limits: dict[str, Limit] | None = None,
             presets: tuple[str, ...] | None = None, argument: str = "PATH") -> None:
    """Make ``name`` (and ``name:k=v,...``) a spec that builds an agent with ``factory(**options)`` for ``games``.

    ``games`` names the games the agent plays (default Krypkasino only); None means every game.
    One name may be registered once per game (``expert`` is a different agent in each game);
    registering it again for a game replaces that game's agent.  ``limits`` declares the options
    a spec from outside (``krypenv serve``) may set and their bounds; any other option is refused there.
    ``presets`` names the presets it plays (None: every one; ``krypenv serve`` offers it at those only).
    ``argument`` names what the one option of a ``takes_path`` agent is (``PATH``; ``SPEC`` for a wrapper).
    """
    if games is not None and (isinstance(games, str) or not all(isinstance(g, str) and g for g in games)):
        raise ValueError(f"games must be a tuple of game names or None (every game), got {games!r}")
    new = Entry(factory, summary, takes_path, None if games is None else tuple(games), dict(limits or {}),
                None if presets is None else tuple(presets), argument)
    kept = tuple(e for e in _REGISTRY.get(name, ()) if not (e.games is None or new.games is None
                                                            or set(e.games) & set(new.games)))
    _REGISTRY[name] = (*kept, new)


def find_entry(name: str, game: str) -> Entry | None:
    """The entry of ``name`` that plays ``game``, if any."""
    return next((e for e in _REGISTRY.get(name, ()) if e.plays(game)), None)


def known(game: str | None = None) -> dict[str, str]:
    """The registered agent names that play ``game`` (every registered one for None), with their one-line summaries."""
    out = {}
    for name, entries in sorted(_REGISTRY.items()):
        entry = entries[0] if game is None else find_entry(name, game)
        if entry is not None:
            out[name] = entry.summary
    return out


def _known_text(game: str) -> str:
    names = ", ".join(known(game))
    return f"known agents: {names}, or module:attr for your own"


def _parse_value(text: str) -> Any:
    """An option value: int, float, true/false, or the string itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_options(spec: str, text: str) -> dict[str, Any]:
    """The ``k=v,k2=v2`` options of a spec as a dict of parsed values; ValueError naming the bad part."""
    opts: dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"agent spec {spec!r}: options must be key=value pairs separated by commas, got {part!r}")
        opts[key.strip()] = _parse_value(value.strip())
    return opts


def load(spec: str, game: str = DEFAULT_GAME) -> Agent:
    """The agent a spec string names, to play ``game`` (see the module docstring); ValueError naming the bad spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; {_known_text(game)}")
    spec = spec.strip()
    name, sep, rest = spec.partition(":")
    entries = _REGISTRY.get(name)
    if entries:
        entry = find_entry(name, game)
        if entry is None:
            names = ", ".join(known(game))
            plays = ", ".join(g for e in entries for g in (e.games or ()))
            raise ValueError(f"agent {name!r} plays {plays}, not {game}; "
                             f"known for {game}: {names}, or module:attr for your own")
        try:
            agent = entry.factory(rest) if entry.takes_path else entry.factory(**parse_options(spec, rest))
        except TypeError as exc:
            raise ValueError(f"agent spec {spec!r}: {exc}") from None
        agent.name = spec
        agent.game = game  # the game it was built for: tables of another game refuse it (check_game)
        return agent
    if not sep:
        raise ValueError(f"unknown agent {spec!r}; {_known_text(game)}")
    try:
        target = getattr(importlib.import_module(name), rest)  # a user's module:attr
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"agent spec {spec!r}: cannot import {rest!r} from module {name!r} ({exc}); "
                         f"{_known_text(game)}") from None
    agent = target() if isinstance(target, type) else target
    if not isinstance(agent, Agent):
        raise ValueError(f"agent spec {spec!r}: {rest} is not an agent (it needs a name and act(batch)); "
                         f"{_known_text(game)}")
    return agent


def check_game(agent: Agent, game: str) -> None:
    """ValueError if ``agent`` was built by :func:`load` for another game and does not play ``game`` (e.g.
    Krypkasino's expert)."""
    built = getattr(agent, "game", None)
    if built is None or built == game:
        return
    entry = find_entry(str(getattr(agent, "name", "")).partition(":")[0], built)
    if entry is not None and entry.plays(game):  # random plays every game
        return
    raise ValueError(f"agent {getattr(agent, 'name', agent)!r} was built for {built}, not {game}; "
                     f"load it with agents.load(spec, game={game!r})")


register("random", lambda: RandomAgent(), "uniform over the legal actions", games=None)
