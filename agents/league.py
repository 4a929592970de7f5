"""A league of opponents for training: baselines plus frozen snapshots of the learner, one per seat and episode.

``League`` is one agent object (:class:`krypenv.agent_api.Agent`) that plays every opponent seat
of every game of a training VecEnv (``opponents=league``; Krypkasino's
:class:`krypenv.krypkasino.vec.KrypkasinoVecEnv` or Kungsholmskille's
:class:`krypenv.kungsholmskille.vec.KungsholmskilleVecEnv`).  Behind it are *members*: fixed
agents (any spec of the game) and frozen copies of the learner added during training
(:meth:`League.add_snapshot`, the newest ``max_snapshots`` kept).  Each (game, seat) is
assigned a member, drawn afresh for every *episode* (a Krypkasino deal; a Kungsholmskille pot,
carried over deals until it goes out) with the league's weights from a generator seeded by
``seed``; ``act(batch)`` groups the decisions by assigned member and calls each member once
with its sub-batch.  The league imports no game: it reads the signals below off ``batch.core``.

**When an episode starts.**  The VecEnvs auto-reset a finished game inside ``step`` and may let
opponents act in the new episode before the caller sees ``done``, so the league finds new
episodes itself, at the first opponent decision of each (every episode has one), and draws
that game's opponents then:

* a core with an ``episodes`` counter (Kungsholmskille's: episodes started per env, raised by
  ``reset`` and the env's auto-reset) starts a new episode whenever the counter differs from
  the one seen at the game's previous opponent decision.  A move counter cannot do this here:
  a pot that goes out in its first deal may be followed by one whose first opponent decision
  comes at a later move than the last one of the old pot.
* otherwise (Krypkasino) the engine's move counter (``deals.n_moves``) of a game drops when a
  new deal starts (a deal always has opponent decisions late in it).

A member is therefore never asked to play an episode drawn for another.  ``assignment(i, k)``
says who played the learner's ``k``-th episode in game ``i`` (0-based, in the order they were
played), for per-opponent statistics.

Weights: ``weights`` maps member labels to relative weights; the label ``self`` stands for
all snapshots together (split evenly among them); while there is none, its weight goes to the
other members in proportion.  Draws are deterministic given the seed and the sequence of
decisions (which is deterministic given the env's seed).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from krypenv.agent_api import Agent, DecisionBatch
from krypenv.games import DEFAULT_GAME

SELF = "self"


class League:
    """Opponents per game, seat and episode, drawn from fixed members and learner snapshots (module docstring)."""

    def __init__(self, members: dict[str, Agent], weights: dict[str, float], seed: int = 0,
                 max_snapshots: int = 5, name: str = "league") -> None:
        unknown = sorted(set(weights) - set(members) - {SELF})
        if unknown:
            raise ValueError(f"league weights name unknown members {unknown}; members are {sorted(members)} "
                             f"and {SELF!r}")
        for label, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not np.isfinite(w) or w < 0:
                raise ValueError(f"league weight of {label!r} must be a number >= 0, got {w!r}")
        fixed = sum(w for k, w in weights.items() if k != SELF)
        if fixed <= 0:
            raise ValueError("league weights: at least one fixed member (not 'self') needs a weight > 0")
        if max_snapshots < 1:
            raise ValueError(f"max_snapshots must be at least 1, got {max_snapshots}")
        self.name = name
        self.fixed = {k: a for k, a in members.items() if weights.get(k, 0) > 0}
        self.weights = {k: float(w) for k, w in weights.items() if w > 0}
        self.snapshots: deque[tuple[str, Agent]] = deque(maxlen=max_snapshots)
        self.rng = np.random.default_rng(seed)
        self._members: list[tuple[str, Agent]] = []  # every member ever used; indices stay valid
        self._index: dict[str, int] = {}
        for label, agent in self.fixed.items():
            self._add_member(label, agent)
        self._n = 0
        self._assign = np.zeros((0, 0), np.int64)  # (games, seats) member index
        self._last_moves = np.zeros(0, np.int64)  # per game: the move counter, or the episode counter, last seen
        self._deals = np.zeros(0, np.int64)  # episodes started per game
        self._history: list[dict[int, list[str]]] = []  # per game: episode number -> labels of the opponent seats
        self.deals_drawn: dict[str, int] = {}  # per member label: episodes (Krypkasino deals) it was drawn for

    # ------------------------------------------------------------------ members
    def _add_member(self, label: str, agent: Agent) -> int:
        if label in self._index:
            raise ValueError(f"league member {label!r} exists already")
        self._index[label] = len(self._members)
        self._members.append((label, agent))
        return self._index[label]

    def add_snapshot(self, agent: Agent, label: str) -> None:
        """Add a frozen learner copy; the oldest one leaves when there are ``max_snapshots``."""
        self._add_member(label, agent)
        self.snapshots.append((label, agent))

    def labels(self) -> list[str]:
        """Every member label ever used, by member index."""
        return [label for label, _ in self._members]

    def probabilities(self) -> dict[str, float]:
        """The current chance of each active member being drawn for a seat."""
        w = {k: v for k, v in self.weights.items() if k != SELF}
        if self.snapshots and self.weights.get(SELF, 0) > 0:
            share = self.weights[SELF] / len(self.snapshots)
            for label, _ in self.snapshots:
                w[label] = share
        total = sum(w.values())
        return {k: v / total for k, v in w.items()}

    # ------------------------------------------------------------------ assignments
    def _grow(self, n: int, players: int) -> None:
        if n <= self._n and self._assign.shape[1] == players:
            return
        self._n = n
        self._assign = np.full((n, players), -1, np.int64)
        self._last_moves = np.full(n, np.iinfo(np.int64).max, np.int64)  # no episode counter is ever this
        self._deals = np.zeros(n, np.int64)
        self._history = [{} for _ in range(n)]

    def _draw(self, games: np.ndarray, players: int, learner: np.ndarray) -> None:
        """Draw the members of every seat of ``games``; ``learner`` (per game) is the learner's seat, not played."""
        probs = self.probabilities()
        labels = list(probs)
        idx = np.array([self._index[k] for k in labels], np.int64)
        p = np.array([probs[k] for k in labels], np.float64)
        pick = idx[self.rng.choice(len(labels), size=(games.size, players), p=p)]
        self._assign[games] = pick
        for i, row, own in zip(games.tolist(), pick, learner.tolist()):
            k = int(self._deals[i])
            hist = self._history[i]
            hist[k] = [self._members[int(m)][0] for s, m in enumerate(row) if s != own]
            hist.pop(k - 2, None)  # keep the last two episodes of each game
            self._deals[i] = k + 1
            for label in hist[k]:
                self.deals_drawn[label] = self.deals_drawn.get(label, 0) + 1

    def assignment(self, game: int, deal: int) -> list[str] | None:
        """Labels of the members drawn for the opponent seats (in seat order) of the ``deal``-th episode of ``game``."""
        if game >= self._n:
            return None
        return self._history[game].get(deal)

    # ------------------------------------------------------------------ acting
    def act(self, batch: DecisionBatch) -> np.ndarray:
        """Each decision acted on by its seat's member; one ``act`` call per member present."""
        core = batch.core
        self._grow(core.n, core.players)
        envs = np.asarray(batch.envs, np.int64)
        counter = getattr(core, "episodes", None)
        if counter is not None:  # the env counts episodes (Kungsholmskille)
            moves = np.asarray(counter)[envs].astype(np.int64)
            new = moves != self._last_moves[envs]
        else:  # Krypkasino: the move counter drops at a new deal
            moves = core.deals.n_moves[envs].astype(np.int64)
            new = moves < self._last_moves[envs]
        if new.any():
            games = np.unique(envs[new])
            self._draw(games, core.players, core.seat[games].astype(np.int64))
        self._last_moves[envs] = moves
        who = self._assign[envs, np.asarray(batch.seats, np.int64)]
        out = np.empty(len(batch), np.int64)
        for m in np.unique(who):
            sel = np.flatnonzero(who == m)
            sub = DecisionBatch(batch.obs[sel], batch.mask[sel], batch.seats[sel], core, envs[sel])
            out[sel] = self._members[int(m)][1].act(sub)
        return out


def parse_weights(text: str) -> dict[str, float]:
    """League weights from ``expert=4,creeper=1,self=2``; ValueError naming a bad piece."""
    out: dict[str, float] = {}
    for piece in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = piece.partition("=")
        try:
            w = float(value)
        except ValueError:
            w = float("nan")
        if not sep or not key.strip() or not np.isfinite(w) or w < 0:
            raise ValueError(f"league weights: expected name=weight (weight >= 0), got {piece!r}")
        out[key.strip()] = w
    if not out:
        raise ValueError("league weights: give at least one name=weight")
    return out


def build_league(weights: dict[str, float], seed: int, max_snapshots: int = 5, game: str = DEFAULT_GAME,
                 **_: Any) -> League:
    """A league for ``game`` whose fixed members are the agent specs named in ``weights`` (``self`` for snapshots)."""
    from krypenv import agents

    members = {label: agents.load(label, game=game) for label in weights if label != SELF}
    return League(members, weights, seed=seed, max_snapshots=max_snapshots)
