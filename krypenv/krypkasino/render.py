"""Text rendering shared by the environments: the table view and the running commentary.

The commentary follows the table talk of the rule texts: after every move the table's
sweep values are announced ("tabbe på 9", "tabbe på 6 eller dam", K13), a sweep is called
("TABBE", or "DUBBELTABBE" for two, K14), the last round is "sistan" (K7), and the end of
the deal names who takes the rest of the table and the set-aside pile (K15).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from krypenv.krypkasino.cards import card_name, names_from_counts
from krypenv.krypkasino.engine.captures import new_scratch, sweep_values_s, table_value_key

if TYPE_CHECKING:
    from krypenv.krypkasino.batch import KrypkasinoBatch

VALUE_WORDS = {11: "knekt", 12: "dam", 13: "kung", 14: "ess"}  # played values with names in the rule texts


def cards_text(counts: np.ndarray) -> str:
    """Card names of a count vector, or ``-`` if empty."""
    return " ".join(names_from_counts(counts)) or "-"


def announcement(table: np.ndarray) -> str | None:
    """The sweep call for a table, e.g. ``"tabbe på 6 eller dam"`` (K13), or None if nothing sweeps it."""
    bits = int(sweep_values_s(table_value_key(np.asarray(table, np.int8)), new_scratch()))
    values = [VALUE_WORDS.get(v, str(v)) for v in range(2, 15) if (bits >> v) & 1]
    if not values:
        return None
    return "tabbe på " + (values[0] if len(values) == 1 else ", ".join(values[:-1]) + " eller " + values[-1])


def move_lines(core: KrypkasinoBatch, i: int, names: list[str], deal_no_before: int, round_before: int) -> list[str]:
    """Commentary on the move env ``i`` just played (its last-move record), and what followed it."""
    last = core.last[i]
    who, card, gained, taker = names[int(last[0])], card_name(int(last[1])), int(last[2]), int(last[3])
    taken = last[4:]
    line = f"{who} plays {card}, " + (f"takes {cards_text(taken)}" if taken.any() else "creeps")
    if gained:
        before = names[(int(last[0]) - 1) % core.players]
        call = "DUBBELTABBE" if gained == 2 else "TABBE"
        line += f" — {call}: +{5 * gained} for {who}, −{5 * gained} for {before}"
    lines = [line]
    d = core.deals
    if taker >= 0:
        lines.append(f"{names[taker]} took last and takes the rest of the table and the set-aside pile")
    if int(core.deal_no[i]) != deal_no_before:
        lines.append(f"new deal, dealer {names[int(d.dealer[i])]}")
    elif core.over[i] or d.done[i]:
        lines.append("end of the deal")
    else:
        if int(d.round[i]) != round_before:
            lines.append(f"round {int(d.round[i]) + 1}" + (": sistan!" if d.pos[i] >= d.deck_len[i] else ""))
        call = announcement(d.table[i])
        if call:
            lines.append(call)
    return lines


def history_lines(core: KrypkasinoBatch, i: int, names: list[str], first_move: int,
                  tabbes_before: np.ndarray) -> list[str]:
    """Commentary on the moves from ``first_move`` on in env ``i``'s current deal, from the engine's history.

    Every seat holds as many cards as the others in every round, so move m was played by seat
    ``(dealer + 1 + m) mod P`` (K9).  Tabbes are read off the change of the tabbe counts.
    """
    d, P = core.deals, core.players
    lines = []
    for m in range(first_move, int(d.n_moves[i])):
        seat = (int(d.dealer[i]) + 1 + m) % P
        taken = d.move_capture(i, m)
        card = card_name(int(d.hist_card[i, m]))
        lines.append(f"{names[seat]} plays {card}, " + (f"takes {cards_text(taken)}" if taken.any() else "creeps"))
    gained = d.tabbes[i].astype(np.int64) - tabbes_before
    for seat in np.flatnonzero(gained > 0):
        before = names[(int(seat) - 1) % P]
        lines.append(f"{names[int(seat)]}: {int(gained[seat])} × TABBE (+5 each; −5 each for {before})")
    if d.done[i]:
        lines.append(f"{names[int(d.taker[i])]} took last and takes the rest of the table and the set-aside pile")
    return lines


def table_text(core: KrypkasinoBatch, i: int, names: list[str], log: list[str], deals: int) -> str:
    """A readable table of env ``i``: deal, round, table, set-aside pile, the hand to play, scores, recent moves."""
    d, rules = core.deals, core.rules
    sistan = " (sistan)" if d.pos[i] >= d.deck_len[i] else ""
    lines = [
        (f"Krypkasino — deal {int(core.deal_no[i]) + 1}/{deals}, round {int(d.round[i]) + 1}/{rules.rounds}{sistan}, "
         f"deck {int(d.deck_len[i]) - int(d.pos[i])} cards, dealer {names[int(d.dealer[i])]}"),
        f"table:     {cards_text(d.table[i])}",
        f"set aside: {cards_text(d.aside[i])}",
    ]
    if not (core.over[i] or d.done[i]):
        seat = int(d.turn[i])
        lines.append(f"to play:   {names[seat]}, hand {cards_text(d.hands[i, seat])}")
        pending = int(core.choice[i, 0])
        if pending >= 0:
            lines.append(f"choosing a capture for {card_name(pending)}; fixed so far: {cards_text(core.choice[i, 1:])}")
    scores = d.scores()[i] + core.totals[i] + core.penalty[i]
    points = d.card_points()[i]
    width = max(10, *(len(n) + 2 for n in names))
    lines.append(f"{'seat':<{width}}{'hand':>5}{'points':>8}{'tabbes':>8}{'score':>7}")
    for s in range(core.players):
        lines.append(f"{names[s]:<{width}}{int(d.hands[i, s].sum()):>5}{int(points[s]):>8}"
                     f"{int(d.tabbes[i, s]):>8}{int(scores[s]):>7}")
    lines.extend("  " + line for line in log[-4:])
    return "\n".join(lines)
