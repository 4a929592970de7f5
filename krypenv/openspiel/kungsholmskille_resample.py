"""Hidden cards of a Kungsholmskille pot dealt again, consistent with what one seat knows (``resample_from_infostate``).

A seat of ``python_kungsholmskille`` knows, per deal of the pot: its own five cards (L4), its
own discards and the cards it drew (L8), how many cards every other seat discarded, and every
card played to a trick (L10).  Everything else is hidden: the other hands, their discards and
draws, the talon.  Rejection sampling (deal the hidden cards at random, keep the deal if the
history is legal in it) accepts almost nothing once tricks are played, because the follow rule
constrains hands.  It constrains them simply, though:

* a seat that played ``c`` under the highest rank ``h`` of the trick so far held nothing of rank
  ``h`` or more, and ``c`` was its lowest card (L10), so every card it still holds lies in
  ``[c, h - 1]``; every other play constrains nothing (a leader plays anything, a seat that
  reached ``h`` chose among its cards of rank ``h`` or more);
* after a showdown (L14) every seat still in has shown its last card: its interval is that card;
* a seat's hand after its exchange is its played cards plus those unknown cards; it drew the
  exchanged ones from the talon's front in exchange order (L8), and its discards (face down)
  are any cards.

So a consistent deal puts, for each seat with an interval, the right number of cards of its
interval in its hand, and any cards anywhere else.  :func:`sample_in_intervals` draws the
cards of the constrained hands exactly uniformly (a dynamic program over ranks counting the
ways), the rest are shuffled into the unconstrained places, and each hand after the exchange
is split at random into the cards it kept and those it drew.  Copies of a rank count as
distinct cards, so a deal is drawn with its probability under a uniformly shuffled deck
among the deals consistent with the seat's information, as if the other seats chose their
discards uniformly (their policies are not known here).  Earlier deals of the pot (they were
budrundor, L12) are dealt again the same way, and a deck being drawn when the seat is asked is
drawn afresh.  The result is checked: the seat's information state string must be unchanged.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from functools import cache
from itertools import product
from math import factorial
from typing import Any, Protocol

import numpy as np

from krypenv.kungsholmskille.actions import DISCARD1, FOLD, PLAY, SHOW, STAND, discard_action, discard_ranks
from krypenv.kungsholmskille.cards import HAND_SIZE, RANKS

__all__ = ["count_in_intervals", "resample", "resample_deal", "sample_in_intervals"]

Interval = tuple[int, int, int]  # (how many cards, lowest rank, highest rank) one hand must take


class PotState(Protocol):
    """What :func:`resample` reads of a ``python_kungsholmskille`` state (its game, decks and moves per deal)."""

    decks: list[list[int]]  # each deal's deck order
    deal_log: list[list[tuple[int, int, str]]]  # per deal: (seat, action, own hand after a discard)
    cards: list[int]  # the deck being drawn: hands sorted per seat, then the talon

    @property
    def dealing(self) -> bool: ...

    def forehand(self, deal: int) -> int: ...

    def dealt_hands(self, deal: int) -> list[list[int]]: ...

    def get_game(self) -> Any: ...

    def information_state_string(self, player: int) -> str: ...


def _allocations(n: int, needs: tuple[int, ...], eligible: list[int]) -> list[tuple[tuple[int, ...], int]]:
    """Ways to give ``n`` distinct copies of one rank to the eligible groups: (cards per group, number of ways)."""
    out = []
    for take in product(*(range(min(needs[g], n) + 1) for g in eligible)):
        used = sum(take)
        if used > n:
            continue
        ways = factorial(n) // factorial(n - used)
        for t in take:
            ways //= factorial(t)
        per_group = [0] * len(needs)
        for g, t in zip(eligible, take):
            per_group[g] = t
        out.append((tuple(per_group), ways))
    return out


def _counter(pool: tuple[int, ...], groups: tuple[Interval, ...]) -> Any:
    """The memoised count of ways to fill the groups' remaining needs from ranks ``r`` upward."""

    @cache
    def ways_from(r: int, needs: tuple[int, ...]) -> int:
        if not any(needs):
            return 1
        if r == len(pool) or any(need and groups[g][2] < r for g, need in enumerate(needs)):
            return 0  # ranks ran out, or a group's interval lies below r with cards still to take
        eligible = [g for g, need in enumerate(needs) if need and groups[g][1] <= r]
        total = 0
        for take, ways in _allocations(pool[r], needs, eligible):
            total += ways * ways_from(r + 1, tuple(a - b for a, b in zip(needs, take)))
        return total

    return ways_from


def count_in_intervals(pool: list[int], groups: list[Interval]) -> int:
    """How many ways to choose, from the distinct cards ``pool`` (copies per rank), disjoint card sets for the groups.

    Group ``(m, lo, hi)`` takes ``m`` cards of ranks ``lo`` … ``hi``; cards left over are not counted.
    """
    return _counter(tuple(pool), tuple(groups))(0, tuple(m for m, _, _ in groups))


def sample_in_intervals(pool: list[int], groups: list[Interval], rng: random.Random) -> list[list[int]]:
    """The ranks each group takes, uniform among the :func:`count_in_intervals` ways; ValueError if there is none."""
    ways_from = _counter(tuple(pool), tuple(groups))
    needs = tuple(m for m, _, _ in groups)
    if ways_from(0, needs) == 0:
        raise ValueError(f"no cards of {pool} fill the hands {groups}")
    out: list[list[int]] = [[] for _ in groups]
    for r in range(len(pool)):
        if not any(needs):
            break
        eligible = [g for g, need in enumerate(needs) if need and groups[g][1] <= r]
        options = []
        for take, ways in _allocations(pool[r], needs, eligible):
            rest = tuple(a - b for a, b in zip(needs, take))
            options.append((take, rest, ways * ways_from(r + 1, rest)))
        pick = rng.randrange(sum(w for _, _, w in options))
        for take, rest, weight in options:
            if pick < weight:
                break
            pick -= weight
        for g, t in enumerate(take):
            out[g] += [r] * t
        needs = rest
    return out


def _is_exchange(action: int) -> bool:
    """``stand`` or a discard (L8)."""
    return action == STAND or DISCARD1 <= action < PLAY


def resample_deal(hands: list[list[int]], talon_order: list[int], moves: list[tuple[int, int, str]],
                  counts: np.ndarray, forehand: int, player: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """A deal ``player`` cannot tell from ``hands`` + ``talon_order`` + ``moves``: its cards in draw order, its actions.

    ``hands`` are the seats' dealt cards, ``talon_order`` the rest of the deck in order, ``moves``
    the deal's ``(seat, action, hand after a discard)``; ``forehand`` is dealt first (L4).  The
    draw order is the OpenSpiel game's: each seat's five cards sorted, seats from ``forehand``
    on, then the talon in deck order.
    """
    P = len(hands)
    seats = [(forehand + k) % P for k in range(P)]
    own = list(hands[player])
    folded = {s for s, a, _ in moves if a == FOLD}
    talon = [-1] * len(talon_order)
    exchange: dict[int, tuple[list[int], int, str]] = {}  # seat -> (its talon places, action, hand after)
    plays: dict[int, list[int]] = {s: [] for s in range(P)}
    bounds = {s: (0, len(counts) - 1) for s in range(P)}
    trick: list[int] = []
    for seat, action, hand in moves:
        if _is_exchange(action):
            start = sum(len(t) for t, _, _ in exchange.values())  # exchanges draw from the talon's front in turn
            exchange[seat] = (list(range(start, start + len(discard_ranks(action)))), action, hand)
        elif action >= PLAY:
            card = action - PLAY
            if trick and card < max(trick):  # L10: nothing of the trick's highest rank or more; `card` its lowest
                lo, hi = bounds[seat]
                bounds[seat] = (max(lo, card), min(hi, max(trick) - 1))
            plays[seat].append(card)
            trick = [] if len(trick) + 1 == P - len(folded) else [*trick, card]
    if any(a == SHOW for _, a, _ in moves):  # a showdown (L14): every seat still in showed its last card
        for s, (places, action, _) in exchange.items():
            last = Counter(hands[s]) - Counter(discard_ranks(action)) + Counter(talon_order[t] for t in places)
            (card,) = (last - Counter(plays[s])).elements()
            bounds[s] = (card, card)
    known = Counter(own) + Counter(c for s in range(P) if s != player for c in plays[s])
    drawn: list[int] = []
    if player in exchange:
        places, action, hand = exchange[player]
        after = Counter(RANKS.index(n) for n in hand.split(",") if n)
        drawn = list((after - (Counter(own) - Counter(discard_ranks(action)))).elements())
        rng.shuffle(drawn)  # the seat knows what it drew, not in which order the talon held it
        for place, card in zip(places, drawn):
            talon[place] = card
        known += Counter(drawn)
    pool = [int(n) - known[r] for r, n in enumerate(counts)]
    others = [s for s in seats if s != player]
    constrained = [s for s in others if s in exchange and bounds[s] != (0, len(counts) - 1)
                   and len(plays[s]) < HAND_SIZE]
    groups = [(HAND_SIZE - len(plays[s]), *bounds[s]) for s in constrained]
    chosen = dict(zip(constrained, sample_in_intervals(pool, groups, rng)))
    rest = list((Counter({r: n for r, n in enumerate(pool)}) - Counter(c for g in chosen.values() for c in g))
                .elements())
    rng.shuffle(rest)
    dealt = {player: own}
    actions = {}
    for s in others:
        if s not in exchange:  # folded before the exchange, or not yet asked: any five cards
            dealt[s] = [rest.pop() for _ in range(HAND_SIZE)]
            continue
        places, action, _ = exchange[s]
        after = plays[s] + (chosen[s] if s in chosen else [rest.pop() for _ in range(HAND_SIZE - len(plays[s]))])
        rng.shuffle(after)  # which of its cards it drew: any of them
        kept, got = after[:HAND_SIZE - len(places)], after[HAND_SIZE - len(places):]
        thrown = [rest.pop() for _ in places]
        for place, card in zip(places, got):
            talon[place] = card
        dealt[s] = kept + thrown
        actions[s] = discard_action(*thrown) if thrown else STAND
    for place, card in enumerate(talon):
        if card < 0:
            talon[place] = rest.pop()
    if rest:
        raise RuntimeError(f"resampling a deal left cards {rest} unplaced")
    cards = [c for s in seats for c in sorted(dealt[s])] + talon
    replay = [actions[s] if s in actions and s != player and _is_exchange(a) else a for s, a, _ in moves]
    return cards, replay


def resample(state: PotState, player: int, sampler: Any = None) -> Any:
    """A state with ``player``'s information state, the hidden cards of every deal of the pot dealt again.

    ``sampler`` is OpenSpiel's probability sampler (a callable giving uniforms in [0, 1)), or
    None for an unseeded draw.  RuntimeError if the result's information state differs (a bug).
    """
    game = state.get_game()
    P = game.config.players
    rng = random.Random(int(1e9 * sampler()) if callable(sampler) else None)
    if not state.decks and not state.cards:
        return copy.deepcopy(state)  # nothing dealt yet
    out = game.new_initial_state()
    for d, (deck, moves) in enumerate(zip(state.decks, state.deal_log)):
        cards, actions = resample_deal(state.dealt_hands(d), deck[HAND_SIZE * P:], moves, game.counts,
                                       state.forehand(d), player, rng)
        for a in cards + actions:
            out.apply_action(int(a))
    if state.dealing and state.cards:  # a deck is being drawn: the seat has seen none of it, draw it afresh
        deck = list(Counter({r: int(n) for r, n in enumerate(game.counts)}).elements())
        rng.shuffle(deck)
        hands = [sorted(deck[k * HAND_SIZE:(k + 1) * HAND_SIZE]) for k in range(P)]
        fresh = [c for h in hands for c in h] + deck[HAND_SIZE * P:]
        for a in fresh[:len(state.cards)]:
            out.apply_action(int(a))
    if out.information_state_string(player) != state.information_state_string(player):
        raise RuntimeError(f"resampled state of seat {player} lost its information state: {out} vs {state}")
    return out
