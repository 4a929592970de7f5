"""Property tests over random deals and random tables, checked against the brute-force oracle (RULES.md K1–K18).

Every test is derandomised (hypothesis ``derandomize=True``, fixed numpy seeds), so the suite
is deterministic.  Example counts are kept small: the whole file runs in well under a minute.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.engine.captures import (
    add_to_sums,
    hand_sweep_values,
    key_total,
    legal_card_mask,
    new_scratch,
    subset_sums,
    sweep_values_known,
    table_value_key,
)
from krypenv.krypkasino.engine.expansion import (
    card_captures,
    legal_captures,
)
from krypenv.krypkasino.rules import Rules
from tests.krypkasino import oracle as O

SETTINGS = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)

CONFIGS: list[dict[str, Any]] = [
    {"players": 2},
    {"players": 2, "two_player_deal": "5+6"},
    {"players": 2, "set_aside": "spades", "last_capture_point": True},
    {"players": 3},
    {"players": 3, "set_aside": "spades"},
    {"players": 4},
    {"players": 4, "teams": [[0, 2], [1, 3]], "last_capture_point": True},
    {"players": 5},
    {"players": 5, "set_aside": "spades"},
    {"players": 6},
    {"players": 6, "teams": [[0, 3], [1, 4], [2, 5]]},
    {"players": 6, "teams": [[0, 2, 4], [1, 3, 5]], "last_capture_point": True, "set_aside": "spades"},
]
ORACLE_MAX_TABLE = 12  # brute force over 2^n table subsets only up to this size


def config_id(cfg: dict[str, Any]) -> str:
    """Readable pytest id of a rules config."""
    return "-".join(f"{k}={v}" for k, v in cfg.items()).replace(" ", "")


def engine_moves(d: DealBatch, i: int = 0) -> set[O.Move]:
    """The engine's legal moves of deal i as hashable (card, counts) pairs."""
    return {(int(c), tuple(int(x) for x in cap)) for c, cap in d.legal_moves(i)}


def ref_for(d: DealBatch, i: int) -> O.RefDeal:
    """A reference deal started from deal i's deck and dealer."""
    r = d.rules
    five_six, spades = r.two_player_deal == "5+6", r.set_aside == "spades"
    return O.RefDeal(r.players, d.deck[i].tolist(), int(d.dealer[i]), five_six, spades, r.last_capture_point)


def assert_same_state(d: DealBatch, ref: O.RefDeal) -> None:
    """Deal 0 of the engine equals the reference deal card for card."""
    assert d.table[0].tolist() == ref.table
    assert d.aside[0].tolist() == ref.aside
    assert d.hands[0].tolist() == ref.hands
    assert d.piles[0].tolist() == ref.piles
    assert d.tabbes[0].tolist() == ref.tabbes
    assert bool(d.done[0]) == ref.done
    if not ref.done:
        assert int(d.turn[0]) == ref.turn


def play_beside_reference(d: DealBatch, ref: O.RefDeal, rng: np.random.Generator, counts: Any) -> int:
    """Play deal 0 to its end with random legal moves, the reference playing the same; the number of moves.

    Before every move: the deck is conserved (``counts`` copies of each card code, K1, K20), the
    engine's state is the reference's, and on tables of at most :data:`ORACLE_MAX_TABLE` cards its
    legal moves are the oracle's (K11–K13: every maximal capture, with forced sweeps).
    """
    n = 0
    while not d.done[0]:
        assert (d.card_census() == counts).all()
        assert_same_state(d, ref)
        got = engine_moves(d)
        if int(d.table[0].sum()) <= ORACLE_MAX_TABLE:
            assert got == ref.legal_moves()
        cards, caps = d.random_moves(rng)
        move = (int(cards[0]), tuple(int(x) for x in caps[0]))
        assert move in got
        assert d.step(cards, caps).tolist() == [0]
        ref.play(*move)
        n += 1
    assert_same_state(d, ref)
    return n


# ============================================================================= whole random deals
@settings(SETTINGS, max_examples=24)
@given(cfg=st.sampled_from(range(len(CONFIGS))), seed=st.integers(0, 2**32 - 1), dealer=st.integers(0, 5))
def test_random_deal_against_reference(cfg: int, seed: int, dealer: int) -> None:
    """K1–K17: a random deal (random_moves + step) conserves cards, has the oracle's legal moves and the reference
    state."""
    rules = Rules(**CONFIGS[cfg])
    dealer %= rules.players
    rng = np.random.default_rng(seed)
    d = DealBatch(rules, 1)
    d.reset(rng=rng, dealers=np.array([dealer]))
    ref = ref_for(d, 0)
    n = play_beside_reference(d, ref, rng, 2)  # K1: 104 cards conserved
    assert (d.card_census() == 2).all()
    assert n == rules.decisions_per_deal == 104 - rules.table_size
    assert d.table.sum() == 0 and d.aside.sum() == 0 and d.hands.sum() == 0
    assert int(d.taker[0]) == ref.taker
    total = 43 if rules.last_capture_point else 42  # K16, K17
    assert d.scores()[0].tolist() == ref.scores()
    assert int(d.scores()[0].sum()) == total
    assert int(d.card_points()[0].sum()) == 42
    assert int(d.team_scores()[0].sum()) == total  # K18


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
@settings(SETTINGS, max_examples=3)
@given(seed=st.integers(0, 2**32 - 1))
def test_batched_play_random_invariants(cfg: dict[str, Any], seed: int) -> None:
    """K1, K16, K17: random batches (serial and parallel kernels) conserve cards at every step and sum to 42/43."""
    rules = Rules(**cfg)
    total = 43 if rules.last_capture_point else 42
    for n in (5, 64):  # 64 takes the parallel kernels
        rng = np.random.default_rng(seed)
        d = DealBatch(rules, n)
        d.reset(rng=rng, dealers=rng.integers(0, rules.players, n))
        steps = 0
        while not d.done.all():
            d.play_random(rng)
            steps += 1
            assert (d.card_census() == 2).all()
        assert steps == rules.decisions_per_deal
        assert (d.n_moves == rules.decisions_per_deal).all()
        assert (d.scores().sum(axis=1) == total).all()
        assert (d.card_points().sum(axis=1) == 42).all()
        assert (d.team_scores().sum(axis=1) == total).all()
        assert d.table.sum() == 0 and d.aside.sum() == 0 and d.hands.sum() == 0
        assert (d.hist_card >= 0).sum() == n * rules.decisions_per_deal


@pytest.mark.parametrize("n", [3, 64])
def test_same_seed_same_deal(n: int) -> None:
    """Same seed → same decks, same moves, same scores (serial and parallel batches)."""
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(1234)
        d = DealBatch(Rules(players=4), n)
        d.reset(rng=rng)
        while not d.done.all():
            d.play_random(rng)
        runs.append((d.deck.copy(), d.hist_card.copy(), d.cap_log.copy(), d.scores().copy()))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


@settings(SETTINGS, max_examples=12)
@given(cfg=st.sampled_from(range(len(CONFIGS))), seed=st.integers(0, 2**32 - 1))
def test_same_deck_same_moves_replays_history(cfg: int, seed: int) -> None:
    """Replaying hist_card and the capture log of a finished deal on the same deck reproduces it exactly."""
    rules = Rules(**CONFIGS[cfg])
    rng = np.random.default_rng(seed)
    d = DealBatch(rules, 2)
    d.reset(rng=rng, dealers=np.array([0, rules.players - 1]))
    while not d.done.all():
        d.play_random(rng)
    e = DealBatch(rules, 2)
    e.reset(decks=d.deck.copy(), dealers=d.dealer.astype(np.int64))
    for m in range(rules.decisions_per_deal):
        caps = np.stack([d.move_capture(i, m) for i in range(2)])
        assert e.step(d.hist_card[:, m].astype(np.int64), caps).tolist() == [0, 0]
    for f in ("piles", "tabbes", "hist_card", "hist_taken", "cap_log", "taker", "done"):
        assert np.array_equal(getattr(d, f), getattr(e, f)), f
    assert np.array_equal(d.scores(), e.scores())


# ============================================================================= hand-built tables
def _cards(max_rank: int) -> st.SearchStrategy[int]:
    """Card codes with rank index at most ``max_rank`` (low cards make many combinations)."""
    return st.builds(lambda r, s: s * 13 + r, st.integers(0, max_rank), st.integers(0, 3))


def _table(max_size: int) -> st.SearchStrategy[list[int]]:
    """A table of up to ``max_size`` card codes, no code more than twice (K1)."""
    cards = st.one_of(_cards(5), _cards(8), _cards(12))
    return st.lists(cards, max_size=max_size).filter(lambda t: max(np.bincount(t, minlength=52)) <= 2 if t else True)


def _vec(codes: list[int]) -> np.ndarray:
    """(52,) int8 count vector of card codes."""
    return np.bincount(np.array(codes, dtype=np.int64), minlength=52).astype(np.int8)


@settings(SETTINGS, max_examples=300)
@given(table=_table(ORACLE_MAX_TABLE), card=st.integers(0, 51))
def test_card_captures_equal_oracle(table: list[int], card: int) -> None:
    """K10–K12: card_captures lists exactly the oracle's maximal captures, each once."""
    rows = card_captures(_vec(table), card)
    got = [tuple(int(x) for x in r) for r in rows]
    assert len(got) == len(set(got))
    assert set(got) == O.maximal_captures(_vec(table).tolist(), card)


@settings(SETTINGS, max_examples=200)
@given(table=_table(10), hand=st.lists(st.one_of(_cards(5), _cards(12)), min_size=1, max_size=6))
def test_legal_moves_equal_oracle(table: list[int], hand: list[int]) -> None:
    """K11–K13: legal cards, legal captures and sweep values agree with the brute-force legal moves."""
    hv, tv = _vec(hand), _vec(table)
    hv = np.minimum(hv, 2).astype(np.int8)
    expected = O.legal_moves(hv.tolist(), tv.tolist())
    mask = np.zeros(52, np.bool_)
    legal_card_mask(hv, tv, mask)
    assert set(np.flatnonzero(mask).tolist()) == {c for c, _ in expected}
    got = set()
    for c in np.flatnonzero(mask):
        caps = legal_captures(hv, tv, int(c))
        got |= {(int(c), tuple(int(x) for x in cap)) for cap in caps} or {(int(c), (0,) * 52)}
    assert got == expected
    hand_values = {O.hand_value(c) for c in range(52) if hv[c]}
    sweep_values = {v for v in hand_values if tv.any() and O.can_sweep(tv.tolist(), v)}
    bits = int(hand_sweep_values(hv, tv))
    assert {v for v in range(15) if (bits >> v) & 1} == sweep_values


@settings(SETTINGS, max_examples=200)
@given(
    table=_table(10),
    hand=st.lists(st.one_of(_cards(5), _cards(12)), min_size=1, max_size=5),
    pick=st.integers(0, 10**6),
    take=st.lists(st.booleans(), min_size=10, max_size=10),
)
def test_step_accepts_exactly_oracle_moves(table: list[int], hand: list[int], pick: int, take: list[bool]) -> None:
    """K9–K13: step accepts a (card, capture) pair iff the oracle lists it; a refused move changes nothing."""
    hand = [c for c in hand if hand.count(c) <= 2]
    assume(hand)
    hand_names = [O.name(c) for c in hand]
    d = DealBatch.position(Rules(players=2), hands=[hand_names, ["KS"]], table=[O.name(c) for c in table])
    expected = O.legal_moves(O.counts(hand), O.counts(table))
    legal = sorted(expected)
    # half of the time a legal move, otherwise a random card with a random subset of the table
    if pick % 2 and legal:
        card, cap = legal[pick // 2 % len(legal)]
    else:
        card = hand[pick % len(hand)]
        cap = O.counts([c for c, t in zip(table, take) if t])
    before = {f: getattr(d, f).copy() for f in ("hands", "table", "piles", "tabbes", "turn", "n_moves")}
    status = int(d.step(np.array([card]), np.array([cap], dtype=np.int8))[0])
    assert (status == 0) == ((card, cap) in expected)
    if status:
        for f, v in before.items():
            assert np.array_equal(getattr(d, f), v), f


# ============================================================================= big tables
BIG_TABLES: dict[str, list[str]] = {
    "A-6 x4 suits (24)": [r + s for r in ["A", "2", "3", "4", "5", "6"] for s in O.SUITS],
    "A-4 x4 suits x2 + 5C 5D 6H 7S (36)": [r + s for r in "A234" for s in O.SUITS] * 2 + ["5C", "5D", "6H", "7S"],
    "A 2 3 5 8 9 10 x3 suits (21)": [r + s for r in ["A", "2", "3", "5", "8", "9", "10"] for s in ["C", "D", "S"]],
    "2-8 mixed (21)": [r + s for r in ["2", "3", "4", "5", "6", "7", "8"] for s in ["C", "H", "S"]],
}


@pytest.mark.parametrize("label", list(BIG_TABLES))
def test_big_table_capture_counts(label: str) -> None:
    """K11 on 20+ card tables: the count of distinct maximal captures of every played value equals the oracle's."""
    table = BIG_TABLES[label]
    tv = np.array(O.counts(table), dtype=np.int8)
    for card in ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH"]:
        rows = card_captures(tv, O.code(card))
        assert rows.shape[0] == O.count_captures(tv.tolist(), O.hand_value(O.code(card))), card
        assert (rows.sum(axis=1) > 0).all() if rows.shape[0] else True


def test_big_table_capture_sets() -> None:
    """K11: on the 24-card A–6 table, the card-level captures of 7, 10 and A equal the oracle's expansion exactly."""
    table = BIG_TABLES["A-6 x4 suits (24)"]
    tv = np.array(O.counts(table), dtype=np.int8)
    for card in ["7C", "10C", "AC"]:
        v = O.hand_value(O.code(card))
        expected = set().union(*(O.expand(table, vc) for vc in O.value_captures(table, v)))
        got = {tuple(int(x) for x in r) for r in card_captures(tv, O.code(card))}
        assert got == expected, card


def test_oracles_agree_on_small_tables() -> None:
    """The subset oracle and the value-level oracle agree (sanity check of the test oracles themselves)."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        deck = np.array(list(range(52)) * 2)
        table = [int(c) for c in rng.choice(deck, size=int(rng.integers(0, 10)), replace=False)]
        for v_card in (O.code("AH"), O.code("7H"), O.code("10H")):
            a = O.maximal_captures(table, v_card)
            assert len(a) == O.count_captures(table, O.hand_value(v_card))


@settings(SETTINGS, max_examples=200)
@given(table=_table(10), values=st.integers(0, 0x7FFC), extra=st.integers(1, 13), first=st.booleans())
def test_sweeps_from_a_known_total_and_sums_equal_oracle(table: list[int], values: int, extra: int,
                                                         first: bool) -> None:
    """K13 with the table's total and subset sums given (what the expert's lookahead knows): the sweeping values
    among ``values`` as the oracle says (with ``first`` the lowest of them); the subset sums after one more card
    of table value ``extra`` are those of the bigger table (K10: the sums a combination can reach)."""
    tv = _vec(table)
    key = table_value_key(tv)
    if key == 0:
        return
    vals = O.value_counts(tv.tolist())
    total = sum(k * n for k, n in enumerate(vals))
    assert key_total(key) == total
    want = {v for v in range(2, 15) if (values >> v) & 1 and O.can_sweep(tv.tolist(), v)}
    for sums in (-1, subset_sums(key)):
        got = int(sweep_values_known(values, key, total, sums, first, new_scratch()))
        bits = {v for v in range(15) if (got >> v) & 1}
        assert bits == ({min(want)} if first and want else want)
    bigger = key + (1 << (4 * extra))
    if (bigger >> (4 * extra)) & 15 <= 8:
        assert add_to_sums(subset_sums(key), extra) == subset_sums(bigger) < 1 << 15  # the sums 0..14 only
        assert {s for s in range(15) if (subset_sums(bigger) >> s) & 1} == {
            s for s in range(15) if O.has_combination([k for k, n in enumerate(vals) for _ in range(n)] + [extra], s)
            or s == 0}


@pytest.mark.parametrize("k", range(1, 14))
def test_sweeps_with_the_highest_value_one_to_eight_times(k: int) -> None:
    """K13 on tables whose highest value ``k`` lies 1–8 times (its count's top bit at each place of the value key's
    nibble), alone and with a lower card: every value 2–14 sweeps as the oracle says (each card lies in a part, so
    a value below ``k`` never sweeps; ``k`` itself may)."""
    for n in range(1, 9):
        copies = [(j % 4) * 13 + k - 1 for j in range(n)]  # suit j % 4 of rank k (two decks: at most 8 copies)
        for table in (copies, copies + [0] if k > 1 else copies):
            tv = _vec(table)
            want = {v for v in range(2, 15) if O.can_sweep(tv.tolist(), v)}
            got = int(sweep_values_known(0x7FFC, table_value_key(tv), key_total(table_value_key(tv)), -1, False,
                                         new_scratch()))
            assert {v for v in range(15) if (got >> v) & 1} == want, (k, n, table)


@pytest.mark.parametrize("players", [2, 4])
def test_capture_log_holds_every_copy_each_move_took(players: int) -> None:
    """``move_capture`` of every move is what moved from the table into the mover's pile, less the played card: both
    copies of a card when a capture takes both (K1, K10).  256 random deals; at least one move takes both copies."""
    rules = Rules(players=players)
    rng = np.random.default_rng(5)
    d = DealBatch(rules, 256)
    d.reset(rng=rng)
    both_copies = 0
    while not d.done.all():
        piles, moves, turn, done = d.piles.copy(), d.n_moves.copy(), d.turn.copy(), d.done.copy()
        d.play_random(rng)
        for i in np.flatnonzero(~done & ~d.done):  # a deal's last move also takes the rest (K15): left out
            cap = d.move_capture(i, int(moves[i]))
            gained = d.piles[i, turn[i]].astype(np.int64) - piles[i, turn[i]]
            if cap.any():
                gained[d.hist_card[i, moves[i]]] -= 1  # the capturing card joins the pile too
            assert gained.tolist() == cap.tolist(), (i, int(moves[i]))
            both_copies += int((cap == 2).any())
    assert both_copies > 0
