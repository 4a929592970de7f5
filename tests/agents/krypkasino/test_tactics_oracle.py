"""The expert's setup and risk terms (krypenv.agents.krypkasino.tactics.move_terms) against a brute-force oracle.

T_SETUP is the chance that the next seat must sweep the table a move leaves (K13), plus a dubbeltabbe's;
T_RISK the chance that the seat before our next turn can leave us a table we must sweep.  The oracle
enumerates every maximal capture (K11) and every split of a table (K13) by brute force
(tests/krypkasino/oracle.py) and counts the hypergeometric chances with binomial coefficients; the card
counting (unseen values, the seats' voids) is the tactics' own, checked elsewhere.
"""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from krypenv.agents.krypkasino import tactics as T

from krypenv.krypkasino.cards import HAND_VALUE
from krypenv.krypkasino.engine import kernels
from tests.agents.krypkasino.test_heuristics import decisions_of
from tests.krypkasino import oracle as O


def p_any(n: int, k: int, h: int) -> float:
    """Chance that h cards drawn from n hold at least one of k given ones: 1 − C(n−k, h) / C(n, h)."""
    if k <= 0 or h <= 0:
        return 0.0
    return 1.0 - comb(n - k, h) / comb(n, h) if h <= n else 1.0


def values_of(table: np.ndarray) -> tuple[int, ...]:
    """The table's value counts (entry k: cards of table value k, K3)."""
    return O.value_counts(table.tolist())


def sweeps(vc: tuple[int, ...]) -> set[int]:
    """Played values 2..14 that must sweep the table (K13): it splits into combinations of the value."""
    return {v for v in range(2, 15) if any(vc) and O._value_split(vc, v)}


def rests(table: np.ndarray, x: int) -> list[tuple[int, ...]]:
    """The tables (value counts) a card of played value x can leave on ``table``: minus each maximal capture
    (K11), or with the card crept (K12)."""
    vc = values_of(table)
    caps = O.value_captures(table.tolist(), x) if any(vc) else set()
    if not caps:
        crept = list(vc)
        crept[1 if x == 14 else x] += 1  # an ace lies on the table as 1 (K3)
        return [tuple(crept)]
    return [tuple(a - b for a, b in zip(vc, cap)) for cap in caps]


def setup(table: np.ndarray, unseen: np.ndarray, uval: np.ndarray, n: int, h: int, void: int) -> tuple[float, float]:
    """(forced sweep, dubbeltabbe) chances of a seat holding h of the n unseen cards, minus its void values."""
    good_values = sweeps(values_of(table))
    if not good_values or h <= 0:
        return 0.0, 0.0
    pool = n - sum(int(uval[v]) for v in range(2, 15) if (void >> v) & 1)
    good = sum(int(uval[v]) for v in good_values if not (void >> v) & 1)
    dub = 0.0
    if table.sum() == 1:
        lone = int(np.flatnonzero(table)[0])
        if lone % 13 != 0 and unseen[lone] > 0:  # its twin alone takes it: two tabbes (not an ace, K14)
            twin = int(unseen[lone])
            other = good - twin
            dub = (1 - p_any(pool, other, h)) - (1 - p_any(pool, other + twin, h))
    return p_any(pool, good, h), dub


def risk(table: np.ndarray, hand_bits: int, uval: np.ndarray, n: int, h: int, void: int) -> float:
    """Chance that a seat holding h unseen cards holds a value (not void, not a sweeper) some play of which leaves
    a table that one of our values (``hand_bits``) must sweep."""
    if hand_bits == 0 or h <= 0:
        return 0.0
    vc = values_of(table)
    sweepers = sweeps(vc)
    pool, bad = n, 0
    ours = [v for v in range(2, 15) if (hand_bits >> v) & 1]
    for x in range(2, 15):
        if (void >> x) & 1 or x in sweepers:
            pool -= int(uval[x])
            continue
        if uval[x] and any(any(r) and any(O._value_split(r, v) for v in ours) for r in rests(table, x)):
            bad += int(uval[x])
    return p_any(pool, bad, h)


@pytest.mark.parametrize("players, set_aside, seed", [(2, "court", 3), (2, "spades", 8), (3, "court", 5)])
def test_setup_and_risk_terms_equal_the_oracle(players: int, set_aside: str, seed: int) -> None:
    """Every move of sampled decisions of random games: T_SETUP and T_RISK as the oracle counts them."""
    cards = np.empty(T.MAX_MOVES, np.int64)
    caps = np.empty((T.MAX_MOVES, 52), np.int8)
    keys = np.empty(T.MAX_KEYS, np.int64)
    terms = np.empty((T.MAX_MOVES, T.N_TERMS))
    scr = T.new_scratch()
    checked = {"setup": 0, "risk": 0, "round end": 0}
    for k, (core, batch) in enumerate(decisions_of(players, seed, n=6, set_aside=set_aside)):
        if k % 3:
            continue
        st, rules = core.state, batch.rules
        for i in batch.envs:
            seat = int(st[i, kernels.TURN])
            hand, table = kernels.hand_of(st, i, seat), kernels.table_of(st, i)
            if table.sum() > 9:
                continue  # the oracle is exponential in the table
            pending = np.int64(core.choice[i, 0])
            n = T.moves_into(hand, table, pending, core.choice[i, 1:], cards, caps, keys, scr)
            T.move_terms(st, i, players, rules.hand_size, rules.set_aside == "spades", cards, caps, n, 0.5, terms,
                         keys, scr)
            ctx = T._decision_context(st, i, players, rules.hand_size, 0.5, scr)
            nxt, prv, n_hand, n_unseen, h_next, h_prev, left_after, last_round = (ctx[1], ctx[2], ctx[4], ctx[6],
                                                                                   ctx[7], ctx[8], ctx[9], ctx[10])
            uval = scr[T.X_UVAL:T.X_UVAL + 15].copy()
            unseen = scr[T.X_UNSEEN:T.X_UNSEEN + 52].copy()
            voids = scr[T.X_VOIDS:T.X_VOIDS + players].copy()
            for m in range(n):
                after = table.astype(np.int64) - caps[m]
                if not caps[m].any():
                    after[cards[m]] += 1
                want_setup = want_risk = 0.0
                if not (left_after == 0 and last_round):
                    if left_after == 0:  # the round ends: the set-aside cards leave the table (K8)
                        moved = after.copy()
                        moved[np.arange(52) // 13 == 3 if set_aside == "spades" else np.arange(52) % 13 >= 10] = 0
                        p, dub = setup(moved, unseen, uval, n_unseen, 4, 0)
                        checked["round end"] += 1
                    else:
                        p, dub = setup(after, unseen, uval, n_unseen, h_next, int(voids[nxt]))
                    want_setup = p + dub
                    if n_hand > 1 and left_after > 0:
                        rest = hand.astype(np.int64).copy()
                        rest[cards[m]] -= 1
                        bits = int(np.bitwise_or.reduce([1 << int(HAND_VALUE[c]) for c in np.flatnonzero(rest)]))
                        if players == 2:
                            want_risk = (1 - p) * risk(after, bits, uval, n_unseen, h_next, int(voids[nxt]))
                        else:
                            want_risk = risk(after, bits, uval, n_unseen, h_prev, int(voids[prv]))
                assert terms[m, T.T_SETUP] == pytest.approx(want_setup, abs=1e-12)
                assert terms[m, T.T_RISK] == pytest.approx(want_risk, abs=1e-12)
                checked["setup"] += want_setup > 0
                checked["risk"] += want_risk > 0
    assert checked["setup"] > 20 and checked["risk"] > 20 and checked["round end"] > 5, checked
