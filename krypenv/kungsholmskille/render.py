"""Text rendering of a Kungsholmskille environment: a spectator's table (all hands) and a move log.

:func:`table_text` draws one env of a :class:`~krypenv.kungsholmskille.batch.KungsholmskilleBatch`: the deal,
dealer, forehand, pot and phase; per seat its money, hand (every hand: a spectator's view,
folded hands marked), the calls it made (L5, L6, L8, L9, L11) and its cards in the tricks;
the current trick; the seat to act with its legal moves; then the last lines of the log.
:func:`moves_since` turns what happened since a known point (deal number, moves made) into
log lines, across the end of a deal (L12, L14, L15) and the start of the next one.
"""

from __future__ import annotations

import numpy as np

from krypenv.kungsholmskille.actions import action_name
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.cards import RANKS, names_from_counts
from krypenv.kungsholmskille.config import E_OFFENDER, FORFEIT, ILLEGAL_FINE, POT_OUT, TRUNCATED
from krypenv.kungsholmskille.engine import OUTCOME_NAMES, PHASE_NAMES, kernels

LOG_LINES = 14  # log lines shown under the table
_CALL = {-1: "", 0: "bud", 1: "knacka", 2: "fold", 3: "stay", 5: "show"}


def _seat_calls(row: np.ndarray, s: int) -> str:
    """The calls seat ``s`` made in the deal of ``row``, in order."""
    parts = []
    for col in (kernels.CALL1, kernels.FOLD_CALL):
        if row[col + s] >= 0:
            parts.append(_CALL[int(row[col + s])])
    ex = int(row[kernels.EXCHANGED + s])
    if ex >= 0:
        parts.append("stand" if ex == 0 else f"exchange {ex}")
    for col in (kernels.CALL2, kernels.SHOW_CALL):
        if row[col + s] >= 0:
            parts.append(_CALL[int(row[col + s])])
    return ", ".join(parts) or "-"


def deal_result_line(row: np.ndarray, cr: np.ndarray, names: list[str], deal_no: int) -> str:
    """One line on how a finished deal ended (L12, L14, L15, L21)."""
    oc = int(row[kernels.OUTCOME])
    pot = int(cr[kernels.POT])
    if oc == kernels.BUDRUNDA:
        antes = [int(cr[kernels.ANTES + s]) for s in range(len(names))]
        return f"deal {deal_no}: budrunda (L12), antes {antes} -> next pot {int(cr[kernels.POT_NEXT])}"
    if oc == kernels.SETTLED:
        shares = [int(cr[kernels.MONEY + s]) for s in range(len(names))]
        return f"deal {deal_no}: the pot's last deal ends in a budrunda: the pot of {pot} is shared out {shares} (L21)"
    w = names[int(row[kernels.WINNER])]
    if oc == kernels.WALKOVER:
        return f"deal {deal_no}: walkover (L15), {w} takes the pot of {pot}"
    sh = int(row[kernels.SHOWER])
    shown = ", ".join(f"{names[s]} {RANKS[kernels.last_card(row, s)]}" for s in range(len(names))
                      if not row[kernels.FOLDED + s])
    pen = int(cr[kernels.PENALTY])
    tail = f"; {names[sh]} pays {w} a penalty of {pen}" if pen else ""
    return f"deal {deal_no}: showdown (L14), {names[sh]} shows first ({shown}); {w} takes the pot of {pot}{tail}"


def _moves(row: np.ndarray, names: list[str], start: int) -> list[str]:
    return [f"{names[int(row[kernels.HIST_SEAT + m])]}: {action_name(int(row[kernels.HIST_ACTION + m]))}"
            for m in range(start, int(row[kernels.N_MOVES]))]


def moves_since(core: KungsholmskilleBatch, i: int, names: list[str], deal_before: int, moves_before: int) -> list[str]:
    """Log lines for everything that happened in env ``i`` since deal ``deal_before`` had ``moves_before`` moves."""
    st, cash = core.state[i], core.cash[i]
    deal_now = int(core.deal_no[i])
    lines: list[str] = []
    if deal_now == deal_before:
        lines += _moves(st, names, moves_before)
    else:
        prev, prev_cash = core.prev_state[i], core.prev_cash[i]
        if deal_now - 1 == deal_before:
            lines += _moves(prev, names, moves_before)
        else:
            lines.append(f"... deals {deal_before}-{deal_now - 2} ended in budrundor")
        lines.append(deal_result_line(prev, prev_cash, names, deal_now - 1))
        lines.append(f"deal {deal_now}: dealer {names[int(st[kernels.DEALER])]}, pot {int(cash[kernels.POT])}")
        lines += _moves(st, names, 0)
    over = int(core.over[i])
    if over == POT_OUT:
        lines.append(deal_result_line(st, cash, names, deal_now))
    elif over == TRUNCATED:
        if st[kernels.DONE]:
            lines.append(deal_result_line(st, cash, names, deal_now))
        lines.append(f"truncated after {deal_now + 1} deals (L16): "
                     f"the pot of {int(cash[kernels.POT])} belongs to nobody")
    elif over == FORFEIT:
        off = names[int(core.episode[i, E_OFFENDER])]
        lines.append(f"{off} made an illegal move and pays {ILLEGAL_FINE} to every other seat; the episode ends")
    return lines


def table_text(core: KungsholmskilleBatch, i: int, names: list[str], log: list[str]) -> str:
    """A spectator's text table of env ``i`` (see the module docstring)."""
    st = core.state[i]
    P = core.players
    over = int(core.over[i])
    phase = "episode over" if over else PHASE_NAMES[int(st[kernels.PHASE])]
    if not over and st[kernels.PHASE] == kernels.TRICKS:
        phase += f", trick {int(st[kernels.TRICK]) + 1} of 4"
    lines = [(f"Kungsholmskille · deal {int(core.deal_no[i])} of at most {core.config.max_deals} · "
              f"dealer {names[int(st[kernels.DEALER])]} · forehand {names[int(st[kernels.FOREHAND])]} · "
              f"pot {int(core.pot[i])} · {phase} · talon {42 - int(st[kernels.TPOS])} cards")]
    width = max(len(n) for n in names)
    for s in range(P):
        hand = " ".join(names_from_counts(st[kernels.HANDS + 21 * s:kernels.HANDS + 21 * s + 21])) or "-"
        n_tricks = int(st[kernels.TRICK]) + (1 if st[kernels.PHASE] == kernels.TRICKS else 0)
        tricks = " ".join(RANKS[int(c)] if c >= 0 else "." for c in
                          (st[kernels.TRICK_CARDS + kernels.MAXP * t + s] for t in range(n_tricks))) or "-"
        flag = "folded" if st[kernels.FOLDED + s] else ("to act" if not over and st[kernels.TO_ACT] == s else "")
        lines.append(f"  {names[s]:<{width}}  money {int(core.money[i, s]):+5d}  {flag:<6}  hand: {hand:<40}"
                     f" calls: {_seat_calls(st, s):<32} tricks: {tricks}")
    if not over and st[kernels.PHASE] == kernels.TRICKS and st[kernels.N_PLAYED]:
        t = int(st[kernels.TRICK])
        cur = [f"{names[s]} {RANKS[int(st[kernels.TRICK_CARDS + kernels.MAXP * t + s])]}" for s in range(P)
               if st[kernels.TRICK_CARDS + kernels.MAXP * t + s] >= 0]
        lines.append(f"  current trick: {', '.join(cur)}")
    if not over and not st[kernels.DONE]:
        s = int(st[kernels.TO_ACT])
        lines.append(f"  {names[s]} to act; legal: {', '.join(core.deals.legal_moves(i))}")
    if log:
        lines.append("  moves:")
        lines += [f"    {line}" for line in log[-LOG_LINES:]]
    if over == POT_OUT and st[kernels.DONE]:
        lines.append(f"  final: {OUTCOME_NAMES[int(st[kernels.OUTCOME])]}, money {[int(x) for x in core.money[i]]}")
    return "\n".join(lines)
