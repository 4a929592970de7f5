"""``python_krypkasino``: Krypkasino as an OpenSpiel game, played by the project's own engine and env.

One OpenSpiel game is one deal (K6–K16) of a rule set: the parameters are ``players``,
``preset`` (K22) and the rule keys of :class:`krypenv.krypkasino.config.EnvConfig` as
OpenSpiel's scalar parameters: ``ranks``/``suits`` as names joined by ``-`` (``"A-2-3-4"``,
``"H-S"``; ``""``: the preset's), ``copies``/``hand``/``table`` (0: the preset's) (K20, K21),
``teams`` as the number of teams (0: none; 2 with 4 players is {0,2} {1,3}, K18),
``two_player_deal`` as ``"6x4"`` or ``"5x6"``, since OpenSpiel's game strings read ``6+4`` as a number), plus
``reward`` (``"points"`` or ``"relative"``, as the env's).  Nothing here implements a rule:

* **Chance.** The deck is dealt at the start by explicit chance nodes, each packet of a
  receiver (a seat's hand, or the table) in a round as a sorted multiset, one card per node
  with its exact probability (:mod:`krypenv.openspiel.deal`).  The drawn cards fill the deck
  order that the engine deals from (K6, K7), and the engine's ``DealBatch.reset`` deals it.
* **Actions** are the env's ``Discrete(105)`` action ids (:mod:`krypenv.krypkasino.actions`):
  a card, then, when it has several captures, table-card choices by the same seat.  Legal
  actions are the env's mask; applying one is the env's ``act``.
* **Observations.** ``observation_tensor(p)`` is the env's observation vector of seat ``p``
  as floats, ``observation_string(p)`` its fields in words.  The information state adds
  perfect recall: its string is the observation string followed by every move so far, each
  card played and the table cards it took (all public: cards are played face up, captures are
  seen), :func:`information_state_text`, which any of our envs gives too; its tensor
  is the observation vector followed by, for each card played so far, the card (one-hot 52)
  and the table cards it captured (52 counts).
* **Returns** are the env's episode returns: minus the seat's side value (its deal score,
  K16, or its team's; with ``reward="relative"`` minus that score less the others' mean).
  **Rewards** are the env's dense rewards, each paid to its seat when the seat is next asked
  to act after its first action, or at the end (:mod:`krypenv.openspiel.rewards`), so
  OpenSpiel's RL loop gives every learner its whole return; before the end ``returns()`` are
  the rewards paid so far.

``resample_from_infostate`` deals the hidden cards again (the other hands and the undealt
deck) uniformly among the deals in which the player's information is the same and the public
actions are legal (:mod:`krypenv.openspiel.krypkasino_resample`).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import pyspiel

from krypenv.krypkasino.actions import N_ACTIONS, action_name
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.cards import card_name
from krypenv.krypkasino.config import EnvConfig
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.observation import split
from krypenv.krypkasino.rules import Rules, parse_teams
from krypenv.openspiel.krypkasino_resample import resample, seen_groups
from krypenv.openspiel.rewards import SeatPayments
from krypenv.openspiel.shell import ShellGame, ShellMachine, ShellState, game_type

__all__ = ["GAME_NAME", "KrypkasinoGame", "KrypkasinoState", "resample"]

GAME_NAME = "python_krypkasino"
MOVE_SLOT = 104  # information-state tensor: per card played, its card (52 one-hot) and its capture (52 counts)
DEFAULTS: dict[str, Any] = {"players": 2, "preset": "standard", "teams": 0, "two_player_deal": "6x4",
                            "set_aside": "court", "last_capture_point": False, "reward": "points",
                            "ranks": "", "suits": "", "copies": 0, "hand": 0, "table": 0}
VARIANT_TEXT = ("ranks", "suits")  # rank or suit names joined by "-" ("A-2-3-4"); "" = the preset's
VARIANT_INT = ("copies", "hand", "table")  # 0 = the preset's


def config_from_params(params: dict[str, Any]) -> EnvConfig:
    """The env configuration of a game's parameters (one deal); ValueError naming a bad key."""
    keys = {f.name for f in fields(EnvConfig)} - {"deals", "illegal", "render_mode"}
    kwargs = dict(params)
    unknown = sorted(set(kwargs) - keys)
    if unknown:
        raise ValueError(f"unknown python_krypkasino parameter(s) {unknown}; known: {sorted(keys)}")
    if "two_player_deal" in kwargs:  # OpenSpiel's game strings read "6+4" as a number: written "6x4" there
        kwargs["two_player_deal"] = str(kwargs["two_player_deal"]).replace("x", "+")
    for key in VARIANT_TEXT:
        text = kwargs.pop(key, "")
        if not isinstance(text, str):
            raise ValueError(f"{key} must be names joined by '-' (e.g. A-2-3-4), got {text!r}")
        if text:
            kwargs[key] = tuple(text.split("-"))
    for key in VARIANT_INT:
        value = kwargs.pop(key, 0)
        if value:
            kwargs[key] = value
    teams = kwargs.pop("teams", 0)
    if isinstance(teams, bool) or not isinstance(teams, int) or teams < 0:
        raise ValueError(f"teams must be 0 (none) or the number of teams (K18), got {teams!r}")
    kwargs["teams"] = parse_teams(str(teams) if teams else None, int(kwargs.get("players", 2)))
    return EnvConfig(**kwargs, deals=1)


def deal_groups(rules: Rules) -> list[tuple[str, int, list[int]]]:
    """The deck slots of each receiver per round, in dealing order: (receiver, round, slots); receiver "T" or a seat."""
    P, dealer = rules.players, rules.players - 1
    later = rules.later_pattern
    groups: dict[tuple[str, int], list[int]] = {}
    slot = 0
    for rnd in range(rules.rounds):
        for kind, k in rules.initial_pattern if rnd == 0 else later:
            receivers = ["T"] if kind == "T" else [str((dealer + off) % P) for off in range(1, P + 1)]
            for who in receivers:
                groups.setdefault((who, rnd), []).extend(range(slot, slot + k))
                slot += k
    return [(who, rnd, slots) for (who, rnd), slots in sorted(groups.items(), key=lambda kv: kv[1][0])]


class _Machine(ShellMachine):
    """The shared env of a configuration (:class:`~krypenv.openspiel.shell.ShellMachine`) and its deal engine."""

    def __init__(self, config: EnvConfig) -> None:
        super().__init__(config, KrypkasinoBatch)
        self.deals = DealBatch(config.rules, 1)

    def load(self, rows: tuple[np.ndarray, np.ndarray], batch: KrypkasinoBatch | None = None) -> KrypkasinoBatch:
        """The env (every env of ``batch``) holding a state's row and integers."""
        b = self.batch if batch is None else batch
        b.state[:], b.ints[:] = rows
        return b


class KrypkasinoGame(ShellGame):
    """One deal of Krypkasino (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**DEFAULTS, **(params or {})}
        self.config = config_from_params(params)
        rules = self.config.rules
        self.rules = rules
        self.groups = deal_groups(rules)
        self.counts = np.asarray(rules.deck_counts, np.int64)
        self.dealt = sum(len(s) for _, _, s in self.groups)
        total = int(rules.total_points) + int(rules.last_capture_point)
        per_seat = -(-rules.decisions_per_deal // rules.players)
        worst = total + 10 * per_seat * max(1, rules.players)
        relative = self.config.reward == "relative"
        utility = pyspiel.GameType.Utility.ZERO_SUM if relative else pyspiel.GameType.Utility.CONSTANT_SUM
        seats_per_side = rules.players // rules.n_teams  # teams are of equal size (K18): each seat gets its side's
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS, max_chance_outcomes=52, num_players=rules.players,
            min_utility=float(-2 * worst), max_utility=float(2 * worst),
            utility_sum=0.0 if relative else float(-total * seats_per_side),
            max_game_length=self.dealt + rules.decisions_per_deal * (1 + self.dealt))
        super().__init__(_game_type(utility), info, params, _Machine)


def _game_type(utility: Any) -> pyspiel.GameType:
    return game_type(GAME_NAME, "Krypkasino (krypenv)", utility, DEFAULTS)


class KrypkasinoState(ShellState):
    """A deal in progress: the cards drawn so far, then the env's row and the players' actions."""

    def __init__(self, game: KrypkasinoGame) -> None:
        super().__init__(game)
        self.cards: list[int] = []  # chance outcomes: the cards of each group, ascending within a group
        self.actions: list[int] = []  # the players' actions, in order
        self.row: np.ndarray | None = None  # the env's state row once dealt
        self.ints: np.ndarray | None = None
        self.pay = SeatPayments(game.rules.players)  # returns() and rewards(): each seat paid at its decisions
        self.cached: dict[Any, Any] = {}  # what the env said of this state: player, legal, earned, strings

    # ------------------------------------------------------------------ engine access
    def env_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The env's row and integers of this state (once dealt)."""
        assert self.row is not None and self.ints is not None
        return self.row, self.ints

    def to_act(self, batch: KrypkasinoBatch) -> int:
        """The seat to act in env 0 of ``batch``."""
        return int(batch.deals.turn[0])

    def deck(self) -> np.ndarray:
        """(deck size,) the deck order the drawn cards make: each group's cards in its slots."""
        deck = np.zeros(self._game.dealt, np.int8)
        k = 0
        for _, _, slots in self._game.groups:
            for s in slots:
                deck[s] = self.cards[k]
                k += 1
        return deck

    def _deal(self) -> None:
        """Hand the drawn deck to the engine and the env (K6, K8)."""
        machine = self._game.machine
        machine.deals.reset(decks=self.deck()[None, :])
        machine.batch.load(machine.deals, 0)
        self.row, self.ints = machine.batch.state[0].copy(), machine.batch.ints[0].copy()

    def drawing(self) -> tuple[int, list[int], np.ndarray]:
        """The group being drawn: its size, its cards so far, and the cards left before it."""
        counts = self._game.counts.copy()
        k = 0
        for _, _, slots in self._game.groups:
            if k + len(slots) > len(self.cards):
                for c in self.cards[:k]:
                    counts[c] -= 1
                return len(slots), self.cards[k:], counts
            k += len(slots)
        raise AssertionError("every group is drawn")

    # ------------------------------------------------------------------ OpenSpiel API
    def _read(self) -> None:
        """Ask the env once what a new state is: who acts, the legal actions, the returns (OpenSpiel asks often)."""
        env = self.env()
        over = bool(env.over[0])
        player = pyspiel.PlayerId.TERMINAL if over else int(env.deals.turn[0])
        legal: list[int] = []
        if not over:
            _, mask = env.observe(0, player)
            legal = [int(a) for a in np.flatnonzero(mask)]
        values = env.values(0)
        earned = [0.0 - float(values[self._game.rules.team_of(s)]) for s in range(self._game.rules.players)]  # no -0.0
        self.cached = {"player": player, "legal": legal, "earned": earned}

    def infostate_text(self, player: int) -> str:
        """:func:`information_state_text` of ``player`` here (cached)."""
        key = ("infostate", player)
        if key not in self.cached:
            self.cached[key] = information_state_text(self.env(), 0, player)
        return self.cached[key]

    def current_player(self) -> int:
        """The seat to act, CHANCE while dealing, TERMINAL after the deal."""
        if self.row is None:
            return pyspiel.PlayerId.CHANCE
        return self.cached["player"]

    def _legal_actions(self, player: int) -> list[int]:
        """The env's mask of the seat to act."""
        return list(self.cached["legal"]) if player == self.cached["player"] else []

    def _apply_action(self, action: int) -> None:
        """A drawn card (dealing when the deck is complete), or the env's action of the seat to act."""
        actor = None
        if self.row is None:
            self.cards.append(int(action))
            if len(self.cards) == self._game.dealt:
                self._deal()
                self._read()
        else:
            actor = self.cached["player"]
            env = self.env()
            status = env.act(0, int(action))
            if status < 0:
                raise ValueError(env.illegal_message(0, int(action), f"seat {int(env.deals.turn[0])}"))
            self.actions.append(int(action))
            self.row, self.ints = env.state[0].copy(), env.ints[0].copy()
            self._read()
        earned = [0.0] * self._game.rules.players if self.row is None else self.cached["earned"]
        self.pay.settle(earned, actor, self.current_player(), self.is_terminal())

    def _action_to_string(self, player: int, action: int) -> str:
        """A card drawn, or the env's action name."""
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {card_name(int(action))}"
        pending = -1 if self.row is None else int(self.env().choice[0, 0])
        return action_name(int(action), pending)

    def is_terminal(self) -> bool:
        """The deal is over."""
        return self.row is not None and self.cached["player"] == pyspiel.PlayerId.TERMINAL

    def __str__(self) -> str:
        """The drawn cards, then the actions."""
        cards = " ".join(card_name(c) for c in self.cards)
        return f"cards: {cards} | actions: {' '.join(map(str, self.actions))}"


class KrypkasinoObserver:
    """OpenSpiel's PyObserver: the env's observation vector, and for information states the card history after it."""

    def __init__(self, game: KrypkasinoGame, perfect_recall: bool) -> None:
        self.game = game
        self.perfect_recall = perfect_recall
        dim = game.machine.batch.dim
        slots = MOVE_SLOT * game.rules.decisions_per_deal if perfect_recall else 0
        self.tensor = np.zeros(dim + slots, np.float32)
        self.dict = {"observation": self.tensor[:dim]}
        if perfect_recall:
            self.dict["moves"] = self.tensor[dim:].reshape(game.rules.decisions_per_deal, MOVE_SLOT)

    def set_from(self, state: KrypkasinoState, player: int) -> None:
        """Fill the tensor with ``player``'s view of ``state``."""
        self.tensor.fill(0)
        if state.row is None:
            return
        env = state.env()
        obs, _ = env.observe(0, player)
        self.dict["observation"][:] = obs
        if self.perfect_recall:
            moves = self.dict["moves"]
            for m in range(int(env.deals.n_moves[0])):
                moves[m, int(env.deals.hist_card[0, m])] = 1
                moves[m, 52:] = env.deals.move_capture(0, m)

    def string_from(self, state: KrypkasinoState, player: int) -> str:
        """``player``'s observation in words; for information states followed by every move so far."""
        if state.row is None:
            drawn = [c for c, mine in zip(state.cards, _drawn_mine(state, player)) if mine]
            return f"p{player} dealing: {' '.join(card_name(c) for c in drawn)}"
        if self.perfect_recall:
            return state.infostate_text(player)
        obs, _ = state.env().observe(0, player)
        return f"p{player} " + observation_text(obs, self.game.rules.players)


def information_state_text(env: KrypkasinoBatch, i: int, seat: int) -> str:
    """Seat ``seat``'s information state in env ``i`` as OpenSpiel's string: its observation, then every move.

    The moves (each card played and the table cards it took, all public) with the observation
    (own hand, the capture being chosen) give perfect recall of the deal: a seat's past hands
    are the cards it played in their rounds.  The same text comes from an OpenSpiel state and
    from any of our envs, so a tabular policy plays in both (:mod:`krypenv.openspiel.policy`).
    """
    obs, _ = env.observe(i, seat)
    deals = env.deals
    moves = []
    for m in range(int(deals.n_moves[i])):
        taken = deals.move_capture(i, m)
        caps = ",".join(card_name(c) + ("x2" if taken[c] == 2 else "") for c in np.flatnonzero(taken))
        moves.append(card_name(int(deals.hist_card[i, m])) + (f">{caps}" if caps else ""))
    return f"p{seat} " + observation_text(obs, env.players) + " | moves: " + " ".join(moves)


def _drawn_mine(state: KrypkasinoState, player: int) -> list[bool]:
    """Per drawn card: whether ``player`` sees it (its own hand of the first round, or the table)."""
    seen = seen_groups(state._game.groups, player, 0)
    return [ok for g, (_, _, slots) in enumerate(state._game.groups) for ok in [seen[g]] * len(slots)]


def observation_text(obs: np.ndarray, players: int) -> str:
    """The non-empty fields of an observation vector in words (cards by name, seats relative to the observer)."""
    parts = []
    for name, value in split(np.asarray(obs), players).items():
        if not value.any():
            continue
        if value.shape[0] == 52:
            parts.append(f"{name}=" + ",".join(card_name(c) * 1 + ("x2" if value[c] == 2 else "")
                                               for c in np.flatnonzero(value)))
        else:
            parts.append(f"{name}=" + ",".join(str(int(v)) for v in value))
    return " ".join(parts)


KrypkasinoGame.state_class, KrypkasinoGame.observer_class = KrypkasinoState, KrypkasinoObserver
KrypkasinoGame.machines = {}
KrypkasinoState.resampler = staticmethod(resample)
pyspiel.register_game(_game_type(pyspiel.GameType.Utility.CONSTANT_SUM), KrypkasinoGame)
