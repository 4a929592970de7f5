"""``python_kungsholmskille``: one pot of Kungsholmskille as an OpenSpiel game, on the project's engine and env kernels.

One OpenSpiel game is one episode of our env: every seat antes (L3) and deals are played into
the same pot until it goes out (a walkover or showdown, L14, L15), is settled after the
preset's bound of deals (L21, ``small``), or ``max_deals`` deals were budrundor (L12; the env's
truncation, L16), so the game is finite even on the standard preset, whose pot is unbounded:
``max_deals`` (default 50, the env's) bounds it.  Parameters: ``players``, ``preset`` (L22),
``ranks`` (L20) and ``pot_deals`` (L21; 0: the preset's), ``max_deals``, ``first_dealer``
(−1: seat P−1, L2).
Every decision is explicit (the env's ``skip_forced=False``).  Nothing here implements a rule:

* **Chance.** Each deal's deck is drawn by explicit chance nodes at the start of that deal:
  each seat's five cards (L4) as a sorted multiset (:mod:`krypenv.openspiel.deal`), then the
  talon card by card in deck order (its order matters: exchanges draw from its front, L8).
  The env kernels settle a deal and start the next (``act_one``, ``rollover_one``); the drawn
  deck then replaces the one they drew, with the same dealer and pot (``kernels.reset_row``).
* **Actions** are the env's ``Discrete(279)`` action ids (L17), legal actions the env's mask.
* **Observations.** ``observation_tensor(p)`` is the env's observation vector of seat ``p``
  as floats (int16 there), ``observation_string(p)`` its non-empty fields.  The information
  state adds perfect recall over the pot's deals: its string is the observation followed by,
  for every deal so far, ``p``'s dealt hand and every move, another seat's discards shown only
  as their count (they are face down, L8), its own with its hand after the draw; the tensor
  is the observation vector alone.
* **Returns** are each seat's net money in the episode (L3, L18): the env's episode return.
  The game is zero-sum when its pot is settled (L21) no later than ``max_deals`` (``small``),
  else general-sum: a pot truncated after ``max_deals`` budrundor keeps its money (L16).
  **Rewards** are the changes of a seat's money, each paid to the seat when it is next asked
  to act after its first action, or at the end (:mod:`krypenv.openspiel.rewards`): the antes
  (L3), paid before the first deal, a budrunda's antes (L12) and the pot going out (L14, L15)
  all reach every seat's learner in OpenSpiel's RL loop; before the end ``returns()`` are the
  rewards paid so far.

``resample_from_infostate`` (so OpenSpiel's IS-MCTS can play) deals every hidden card of the
pot again among the deals consistent with the seat's information, the follow rule's
inferences included (:mod:`krypenv.openspiel.kungsholmskille_resample`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from krypenv.kungsholmskille import env_kernels
from krypenv.kungsholmskille.actions import DISCARD1, DISCARD2, N_ACTIONS, PLAY, action_name
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.cards import HAND_SIZE, RANKS
from krypenv.kungsholmskille.config import BUF, C_POT_DEALS, RUNNING, EnvConfig
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.observation import layout
from krypenv.openspiel.kungsholmskille_resample import resample
from krypenv.openspiel.rewards import SeatPayments
from krypenv.openspiel.shell import ShellGame, ShellMachine, ShellState, game_type

__all__ = ["GAME_NAME", "KungsholmskilleGame", "KungsholmskilleState"]

GAME_NAME = "python_kungsholmskille"
DEFAULTS: dict[str, Any] = {"players": 4, "preset": "standard", "ranks": 0, "pot_deals": 0, "max_deals": 50,
                            "first_dealer": -1}
HAND = HAND_SIZE  # L4


def config_from_params(params: dict[str, Any]) -> EnvConfig:
    """The env configuration of a game's parameters; ValueError naming a bad one."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown python_kungsholmskille parameter(s) {unknown}; known: {sorted(DEFAULTS)}")
    first = int(params["first_dealer"])
    return EnvConfig(players=int(params["players"]), first_dealer=None if first < 0 else first,
                     max_deals=int(params["max_deals"]), preset=str(params["preset"]),
                     ranks=int(params["ranks"]) or None, pot_deals=int(params["pot_deals"]) or None)


class _Machine(ShellMachine):
    """The shared env of a configuration (:class:`~krypenv.openspiel.shell.ShellMachine`)."""

    def __init__(self, config: EnvConfig) -> None:
        super().__init__(config, KungsholmskilleBatch)

    def load(self, rows: tuple[np.ndarray, ...], batch: KungsholmskilleBatch | None = None) -> KungsholmskilleBatch:
        """The env (all of its envs) holding a state's rows: state, cash, episode, previous state and cash."""
        b = self.batch if batch is None else batch
        for dst, src in zip((b.state, b.cash, b.episode, b.prev_state, b.prev_cash), rows):
            dst[:] = src
        return b


def _game_type(utility: Any = pyspiel.GameType.Utility.GENERAL_SUM) -> pyspiel.GameType:
    return game_type(GAME_NAME, "Kungsholmskille (krypenv)", utility, DEFAULTS)


class KungsholmskilleGame(ShellGame):
    """One pot of Kungsholmskille (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**DEFAULTS, **(params or {})}
        self.config = config_from_params(params)
        self.params = params
        P, deals = self.config.players, self.config.max_deals
        rules = self.config.rules
        self.counts = np.asarray(rules.deck_counts, np.int64)  # L1, L20
        self.deck_size = int(rules.deck_size)
        bound = 2 + deals * P + 2 * (2 * P + deals * P)  # antes, and a pot plus an equal penalty (L14)
        # a pot settled (L21) before the env would truncate it (L16) always goes out: its money is conserved
        zero_sum = rules.max_deals is not None and rules.max_deals <= deals
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS, max_chance_outcomes=len(RANKS), num_players=P,
            min_utility=float(-bound), max_utility=float(bound * P), utility_sum=0.0 if zero_sum else None,
            max_game_length=deals * (self.deck_size + 9 * P))
        utility = pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        super().__init__(_game_type(utility), info, params, _Machine)


class KungsholmskilleState(ShellState):
    """A pot in progress: the env's rows, the deck being drawn for the current deal, and the pot's history."""

    def __init__(self, game: KungsholmskilleGame) -> None:
        super().__init__(game)
        self.cards: list[int] = []  # the current deal's drawn cards (hands sorted per seat, then the talon)
        self.deal_log: list[list[tuple[int, int, str]]] = []  # per deal: (seat, action, own hand after a discard)
        self.decks: list[list[int]] = []  # each deal's deck order
        self.pay = SeatPayments(game.config.players)  # returns() and rewards(): each seat paid at its decisions
        b = game.machine.batch
        b.state[:], b.cash[:], b.prev_state[:], b.prev_cash[:] = 0, 0, 0, 0
        b.episode[:] = 0
        b.episode[0, 1] = RUNNING
        env_kernels.reset_one(b.state, b.cash, b.episode, b.rng, b.packed, 0,
                              np.zeros(BUF, np.int64))  # antes (L3), a deal to replace
        self.rows = tuple(a[0].copy() for a in (b.state, b.cash, b.episode, b.prev_state, b.prev_cash))

    def env_rows(self) -> tuple[np.ndarray, ...]:
        """The env's rows of this state: state, cash, episode, previous state and cash."""
        return self.rows

    def to_act(self, batch: KungsholmskilleBatch) -> int:
        """The seat to act in env 0 of ``batch``."""
        return int(batch.state[0, kernels.TO_ACT])

    @property
    def dealing(self) -> bool:
        """The current deal's deck is being drawn."""
        return len(self.cards) < self._game.deck_size

    def drawing(self) -> tuple[int, list[int], np.ndarray]:
        """The group being drawn (a seat's hand or one talon card): its size, its cards so far, the cards left."""
        P = self._game.config.players
        counts = self._game.counts.copy()
        n = len(self.cards)
        if n < HAND * P:
            start, k = n - n % HAND, HAND
        else:
            start, k = n, 1
        for c in self.cards[:start]:
            counts[c] -= 1
        return k, self.cards[start:], counts

    def deck(self) -> np.ndarray:
        """(deck size,) the deck order of the drawn cards: card k of the hands goes to seat forehand + k (L4)."""
        P = self._game.config.players
        deck = np.zeros(self._game.deck_size, np.int64)
        for j in range(HAND * P):  # the j-th drawn hand card is card number j % HAND of seat group j // HAND
            seat_offset, nth = divmod(j, HAND)
            deck[nth * P + seat_offset] = self.cards[j]
        deck[HAND * P:] = self.cards[HAND * P:]
        return deck

    def forehand(self, deal: int) -> int:
        """The seat dealt first in deal ``deal`` of the pot: the dealer's left neighbour, the deal passing left (L2)."""
        return (self._game.config.dealer0 + deal + 1) % self._game.config.players

    def dealt_hands(self, deal: int) -> list[list[int]]:
        """Each seat's five cards (sorted ranks) in deal ``deal``: card k of the deck to seat forehand + k (L4)."""
        P, deck, fh = self._game.config.players, self.decks[deal], self.forehand(deal)
        return [sorted(deck[k] for k in range(HAND * P) if (fh + k) % P == seat) for seat in range(P)]

    def current_player(self) -> int:
        """The seat to act, CHANCE while a deck is drawn, TERMINAL once the pot is over."""
        if int(self.rows[2][1]) != RUNNING:
            return pyspiel.PlayerId.TERMINAL
        if self.dealing:
            return pyspiel.PlayerId.CHANCE
        return int(self.rows[0][kernels.TO_ACT])

    def _legal_actions(self, player: int) -> list[int]:
        """The env's mask of the seat to act."""
        _, mask = self.env().observe(0, player)
        return [int(a) for a in np.flatnonzero(mask)]

    def _apply_action(self, action: int) -> None:
        """A drawn card (dealing when the deck is complete), or the env's action of the seat to act."""
        if self.dealing:
            self.cards.append(int(action))
            if not self.dealing:
                b = self.env()
                deck = self.deck()
                deal, bound = int(b.episode[0, 0]), int(b.packed[C_POT_DEALS])
                kernels.reset_row(b.state[0], b.cash[0], b.players, deck, int(b.state[0, kernels.DEALER]),
                                  int(b.cash[0, kernels.POT]), deal, 1 if bound > 0 and deal == bound - 1 else 0)
                self.decks.append([int(c) for c in deck])
                self.deal_log.append([])
                self.rows = tuple(a[0].copy() for a in (b.state, b.cash, b.episode, b.prev_state, b.prev_cash))
            self._settle(None)
            return
        b = self.env()
        seat = int(b.state[0, kernels.TO_ACT])
        if env_kernels.act_one(b.state, b.cash, b.episode, b.packed, 0, int(action), False) != 0:
            raise ValueError(b.illegal_message(0, int(action), f"seat {seat}"))
        deal = int(b.episode[0, 0])
        env_kernels.rollover_one(b.state, b.cash, b.episode, b.rng, b.packed, 0, b.prev_state, b.prev_cash,
                                 np.zeros(BUF, np.int64))
        hand = ""
        if DISCARD1 <= action < PLAY:  # the cards drawn (L8) are the discarder's to know: its hand after
            counts = b.state[0, kernels.HANDS + 21 * seat:kernels.HANDS + 21 * seat + 21]
            hand = ",".join(RANKS[r] for r in range(21) for _ in range(int(counts[r])))
        self.deal_log[-1].append((seat, int(action), hand))
        if int(b.episode[0, 0]) != deal and int(b.episode[0, 1]) == RUNNING:
            self.cards = []  # a budrunda (L12): the next deal's deck is drawn next
        self.rows = tuple(a[0].copy() for a in (b.state, b.cash, b.episode, b.prev_state, b.prev_cash))
        self._settle(seat)

    def _settle(self, actor: int | None) -> None:
        """After a transition by ``actor`` (None: chance): pay the seat to act or, at the end, every seat."""
        self.pay.settle(self.money(), actor, self.current_player(), self.is_terminal())

    def _action_to_string(self, player: int, action: int) -> str:
        """A drawn card's rank, or the L17 move string."""
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {RANKS[int(action)]}"
        return action_name(int(action))

    def is_terminal(self) -> bool:
        """The pot went out or the deals ran out."""
        return int(self.rows[2][1]) != RUNNING

    def money(self) -> list[float]:
        """Each seat's net money in the pot so far (L3, L18); the antes count from the first deal on."""
        if not self.deal_log:
            return [0.0] * self._game.config.players
        money = self.rows[2][8:8 + self._game.config.players]
        return [float(m) for m in money]

    def __str__(self) -> str:
        """The deals' decks and moves so far."""
        deals = [f"deal {d}: " + " ".join(action_name(a) for _, a, _ in h) for d, h in enumerate(self.deal_log)]
        return " | ".join(deals) + f" | drawing: {len(self.cards)}"


def _move_text(seat: int, action: int, hand: str, observer: int) -> str:
    """A move as ``observer`` saw it: another seat's discards only as a count (L8), its own with the hand after."""
    if seat != observer and DISCARD1 <= action < PLAY:
        return f"s{seat}:discard{1 if action < DISCARD2 else 2}"
    return f"s{seat}:{action_name(action)}" + (f"->{hand}" if hand else "")


class KungsholmskilleObserver:
    """OpenSpiel's PyObserver: the env's observation vector; information state strings add the pot's history."""

    def __init__(self, game: KungsholmskilleGame, perfect_recall: bool) -> None:
        self.game = game
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(game.machine.batch.dim, np.float32)
        self.dict = {"observation": self.tensor}

    def observation(self, state: KungsholmskilleState, player: int) -> np.ndarray:
        """``player``'s env observation; while a deck is drawn, without a hand (the env holds a deal of its own there,
        which the drawn deck replaces)."""
        obs, _ = state.env().observe(0, player)
        if state.dealing:
            obs = obs.copy()
            obs[layout(self.game.config.players)["hand"]] = 0
        return obs

    def set_from(self, state: KungsholmskilleState, player: int) -> None:
        """Fill the tensor with ``player``'s observation (zeros while the first deck is drawn)."""
        self.tensor.fill(0)
        if state.deal_log:
            self.tensor[:] = self.observation(state, player)

    def string_from(self, state: KungsholmskilleState, player: int) -> str:
        """``player``'s observation in words; for information states followed by the pot's deals as it saw them."""
        P = self.game.config.players
        text = f"p{player}"
        if state.deal_log:
            obs = self.observation(state, player)
            text += " " + " ".join(f"{name}=" + ",".join(str(int(v)) for v in obs[s])
                                   for name, s in layout(P).items() if obs[s].any())
        if self.perfect_recall:
            for d, moves in enumerate(state.deal_log):
                own = state.dealt_hands(d)[player]
                text += f" | deal {d} hand " + ",".join(RANKS[c] for c in own) + ": "
                text += " ".join(_move_text(s, a, h, player) for s, a, h in moves)
        return text


KungsholmskilleGame.state_class, KungsholmskilleGame.observer_class = KungsholmskilleState, KungsholmskilleObserver
KungsholmskilleGame.machines = {}
KungsholmskilleState.resampler = staticmethod(resample)
pyspiel.register_game(_game_type(), KungsholmskilleGame)
