"""Compiled tactics shared by the rule-based agents and the PIMC rollouts.

Everything here works on engine deal records (:mod:`krypenv.krypkasino.engine.kernels`: one int8 row
per deal) and reads only what the seat to act may know: its own hand, the table, the
set-aside pile, the capture piles, hand sizes, the deck size and the public move history.
The same kernels therefore choose moves for agents playing in a :class:`krypenv.krypkasino.batch.KrypkasinoBatch`
(whose rows carry the engine record first) and inside PIMC rollouts on a plain
:class:`krypenv.krypkasino.engine.DealBatch`.

* :func:`moves_into` lists the legal (card, capture) moves of the seat to act (K11–K13).
* :func:`choose` scores them with one of the policies (greedy, creeper, expert, random)
  and returns the index of the best; :func:`action_for` turns a move into the next action
  of the env's capture-choice protocol (:mod:`krypenv.krypkasino.actions`).
* Card counting: :func:`unseen_values` (copies of each played value the seat has not seen)
  and :func:`round_voids` (values a seat cannot hold: within a round a hand only shrinks,
  and a seat that did not sweep a sweepable table held none of its sweeping values, K13).
* :func:`p_any` is the hypergeometric chance that a hand of h cards drawn from N unseen
  cards holds at least one of K given cards.

Played values are 2..14 (an ace is 14 from the hand, K3); value bitmasks use bit v.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from krypenv.krypkasino.actions import CONFIRM, TAKE, holds
from krypenv.krypkasino.cards import HAND_VALUE, POINTS
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.captures import (
    SCRATCH_WORDS,
    add_to_sums,
    clear_scratch,
    hand_sweep_values_s,
    hand_value_bits,
    key_total,
    maximal_captures_k,
    subset_sums,
    sweep_values_known,
    sweep_values_s,
    table_value_key,
)
from krypenv.krypkasino.engine.expansion import (
    candidate_into,
    card_capture,
    card_capture_keys,
    n_candidates,
    n_card_captures,
)

MAX_MOVES = 256  # moves listed per decision (more only on absurd hand-built tables; the rest are dropped)
MAX_KEYS = 64  # value-level captures kept per played value
RANDOM, GREEDY, CREEPER, EXPERT = 0, 1, 2, 3  # policy kinds
# expert weights (a float64 vector, see krypenv.agents.krypkasino.heuristics for their meaning and defaults)
W_SETUP, W_SELF, W_LAST, W_HIGH, W_ENDQ, N_WEIGHTS = 0, 1, 2, 3, 4, 5
TIE = 1e-9  # costs closer than this are ties
# The tactics' per-thread scratch: the engine's capture scratch (krypenv.krypkasino.engine.captures), then the
# card-counting vectors below (int64), so nothing here allocates and the same functions run on CPU and CUDA threads.
X_COPIES = SCRATCH_WORDS  # (52) copies of each card in the deal's deck (K1, K20)
X_UNSEEN = X_COPIES + 52  # (52) copies of each card the seat has not seen
X_UVAL = X_UNSEEN + 52  # (16) unseen copies per played value 2..14
X_VOIDS = X_UVAL + 16  # (8) per seat, the values it cannot hold (round_voids)
X_HAND = X_VOIDS + 8  # (52) the seat's hand, a card taken out while a move is weighed
X_AFTER = X_HAND + 52  # (52) the table a move leaves
X_MOVED = X_AFTER + 52  # (52) that table after the end-of-round setting aside (K8)
X_TABLE = X_MOVED + 52  # (52) the table undone move by move (round_voids)
TACTICS_WORDS = X_TABLE + 56  # scratch length for the tactics (a multiple of 8 words)


@njit(cache=True)
def new_scratch() -> np.ndarray:
    """A scratch vector for the tactics (one per thread): the capture scratch and the card-counting vectors."""
    scr = np.zeros(TACTICS_WORDS, np.int64)
    clear_scratch(scr)
    return scr


# --------------------------------------------------------------------------- moves
@njit(cache=True)
def moves_into(hand: np.ndarray, table: np.ndarray, pending: int, fixed: np.ndarray, cards: np.ndarray,
               caps: np.ndarray, keys: np.ndarray, scr: np.ndarray) -> int:
    """Write the legal moves (card, capture counts) into ``cards``/``caps``; return their number.

    With a pending card (a capture choice in progress) only its captures holding ``fixed``;
    otherwise every card of the hand (K13: only the sweepers, taking the whole table).  A
    creep is an all-zero capture.  Cards of one rank share their value-level captures.
    """
    n = 0
    if pending >= 0:
        found = card_capture_keys(table, pending, scr)
        for m in range(n_candidates(table, found)):
            if n < MAX_MOVES:
                candidate_into(table, found, m, caps[n])
                if holds(caps[n], fixed):
                    cards[n] = pending
                    n += 1
        return n
    tkey = table_value_key(table)
    sums = subset_sums(tkey)
    forced = hand_sweep_values_s(hand, tkey, scr)
    for rank in range(13):
        nk = -1  # value-level captures of this rank, found on first use
        for suit in range(4):
            c = suit * 13 + rank
            if hand[c] == 0 or n >= MAX_MOVES:
                continue
            v = HAND_VALUE[c]
            if forced:
                if (forced >> v) & 1:
                    cards[n] = c
                    for t in range(52):
                        caps[n, t] = table[t]
                    n += 1
                continue
            if nk < 0:
                found_k = maximal_captures_k(tkey, sums, v, scr)
                nk = min(found_k.shape[0], MAX_KEYS)
                for k in range(nk):
                    keys[k] = found_k[k]
            if nk == 0:
                cards[n] = c
                caps[n, :] = 0
                n += 1
            for k in range(nk):
                for idx in range(n_card_captures(table, keys[k])):
                    if n >= MAX_MOVES:
                        break
                    card_capture(table, keys[k], idx, caps[n])
                    cards[n] = c
                    n += 1
    return n


@njit(cache=True)
def action_for(pending: int, fixed: np.ndarray, card: int, cap: np.ndarray) -> int:
    """The next action towards the move (card, cap) from the choice state (pending, fixed)
    (:mod:`krypenv.krypkasino.actions`)."""
    if pending < 0:
        return card
    for c in range(52):
        if cap[c] > fixed[c]:
            return TAKE + c
    return CONFIRM


# --------------------------------------------------------------------------- card counting
@njit(cache=True)
def unseen_values(st: np.ndarray, i: int, players: int, seat: int, out: np.ndarray, scr: np.ndarray) -> int:
    """Copies of each played value 2..14 (``out[v]``) that ``seat`` has not seen in deal ``i``; returns their total.

    Seen: own hand, table, set-aside pile and every capture pile (public with perfect recall).
    """
    out[:] = 0
    hand = kernels.HANDS + 52 * seat
    piles = kernels.piles_at(players)
    copies = scr[X_COPIES:X_COPIES + 52]
    kernels.deck_counts_into(st, i, copies)  # the deal's deck: two of each card, or a variant's (K20)
    total = 0
    for c in range(52):
        seen = st[i, hand + c] + st[i, kernels.TABLE + c] + st[i, kernels.ASIDE + c]
        for t in range(players):
            seen += st[i, piles + 52 * t + c]
        k = copies[c] - seen
        out[HAND_VALUE[c]] += k
        total += k
    return total


@njit(cache=True)
def round_voids(st: np.ndarray, i: int, players: int, hand_size: int, out: np.ndarray, scr: np.ndarray) -> None:
    """Per seat, the bitmask of played values it cannot hold now (K13 inference over this round's moves).

    The round's moves are undone from the current table backwards (a creep leaves the
    table, a capture returns its logged cards), giving the table each move faced; a seat
    that faced a sweepable table and did not sweep held none of the sweeping values, and
    within a round a hand only loses cards.  ``hand_size``: cards per hand in round 0 (K6, K21);
    a later round's hands are what every hand received after round 0 (K7: 4; K21: ``hand``),
    shared out over the later rounds.
    """
    out[:] = 0
    rnd = np.int64(st[i, kernels.ROUND])
    to_hands = np.int64(st[i, kernels.N_MOVES]) + np.int64(st[i, kernels.IN_HANDS])  # every card dealt to a hand
    dealt = players * hand_size if rnd == 0 else (to_hands - players * hand_size) // rnd
    n = np.int64(st[i, kernels.N_MOVES])
    first = n - (dealt - st[i, kernels.IN_HANDS])  # index of the round's first move
    lo = max(first, 0)
    table = scr[X_TABLE:X_TABLE + 52]
    for c in range(52):
        table[c] = st[i, kernels.TABLE + c]
    log = np.int64(st[i, kernels.N_LOGGED])
    on_table = 0
    for c in range(52):
        on_table += table[c]
    for m in range(n - 1, lo - 1, -1):
        card = st[i, kernels.HIST_CARD + m]
        taken = np.int64(st[i, kernels.HIST_TAKEN + m])
        if taken == 0:
            table[card] -= 1
            on_table -= 1
        else:
            for e in range(taken):
                table[st[i, kernels.CAP_LOG + log - 1 - e]] += 1
            log -= taken
            on_table += taken
        if taken == 0 or taken < on_table:  # not a sweep: the seat held no sweeping value
            seat = (st[i, kernels.DEALER] + 1 + (m - first)) % players
            out[seat] |= sweep_values_s(table_value_key(table), scr)


@njit(cache=True)
def p_any(n: int, k: int, h: int) -> float:
    """Chance that h cards drawn without replacement from n hold at least one of k given cards."""
    if k <= 0 or h <= 0:
        return 0.0
    if h > n - k:
        return 1.0
    miss = 1.0
    for j in range(h):
        miss *= (n - k - j) / (n - j)
    return 1.0 - miss


@njit(cache=True)
def p_none(n: int, k: int, h: int) -> float:
    """Chance that h cards drawn from n hold none of k given cards."""
    return 1.0 - p_any(n, k, h)


# --------------------------------------------------------------------------- move scoring
@njit(cache=True)
def points_now(table: np.ndarray, on_table: int, card: int, cap: np.ndarray) -> int:
    """What the move adds to the mover's score at once: card points taken (K4) plus 5 per tabbe (K14).

    A capture puts the captured cards and the played card in the pile; a creep takes
    nothing.  A sweep scores a tabbe, two for a dubbeltabbe (a lone non-ace taken by its twin).
    """
    taken, pts = 0, 0
    for c in range(52):
        if cap[c]:
            taken += cap[c]
            pts += cap[c] * POINTS[c]
    if taken == 0:
        return 0
    pts += POINTS[card]
    if taken == on_table:
        pts += 10 if (taken == 1 and cap[card] == 1 and card % 13 != 0) else 5
    return pts


@njit(cache=True)
def table_after(table: np.ndarray, card: int, cap: np.ndarray, out: np.ndarray) -> bool:
    """Write the table the move leaves into ``out``; return True if it captures."""
    takes = False
    for c in range(52):
        out[c] = table[c] - cap[c]
        takes |= cap[c] > 0
    if not takes:
        out[card] += 1
    return takes


@njit(cache=True)
def _set_aside_copy(table: np.ndarray, spades: bool, out: np.ndarray) -> None:
    """``out`` = the table after the end-of-round setting aside (K8)."""
    for c in range(52):
        out[c] = 0 if ((c // 13 == 3) if spades else (c % 13 >= 10)) else table[c]


@njit(cache=True)
def p_sweep(table: np.ndarray, sweeps: int, unseen: np.ndarray, uval: np.ndarray, n: int, h: int,
            void: int) -> tuple[float, float]:
    """(chance of a forced sweep, chance of a dubbeltabbe) for a seat holding h unseen cards facing ``table``.

    ``sweeps``: the table's sweeping values (:func:`sweep_values_s`).  The seat's hand is h cards drawn
    from the n unseen cards, minus the values it is known not to hold (``void``).  A dubbeltabbe needs a
    lone non-ace whose twin the seat holds with no other card of that value (else it would sweep with the
    other card).
    """
    if sweeps == 0 or h <= 0:
        return 0.0, 0.0
    pool, good = n, 0
    for v in range(2, 15):
        if (void >> v) & 1:
            pool -= uval[v]
        elif (sweeps >> v) & 1:
            good += uval[v]
    p = p_any(pool, good, h)
    dub = 0.0
    total, lone = 0, -1
    for c in range(52):
        if table[c]:
            total += table[c]
            lone = c
    if total == 1 and lone % 13 != 0 and unseen[lone] > 0:
        twin = np.int64(unseen[lone])
        other = good - twin
        dub = p_none(pool, other, h) - p_none(pool, other + twin, h)
    return p, dub


@njit(cache=True)
def self_risk(tkey: int, sweeps: int, hand_bits: int, uval: np.ndarray, n: int, h: int, void: int,
              keys: np.ndarray, scr: np.ndarray) -> float:
    """Chance that a seat with h unseen cards, playing just before us on table ``tkey``, leaves a table we must sweep.

    For each value x it might hold (not one of the table's ``sweeps``, not void): does some legal
    play of x (a creep, or any maximal capture) leave a table that a card of our hand
    (``hand_bits``, played values) sweeps (K13)?  A careful opponent plays such a card if it has one.
    """
    if hand_bits == 0 or h <= 0:
        return 0.0
    sums = subset_sums(tkey)
    total = key_total(tkey)
    pool, bad = n, 0
    for x in range(2, 15):
        if (void >> x) & 1 or (sweeps >> x) & 1:
            pool -= uval[x]
            continue
        if uval[x] == 0:
            continue
        found = maximal_captures_k(tkey, sums, x, scr)
        nk = min(found.shape[0], MAX_KEYS)
        hit = False
        if nk == 0:
            tv = 1 if x == 14 else x  # the crept card lies on the table at its table value (K3)
            hit = sweep_values_known(hand_bits, tkey + (np.int64(1) << (4 * tv)), total + tv,
                                     add_to_sums(sums, tv), True, scr) != 0
        else:
            for k in range(nk):
                keys[k] = found[k]
            for k in range(nk):  # a capture of x takes some multiple of x from the total
                rest = tkey - keys[k]
                if rest != 0 and sweep_values_known(hand_bits, rest, total - key_total(keys[k]), -1, True, scr):
                    hit = True
                    break
        if hit:
            bad += uval[x]
    return p_any(pool, bad, h)


# terms of a move (columns of move_terms' output); the expert's cost is a weighted sum of them
T_PTS, T_HIGH, T_STAKE, T_KEEP, T_SETUP, T_RISK, T_CREEP, T_TAKEN, T_LEFT, T_AFTER, N_TERMS = range(11)


@njit(cache=True)
def _decision_context(st: np.ndarray, i: int, players: int, hand_size: int, endq: float,
                      scr: np.ndarray) -> tuple:
    """The card counting behind :func:`move_terms` for the seat to act in deal ``i``, done once per decision.

    Fills the scratch's hand (X_HAND), unseen cards (X_UNSEEN), unseen values (X_UVAL) and the seats'
    voids (X_VOIDS) and returns the scalars: (seat, next seat, previous seat, cards on the table, cards
    in hand, set-aside points, unseen cards, next and previous seats' hand sizes, cards in all hands
    after this move, last round, who holds the K15 stake now, chance that nobody captures any more).
    """
    seat = np.int64(st[i, kernels.TURN])
    nxt, prv = (seat + 1) % players, (seat - 1) % players
    table = kernels.table_of(st, i)
    hand = scr[X_HAND:X_HAND + 52]
    on_table, n_hand, aside_pts = 0, 0, 0
    for c in range(52):
        hand[c] = st[i, kernels.HANDS + 52 * seat + c]
        on_table += table[c]
        n_hand += hand[c]
        aside_pts += st[i, kernels.ASIDE + c] * POINTS[c]
    n_unseen = unseen_values(st, i, players, seat, scr[X_UVAL:X_UVAL + 15], scr)
    piles = kernels.piles_at(players)
    unseen = scr[X_UNSEEN:X_UNSEEN + 52]
    kernels.deck_counts_into(st, i, unseen)  # the deal's deck (K1, K20), less what this seat has seen
    for c in range(52):
        seen = hand[c] + table[c] + st[i, kernels.ASIDE + c]
        for t in range(players):
            seen += st[i, piles + 52 * t + c]
        unseen[c] -= seen
    round_voids(st, i, players, hand_size, scr[X_VOIDS:X_VOIDS + players], scr)
    h_next = 0
    h_prev = 0
    for c in range(52):
        h_next += st[i, kernels.HANDS + 52 * nxt + c]
        h_prev += st[i, kernels.HANDS + 52 * prv + c]
    left_after = np.int64(st[i, kernels.IN_HANDS]) - 1  # cards in all hands once this move is played
    last_round = st[i, kernels.POS] >= kernels.deck_length(st, i)
    last = np.int64(st[i, kernels.LAST_CAPTURER])
    holder = last if last >= 0 else np.int64(st[i, kernels.DEALER])  # who takes the rest now (K15)
    keep = (1.0 - endq) ** left_after  # chance nobody captures in the plays still to come
    return (seat, nxt, prv, on_table, n_hand, aside_pts, n_unseen, h_next, h_prev, left_after, last_round, holder,
            keep)


@njit(cache=True)
def _move_terms_one(st: np.ndarray, i: int, players: int, spades: bool, ctx: tuple, card: int, cap: np.ndarray,
                    keys: np.ndarray, scr: np.ndarray) -> tuple:
    """The terms (T_PTS … T_AFTER, see :func:`move_terms`) of one move, given the decision's context."""
    seat, nxt, prv, on_table, n_hand, aside_pts, n_unseen, h_next, h_prev, left_after, last_round, holder, keep = ctx
    table = kernels.table_of(st, i)
    hand, unseen, uval = scr[X_HAND:X_HAND + 52], scr[X_UNSEEN:X_UNSEEN + 52], scr[X_UVAL:X_UVAL + 15]
    voids, after, moved = scr[X_VOIDS:X_VOIDS + players], scr[X_AFTER:X_AFTER + 52], scr[X_MOVED:X_MOVED + 52]
    pts = float(points_now(table, on_table, card, cap))
    takes = table_after(table, card, cap, after)
    high = float(HAND_VALUE[card] - 8)
    left_pts, left_n, taken = 0, 0, 0
    for c in range(52):
        left_pts += after[c] * POINTS[c]
        left_n += after[c]
        taken += cap[c]
    stake, keeps, setup, risk = 0.0, 0.0, 0.0, 0.0
    tkey, sweeps = np.int64(0), np.int64(0)  # the table left and its sweeping values, when the round goes on
    if last_round and (takes or holder == seat):  # K15: the last capturer takes pile and table
        stake = float(aside_pts + left_pts)
        keeps = 1.0 if left_after == 0 else keep
    if not (left_after == 0 and last_round):
        if left_after == 0:  # the round ends: courts set aside (K8), the next seat leads with 4 new cards
            _set_aside_copy(after, spades, moved)
            p, dub = p_sweep(moved, sweep_values_s(table_value_key(moved), scr), unseen, uval, n_unseen, 4, 0)
        else:
            tkey = table_value_key(after)
            sweeps = sweep_values_s(tkey, scr)  # one search for both the setup and the risk
            p, dub = p_sweep(after, sweeps, unseen, uval, n_unseen, h_next, voids[nxt])
        setup = p + dub
        if n_hand > 1 and left_after > 0:
            hand[card] -= 1
            bits = hand_value_bits(hand)
            hand[card] += 1
            if players == 2:
                risk = (1.0 - p) * self_risk(tkey, sweeps, bits, uval, n_unseen, h_next, voids[nxt], keys, scr)
            else:
                risk = self_risk(tkey, sweeps, bits, uval, n_unseen, h_prev, voids[prv], keys, scr)
    return (pts, high, stake, keeps, setup, risk, 0.0 if takes else 1.0, float(taken), float(left_pts),
            float(left_n))


@njit(cache=True)
def move_terms(st: np.ndarray, i: int, players: int, hand_size: int, spades: bool, cards: np.ndarray,
               caps: np.ndarray, n: int, endq: float, terms: np.ndarray, keys: np.ndarray, scr: np.ndarray) -> None:
    """The public-information terms of each move for the seat to act: ``terms[m, T_*]`` (see expert_costs).

    T_PTS points now (K4, K14); T_HIGH played value − 8; T_STAKE the K15 stake (set-aside pile
    + table points left) and T_KEEP the chance that we keep it as last capturer, assuming each
    later play captures with chance ``endq`` (both 0 outside the last round or when someone
    else holds the stake); T_SETUP P(the next seat must sweep what we leave) + P(a
    dubbeltabbe) (0 for the deal's last move); T_RISK P(we are made to sweep on our next turn)
    (0 when we have no next turn this round); T_CREEP 1 for a creep; T_TAKEN cards taken;
    T_LEFT card points left on the table; T_AFTER cards left on the table.  ``scr`` is a tactics
    scratch (:func:`new_scratch`).
    """
    ctx = _decision_context(st, i, players, hand_size, endq, scr)
    for m in range(n):
        t = _move_terms_one(st, i, players, spades, ctx, cards[m], caps[m], keys, scr)
        for k in range(N_TERMS):
            terms[m, k] = t[k]


@njit(cache=True)
def expert_costs(st: np.ndarray, i: int, players: int, hand_size: int, spades: bool, cards: np.ndarray,
                 caps: np.ndarray, n: int, w: np.ndarray, costs: np.ndarray, keys: np.ndarray, scr: np.ndarray) -> None:
    """The expert's expected cost of each move for the seat to act.

    Lower is better; see krypenv.agents.krypkasino.heuristics.

    cost = points now − 5·w_setup·P(the next seat must sweep what we leave, +1 for a
    dubbeltabbe) + 5·w_self·P(we are made to sweep on our next turn) + w_last·(K15 stake)
    ·P(we end as last capturer) − w_high·(value − 8)/6, from the terms of :func:`move_terms`.
    """
    ctx = _decision_context(st, i, players, hand_size, w[W_ENDQ], scr)
    for m in range(n):
        t = _move_terms_one(st, i, players, spades, ctx, cards[m], caps[m], keys, scr)
        cost = t[T_PTS]
        cost -= w[W_HIGH] * t[T_HIGH] / 6.0
        cost += w[W_LAST] * t[T_STAKE] * t[T_KEEP]
        cost -= 5.0 * w[W_SETUP] * t[T_SETUP]
        cost += 5.0 * w[W_SELF] * t[T_RISK]
        costs[m] = cost


@njit(cache=True)
def choose(st: np.ndarray, i: int, players: int, hand_size: int, spades: bool, pending: int, fixed: np.ndarray,
           kind: int, w: np.ndarray, u: float, cards: np.ndarray, caps: np.ndarray, costs: np.ndarray,
           keys: np.ndarray, scr: np.ndarray) -> int:
    """Index of the chosen move among those :func:`moves_into` writes for the seat to act in deal ``i``.

    Ties (costs within TIE of the best) are broken by the uniform ``u``: the ⌊u·k⌋-th of the k tied moves.
    """
    seat = st[i, kernels.TURN]
    table = kernels.table_of(st, i)
    n = moves_into(kernels.hand_of(st, i, seat), table, pending, fixed, cards, caps, keys, scr)
    if n <= 1 or kind == RANDOM:
        return min(int(u * n), n - 1)
    on_table = 0
    for c in range(52):
        on_table += table[c]
    if kind == EXPERT:
        expert_costs(st, i, players, hand_size, spades, cards, caps, n, w, costs, keys, scr)
    else:
        for m in range(n):
            costs[m] = points_now(table, on_table, cards[m], caps[m])
            if kind == CREEPER:
                v = HAND_VALUE[cards[m]]
                crept = True
                for c in range(52):
                    if caps[m, c]:
                        crept = False
                        break
                if crept:  # the highest card first, a point card before a blank one
                    costs[m] = -1000.0 - 4 * v - POINTS[cards[m]]
                else:
                    costs[m] -= 0.01 * v  # equal points: play the higher card
    best = costs[0]
    for m in range(1, n):
        best = min(best, costs[m])
    ties = 0
    for m in range(n):
        ties += costs[m] <= best + TIE
    pick = min(int(u * ties), ties - 1)
    for m in range(n):
        if costs[m] <= best + TIE:
            if pick == 0:
                return m
            pick -= 1
    return 0
