"""What python_krypkasino's deal groups and information states hold, against the engine (issue 34).

The module docstring promises: the deck is drawn as each receiver's packet of a round in dealing
order (K6, K7), so group ``(seat, round)`` is exactly the hand the engine deals that seat in that
round; the information state string is the observation followed by every move, each card played
and the table cards it took; the information state tensor is the observation followed by, per
card played, its card (one-hot 52) and its capture (52 counts).  Checked on every configuration
of the grid, in every round.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv.krypkasino.cards import card_name
from tests.openspiel.helpers import KRYPKASINO, KRYPKASINO_GRID, game_string

IDS = [game_string(KRYPKASINO, p) for p in KRYPKASINO_GRID]


def dealing_order(params: dict, rules: object) -> list[tuple[str, int, int]]:
    """(receiver, round, cards) packet by packet in dealing order: K6's initial pattern of the rules, then K7's later
    rounds, players from the dealer's left (the OpenSpiel game's dealer is seat P − 1), the table as "T"."""
    P = params["players"]
    out = []
    for rnd in range(rules.rounds):
        for kind, k in rules.initial_pattern if rnd == 0 else rules.later_pattern:
            out += [("T", rnd, k)] if kind == "T" else [(str(s), rnd, k) for s in range(P)]
    return out


@pytest.mark.parametrize("params", KRYPKASINO_GRID, ids=IDS)
def test_groups_are_the_hands_the_engine_deals(params: dict) -> None:
    """Each group holds the slots its receiver is dealt (K6, K7), and at the start of every round each seat holds
    exactly the cards drawn for it (and the table the table's)."""
    game = pyspiel.load_game(KRYPKASINO, params)
    rules = game.rules
    slots: dict[tuple[str, int], list[int]] = {}
    at = 0
    for who, rnd, k in dealing_order(params, rules):
        slots.setdefault((who, rnd), []).extend(range(at, at + k))
        at += k
    assert {(who, rnd): s for who, rnd, s in game.groups} == slots
    assert [g[2][0] for g in game.groups] == sorted(g[2][0] for g in game.groups)  # drawn in dealing order
    rng = np.random.default_rng(1)
    state = game.new_initial_state()
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    starts = np.cumsum([0] + [len(s) for _, _, s in game.groups])
    drawn = {(who, rnd): state.cards[starts[g]:starts[g + 1]] for g, (who, rnd, _) in enumerate(game.groups)}
    seen_round = -1
    while not state.is_terminal():
        deals = state.env().deals
        rnd = int(deals.round[0])
        if rnd != seen_round and int(deals.n_moves[0]) == sum(len(drawn[(str(s), r)]) for s in range(rules.players)
                                                               for r in range(rnd)):
            for seat in range(rules.players):
                held = Counter({c: int(n) for c, n in enumerate(deals.hands[0, seat]) if n})
                assert held == Counter(drawn[(str(seat), rnd)]), (seat, rnd)
            if rnd == 0:
                table = Counter({c: int(n) for c, n in enumerate(deals.table[0]) if n})
                aside = Counter({c: int(n) for c, n in enumerate(deals.aside[0]) if n})
                assert table + aside == Counter(drawn[("T", 0)])  # court cards may be set aside at once (K8)
            seen_round = rnd
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert seen_round == rules.rounds - 1


@pytest.mark.parametrize("params", KRYPKASINO_GRID[:6], ids=IDS[:6])
def test_information_states_hold_every_move(params: dict) -> None:
    """At every decision, for every seat: the string ends in every move (the card, then '>' and the captured cards,
    'x2' for both copies), and the tensor is the observation then, per move, the card one-hot and the capture counts,
    zeros after the last move."""
    game = pyspiel.load_game(KRYPKASINO, params)
    obs_size = len(game.new_initial_state().observation_tensor(0))
    rng = np.random.default_rng(2)
    captures = 0
    for _ in range(2):
        state = game.new_initial_state()
        while state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        stride = 1 if game.max_game_length() < 500 else 5  # the standard deck: every fifth decision
        while not state.is_terminal():
            if len(state.actions) % stride:
                state.apply_action(int(rng.choice(state.legal_actions())))
                continue
            deals = state.env().deals
            n = int(deals.n_moves[0])
            played = [int(deals.hist_card[0, m]) for m in range(n)]
            taken = [deals.move_capture(0, m).copy() for m in range(n)]
            words = []
            for card, caps in zip(played, taken):
                names = ",".join(card_name(c) + ("x2" if caps[c] == 2 else "") for c in np.flatnonzero(caps))
                words.append(card_name(card) + (f">{names}" if names else ""))
            captures += sum(bool(c.any()) for c in taken)
            for p in range(game.num_players()):
                text = state.information_state_string(p)
                assert text.endswith(" | moves: " + " ".join(words)), (text, words)
                assert text.startswith(f"p{p} ")
                tensor = np.asarray(state.information_state_tensor(p))
                np.testing.assert_array_equal(tensor[:obs_size], state.observation_tensor(p))
                moves = tensor[obs_size:].reshape(-1, 104)
                for m in range(moves.shape[0]):
                    want = np.zeros(104)
                    if m < n:
                        want[played[m]] = 1
                        want[52:] = taken[m]
                    np.testing.assert_array_equal(moves[m], want)
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert captures > 0
