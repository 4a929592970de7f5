"""The Discrete(105) action machine: reachability, masks, no one-answer questions, forced sweeps."""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.krypkasino.actions import CHOOSING, CONFIRM, ILLEGAL, MOVED, N_ACTIONS, TAKE, action_name, actions_for_move
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.cards import card_code, counts_from_names
from krypenv.krypkasino.config import EnvConfig
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.rules import Rules


def act(core: KrypkasinoBatch, a: int) -> int:
    """Apply one action in env 0 of a core."""
    return core.act(0, int(a))


def explore(core: KrypkasinoBatch) -> set[tuple[int, bytes]]:
    """Every move reachable by action sequences from the current decision; checks every mask on the way.

    Choice states are visited once each (choosing cards in another order reaches the same state).
    """
    seat = int(core.deals.turn[0])
    moves: set[tuple[int, bytes]] = set()
    visited: set[bytes] = set()

    def rec() -> None:
        snap = core.state.copy()
        if snap.tobytes() in visited:
            return
        visited.add(snap.tobytes())
        _, mask = core.observe(0, seat)
        if core.choice[0, 0] >= 0:
            assert mask.sum() >= 2, "a capture question with a single answer"
            assert not mask[:TAKE].any()
        else:
            assert mask.sum() >= 1 and not mask[TAKE:].any()
        for a in range(N_ACTIONS):
            st = act(core, a)
            if not mask[a]:
                assert st == ILLEGAL, f"action {a} is masked out but accepted"
                assert np.array_equal(core.state, snap), "an illegal action changed the state"
                continue
            assert st != ILLEGAL, f"action {a} is in the mask but rejected"
            if st == MOVED:
                last = core.last[0]
                assert last[0] == seat
                moves.add((int(last[1]), last[4:].astype(np.int8).tobytes()))
            else:
                assert st == CHOOSING and core.deals.turn[0] == seat
                rec()
            core.state[:] = snap

    rec()
    return moves


def engine_moves(core: KrypkasinoBatch) -> set[tuple[int, bytes]]:
    """The engine's legal moves of env 0 in the same form."""
    return {(c, cap.astype(np.int8).tobytes()) for c, cap in core.deals.legal_moves(0)}


def position_core(hands: list[list[str]], table: list[str], players: int | None = None, **kw) -> KrypkasinoBatch:
    """A core holding a hand-made position (DealBatch.position) in env 0."""
    rules = Rules(players=players or len(hands))
    core = KrypkasinoBatch(EnvConfig(players=rules.players), 1)
    core.load(DealBatch.position(rules, hands=hands, table=table, **kw))
    return core


@pytest.mark.parametrize("players,variant", [(2, {}), (3, {}), (4, {"set_aside": "spades"}), (5, {}), (6, {}),
                                             (2, {"two_player_deal": "5+6"})])
def test_every_legal_move_reachable_and_nothing_else(players: int, variant: dict) -> None:
    core = KrypkasinoBatch(EnvConfig(players=players, **variant), 1)
    core.seed([players])
    rng = np.random.default_rng(players)
    multi = 0
    for deal in range(8):  # at least two deals, and on until random play has met a capture choice
        if deal >= 2 and multi:
            break
        core.reset()
        while not core.deals.done[0]:
            assert engine_moves(core) == explore(core)
            seat = int(core.deals.turn[0])
            while True:  # play a random legal action path
                _, mask = core.observe(0, seat)
                st = act(core, int(rng.choice(np.flatnonzero(mask))))
                assert st != ILLEGAL
                if st == MOVED:
                    break
                multi += 1
    assert multi > 0, "random play never met a capture choice"


HARD_POSITIONS = [
    # many values, several ways for every card
    ([["10D", "JC", "QH", "KS", "AD"], ["2C"]], ["AC", "AH", "2D", "3C", "3H", "4S", "5H", "6C", "7C", "8D", "9H"]),
    # duplicate copies on the table (no sweep: the values add up to 32)
    ([["10D", "10C", "AC", "5S"], ["2C"]], ["5H", "5H", "5D", "2C", "3C", "2S", "3S", "7C"]),
    # worked example C: 2 3 4 5 8 10, play an ace (14)
    ([["AH", "KC"], ["2C"]], ["2D", "3D", "4D", "5D", "8D", "10C"]),
]
# worked example B: 8 takes A+7, 2+6, 8 — a single capture, applied at once
EXAMPLE_B = ([["8H", "6D"], ["2C"]], ["AC", "2C", "6C", "7C", "8C", "9C", "JC"])


@pytest.mark.parametrize("hands,table", HARD_POSITIONS)
def test_reachability_on_hard_positions(hands: list[list[str]], table: list[str]) -> None:
    core = position_core(hands, table)
    moves = explore(core)
    assert moves == engine_moves(core)
    assert len(moves) > len(hands[0])  # some card really has several captures


def test_single_capture_needs_no_question() -> None:
    """Worked example B: the 8 has one maximal capture, so playing it is one action."""
    core = position_core(*EXAMPLE_B)
    assert explore(core) == engine_moves(core)
    assert act(core, card_code("8H")) == MOVED
    assert names_taken(core) == ["AC", "2C", "6C", "7C", "8C"]


def test_worked_example_c_three_captures() -> None:
    core = position_core([["AH"], ["2C"]], ["2D", "3D", "4D", "5D", "8D", "10C"])
    ace = card_code("AH")
    caps = {cap for card, cap in explore(core) if card == ace}
    want = [["10C", "4D"], ["8D", "4D", "2D"], ["5D", "4D", "3D", "2D"]]
    assert caps == {counts_from_names(w).tobytes() for w in want}
    # 4D is common to all three, so it is never offered; the first question has three answers
    assert act(core, ace) == CHOOSING
    _, mask = core.observe(0, 0)
    assert mask[TAKE + card_code("4D")] == 0
    assert core.choice[0, 1 + card_code("4D")] == 1
    assert mask.sum() >= 2 and mask[CONFIRM] == 0
    # choosing 10C leaves one candidate: applied at once
    assert act(core, TAKE + card_code("10C")) == MOVED
    assert names_taken(core) == ["10C", "4D"]  # code order


def names_taken(core: KrypkasinoBatch) -> list[str]:
    """Names of the cards the last move captured."""
    from krypenv.krypkasino.cards import names_from_counts

    return names_from_counts(core.last[0, 4:])


def test_confirm_when_fixed_cards_are_a_candidate() -> None:
    # 8 on 8C 2C 6C 8D: captures {8C, 2C 6C} ... every maximal capture takes all (two 8s and 2+6)
    # use a case with nested candidates: 10 on 5H 5D 5S: {5H 5D}, {5H 5S}, {5D 5S}
    core = position_core([["10C"], ["2C"]], ["5H", "5D", "5S"])
    assert act(core, card_code("10C")) == CHOOSING
    _, mask = core.observe(0, 0)
    assert mask[CONFIRM] == 0 and mask[TAKE:CONFIRM].sum() == 3
    assert act(core, TAKE + card_code("5S")) == CHOOSING  # two candidates left, both with 5S
    _, mask = core.observe(0, 0)
    assert mask[TAKE + card_code("5S")] == 0 and mask[TAKE:].sum() == 2


def test_forced_sweep_shows_in_mask() -> None:
    # worked example K: table 6 10 4 and a 10 in hand: the 10 must sweep
    core = position_core([["10H", "3C", "6D"], ["2C"]], ["6S", "10C", "4D"])
    _, mask = core.observe(0, 0)
    assert np.flatnonzero(mask).tolist() == [card_code("10H")]
    obs, _ = core.observe(0, 0)
    from krypenv.krypkasino.observation import split

    sweep = split(obs, 2)["sweep"]
    assert sweep[10 - 2] == 1 and sweep.sum() == 1
    assert act(core, card_code("10H")) == MOVED and core.deals.tabbes[0, 0] == 1


def test_forced_sweep_with_a_choice_of_card() -> None:
    # worked example I: a lone 5S; holding 5S and 5D both sweep; 5S is a dubbeltabbe
    core = position_core([["5S", "5D", "9C"], ["2C"]], ["5S"])
    _, mask = core.observe(0, 0)
    assert sorted(np.flatnonzero(mask).tolist()) == sorted([card_code("5S"), card_code("5D")])
    snap = core.state.copy()
    assert act(core, card_code("5S")) == MOVED and core.deals.tabbes[0, 0] == 2
    core.state[:] = snap
    assert act(core, card_code("5D")) == MOVED and core.deals.tabbes[0, 0] == 1


def test_actions_for_move_round_trip() -> None:
    for hands, table in [*HARD_POSITIONS, EXAMPLE_B]:
        core = position_core(hands, table)
        for card, cap in core.deals.legal_moves(0):
            snap = core.state.copy()
            seq = actions_for_move(core.deals.table[0], card, cap)
            for k, a in enumerate(seq):
                st = act(core, a)
                assert st == (MOVED if k == len(seq) - 1 else CHOOSING)
            assert np.array_equal(core.last[0, 4:], cap) and core.last[0, 1] == card
            core.state[:] = snap
    with pytest.raises(ValueError):
        actions_for_move(counts_from_names(["2D", "3D"]), card_code("5C"), counts_from_names(["2D"]))


def test_action_names() -> None:
    assert action_name(card_code("9S")) == "play 9S"
    assert action_name(TAKE + card_code("4H")) == "take 4H"
    assert action_name(TAKE + card_code("4H"), pending=card_code("9S")) == "take 4H with 9S"
    assert action_name(CONFIRM) == "take the chosen cards"
