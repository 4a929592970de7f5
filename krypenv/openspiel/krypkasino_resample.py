"""Hidden cards of a Krypkasino deal dealt again, consistent with what one seat knows (``resample_from_infostate``).

``python_krypkasino`` deals the deck as *groups*: each receiver's packet of a round (a seat's
hand, or the table), :func:`krypenv.openspiel.krypkasino.deal_groups`.  By round ``r`` a seat
has seen the table and its own hands of rounds ``0 … r``; every card played since is public
(K9–K14: cards are played face up), and each was played from the hand its player was dealt in
that round.  Everything else is hidden: the cards still in other seats' hands and every hand of
a later round (the seat's own included).

Dealing the hidden cards uniformly and rejecting the deals in which the history is illegal
accepts almost nothing after a few moves (every card another seat played must land in its
hand).  So :func:`resample` puts each played card in the hand it came from, shuffles the other
hidden cards uniformly into the places left, and keeps the deal when every action of the
history is legal in it (the forced sweeps of K13 and the maximal captures of K11 constrain the
cards not yet played) and the seat's information state is unchanged.  With two copies of a
card (K1) a hand that holds a played copy may hold the other one too; fixing the played copy
makes such hands more likely than a uniform deal would by the factor C(m, p) (``m`` copies of
the card in the hand, ``p`` of them played), so a deal is also kept only with probability
∏ 1 / C(m, p).  The kept deals are then uniform among the deals consistent with the seat's
information (each with its probability under a uniformly shuffled deck).
"""

from __future__ import annotations

import copy
from math import comb
from typing import Any, Protocol

import numpy as np

__all__ = ["RESAMPLE_TRIES", "played_by_group", "resample", "seen_groups"]

RESAMPLE_TRIES = 10_000


class DealState(Protocol):
    """What :func:`resample` reads of a ``python_krypkasino`` state."""

    cards: list[int]  # the chance outcomes: each group's cards, ascending within a group
    actions: list[int]  # the players' actions
    row: Any  # the env's state row once dealt (None while dealing)

    def env(self) -> Any: ...

    def get_game(self) -> Any: ...

    def information_state_string(self, player: int) -> str: ...


def seen_groups(groups: list[tuple[str, int, list[int]]], player: int, rnd: int) -> list[bool]:
    """Per group: whether ``player`` has seen it by round ``rnd`` (the table and its own hands so far)."""
    return [rnd_g <= rnd and who in ("T", str(player)) for who, rnd_g, _ in groups]


def played_by_group(groups: list[tuple[str, int, list[int]]], players: int, played: list[int]) -> list[list[int]]:
    """Per group: the cards played from it, given every card played so far in order.

    Every round the dealer's left neighbour (seat 0: the OpenSpiel game's dealer is seat P−1)
    leads and play goes clockwise, one card a turn, until the round's hands are empty (K9).
    """
    index = {(who, rnd): g for g, (who, rnd, _) in enumerate(groups)}
    out: list[list[int]] = [[] for _ in groups]
    moves = iter(played)
    rounds = 1 + max(rnd for _, rnd, _ in groups)
    for rnd in range(rounds):
        hand = len(groups[index[("0", rnd)]][2])
        for turn in range(players * hand):
            card = next(moves, None)
            if card is None:
                return out
            out[index[(str(turn % players), rnd)]].append(int(card))
    return out


def _copies_weight(group: list[int], played: list[int]) -> float:
    """∏ over the group's cards of 1 / C(copies in the group, copies played from it)."""
    weight = 1.0
    for card in set(played):
        weight /= comb(group.count(card), played.count(card))
    return weight


def resample(state: DealState, player: int, sampler: Any = None) -> DealState:
    """A state with ``player``'s information state: the hidden cards dealt again, the public actions replayed.

    ``sampler`` is an OpenSpiel probability sampler (a callable giving uniforms in [0, 1)), or
    None for numpy's unseeded generator.  While the deck is still being drawn (a chance node)
    the state is returned as it is (a copy).  RuntimeError if no consistent deal is found in
    :data:`RESAMPLE_TRIES` tries.
    """
    game = state.get_game()
    if state.row is None:
        return copy.deepcopy(state)  # the deal is not complete
    deals = state.env().deals
    seen = seen_groups(game.groups, player, int(deals.round[0]))
    played = played_by_group(game.groups, game.rules.players, [int(c) for c in deals.hist_card[0, :deals.n_moves[0]]])
    target = state.information_state_string(player)
    rng = np.random.default_rng(int(1e9 * sampler()) if callable(sampler) else None)
    starts = np.cumsum([0] + [len(s) for _, _, s in game.groups])
    hidden: list[int] = []
    for g, ok in enumerate(seen):
        if not ok:
            rest = list(state.cards[starts[g]:starts[g + 1]])
            for c in played[g]:
                rest.remove(c)
            hidden += rest
    for _ in range(RESAMPLE_TRIES):
        pool = [int(c) for c in rng.permutation(hidden)]
        cards: list[int] = []
        weight = 1.0
        for g, ok in enumerate(seen):
            own = state.cards[starts[g]:starts[g + 1]]
            if ok:
                cards += own
                continue
            group = played[g] + [pool.pop() for _ in range(len(own) - len(played[g]))]
            weight *= _copies_weight(group, played[g])
            cards += sorted(group)
        if weight < 1.0 and rng.random() >= weight:
            continue
        out = game.new_initial_state()
        for c in cards:
            out.apply_action(c)
        try:
            for a in state.actions:
                out.apply_action(a)
        except (ValueError, RuntimeError):
            continue
        if out.information_state_string(player) == target:
            return out
    raise RuntimeError(f"no consistent deal found in {RESAMPLE_TRIES} tries")
