"""Kungsholmskille game records: write a deal as JSON, read it back, replay and check it (KILLE.md L17–L19).

A record is one JSON object (L18)::

    {"game": "kungsholmskille",
     "rules": {"players": 4},
     "dealer": 3,
     "pot": 8,                                   # the pot at the start, antes for it paid
     "deck": ["kille", "3", "blaren", ...],      # 42 rank names, dealing order (L4)
     "moves": ["knacka", "stay", "fold", "stay", "discard:kille", "stand", ...],
     "result": {"outcome": "showdown", "winner": 1, "shower": 0, "penalty": 8,
                "money": [-8, 16, 0, 0], "antes_next": [2, 0, 0, 2], "pot_next": 4}}

With a smaller deck (L20) ``rules`` names ``ranks`` and ``deck`` lists its 2·ranks cards; with
a pot bound (L21) ``rules`` names ``max_deals`` and the record gives ``deal``, the deal's number
within its pot (0 first), so a replay knows whether a budrunda settles the pot (outcome
``settled``).  Standard records have neither key (L23).

Moves are L17 strings; the seat of each is implied by the rules.  ``result`` is present only
once the deal is finished: a *partial* record (fewer moves, no ``result``) is valid and
replays to ``result=None``.  Unknown keys are rejected everywhere, so a misspelt key is never
silently ignored.  The recorded result must keep L18's bookkeeping (``sum(money)`` is the
pot after a walkover or showdown, 0 after a budrunda; ``pot_next`` is the pot if it stayed,
plus the antes) and must equal the result recomputed by the engine.

- :func:`record_from_deals` writes deal ``i`` of a :class:`~krypenv.kungsholmskille.engine.DealBatch` batch.
- :func:`parse_record` validates a loaded object, raising :class:`RecordError` naming what is wrong.
- :func:`check_record` parses and replays through the engine (one deal) and never raises: it
  returns a :class:`krypenv.records.ReplayOutcome` whose ``error`` is one line naming the move
  index, the seat, the move, what was wrong and the legal moves at that point; ``failed_move``
  is the index of the first illegal move; ``legal_moves`` (with ``legal=True``) lists the
  legal move strings before every move, up to and including a failing one; ``moves_played``
  counts the moves replayed and ``total_moves`` the moves in the record.
- :func:`summary` gives the readable ``krypenv replay`` lines of one checked record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from krypenv import records as common  # the checks every game's records share
from krypenv.kungsholmskille.actions import action_name, parse_move
from krypenv.kungsholmskille.cards import deck_names, parse_deck, rank_index
from krypenv.kungsholmskille.engine import MAX_POT, OUTCOME_NAMES, DealBatch
from krypenv.kungsholmskille.rules import Rules
from krypenv.records import ParsedRecord, RecordError, ReplayOutcome

GAME = "kungsholmskille"
RECORD_KEYS = ("game", "rules", "dealer", "pot", "deck", "moves", "result")
DEAL_KEY = "deal"  # only with rules.max_deals (L21)
RESULT_KEYS = ("outcome", "winner", "shower", "penalty", "money", "antes_next", "pot_next")


@dataclass(kw_only=True)
class ParsedPotRecord(ParsedRecord):
    """A validated Kungsholmskille record, whose deal starts with a pot: the shared fields (deck (42,) int8 rank
    indices in dealing order, moves action indices), the pot and the deal's number in its pot (L21)."""

    pot: int
    deal: int = 0


# --------------------------------------------------------------------------- writing
def record_from_deals(deals: DealBatch, i: int = 0) -> dict[str, Any]:
    """The record of deal ``i`` of a batch, finished or partial (``result`` only when done)."""
    if not 0 <= i < deals.n:
        raise ValueError(f"deal index {i} is outside 0..{deals.n - 1}")
    if not np.array_equal(np.bincount(deals.deck[i].astype(np.int64), minlength=21), deals.rules.deck_counts):
        raise ValueError(f"deal {i} has not been dealt (call reset first); it has no record")
    record: dict[str, Any] = {
        "game": GAME,
        "rules": deals.rules.to_dict(),
        "dealer": int(deals.dealer[i]),
        "pot": int(deals.pot[i]),
        "deck": deck_names(deals.deck[i]),
        "moves": deals.moves(i),
    }
    if deals.rules.max_deals is not None:
        record[DEAL_KEY] = int(deals.pot_deal[i])  # L21
    if deals.done[i]:
        record["result"] = deals.result(i)
    return record


# --------------------------------------------------------------------------- parsing
def _seat_or_null(res: dict[str, Any], key: str, players: int) -> None:
    v = res[key]
    if v is not None and not (common.is_int(v) and 0 <= v < players):
        raise RecordError(f"result.{key} must be a seat 0..{players - 1} or null, got {v!r}")


def _parse_result(res: Any, players: int, pot: int) -> dict[str, Any]:
    """The recorded ``result``: its shape, and L18's bookkeeping against the record's pot."""
    common.check_result_keys(res, RESULT_KEYS)
    if res["outcome"] not in OUTCOME_NAMES:
        raise RecordError(f"result.outcome must be one of {', '.join(OUTCOME_NAMES)}, got {res['outcome']!r}")
    _seat_or_null(res, "winner", players)
    _seat_or_null(res, "shower", players)
    for key in ("penalty", "pot_next"):
        if not common.is_int(res[key]) or res[key] < 0:
            raise RecordError(f"result.{key} must be a non-negative integer, got {res[key]!r}")
    common.check_seat_lists(res, ("money", "antes_next"), players)
    if any(v < 0 for v in res["antes_next"]):
        raise RecordError(f"result.antes_next must not be negative, got {res['antes_next']}")
    went_out = res["outcome"] != "budrunda"
    want = pot if went_out else 0
    if sum(res["money"]) != want:
        raise RecordError(
            f"result.money {res['money']} sums to {sum(res['money'])}: sum(money) breaks L18's bookkeeping "
            f"(it must be {want} after a {res['outcome']} with pot {pot})")
    want_next = (0 if went_out else pot) + sum(res["antes_next"])
    if res["pot_next"] != want_next:
        raise RecordError(
            f"result.pot_next {res['pot_next']} breaks L18's bookkeeping: after a {res['outcome']} it is "
            f"{'0' if went_out else pot} + sum(antes_next) {sum(res['antes_next'])} = {want_next}")
    return dict(res)


def parse_record(obj: Any) -> ParsedPotRecord:
    """Validate a loaded record; RecordError names exactly what is wrong (``.move`` for a bad move string)."""
    has_deal = isinstance(obj, dict) and DEAL_KEY in obj
    common.check_keys(obj, GAME, (*RECORD_KEYS, DEAL_KEY) if has_deal else RECORD_KEYS)
    rules = common.parse_rules(Rules, obj["rules"])
    deal = 0
    if rules.max_deals is None and has_deal:
        raise RecordError("deal is only recorded when rules give max_deals (L21)")
    if rules.max_deals is not None:
        if not has_deal:
            raise RecordError("rules give max_deals, so the record must give deal: the deal's number in its pot (L21)")
        deal = obj[DEAL_KEY]
        if not common.is_int(deal) or not 0 <= deal < rules.max_deals:
            raise RecordError(f"deal must be the deal's number in its pot, 0..{rules.max_deals - 1} (L21), got "
                              f"{deal!r}")
    dealer, pot = common.check_dealer(obj["dealer"], rules.players), obj["pot"]
    if not common.is_int(pot) or not 0 <= pot <= MAX_POT:
        raise RecordError(f"pot must be a whole number of kronor from 0 to {MAX_POT} (L3), got {pot!r}")
    names = obj["deck"]
    if not isinstance(names, list) or len(names) != rules.deck_size:
        got = f"{len(names)} cards" if isinstance(names, list) else type(names).__name__
        raise RecordError(f"deck must list all {rules.deck_size} rank names in dealing order, got {got}")
    for j, name in enumerate(names):
        try:
            rank_index(name)
        except ValueError as exc:
            raise RecordError(f"deck[{j}]: {exc}") from None
    try:
        deck = parse_deck(names, rules.ranks)
    except ValueError as exc:
        raise RecordError(f"bad deck: {exc}") from None
    if not isinstance(obj["moves"], list):
        raise RecordError(f"moves must be a list of move strings, got {type(obj['moves']).__name__}")
    moves = []
    for m, text in enumerate(obj["moves"]):
        try:
            moves.append(parse_move(text))
        except ValueError as exc:
            raise RecordError(str(exc), m) from None
    res = obj.get("result")
    result = None if res is None else _parse_result(res, rules.players, pot)
    return ParsedPotRecord(rules=rules, dealer=dealer, pot=pot, deck=deck, moves=moves, result=result,
                           deal=int(deal))


# --------------------------------------------------------------------------- replaying
def _legal_text(deals: DealBatch) -> str:
    return ", ".join(deals.legal_moves(0)) or "none"


def _move_error(deals: DealBatch, m: int, move: str, why: str) -> str:
    """One line: the move index, the seat, the move, what was wrong, the legal moves."""
    if deals.done[0]:
        n = int(deals.n_moves[0])
        outcome = OUTCOME_NAMES[int(deals.outcome[0])]
        return (f"move {m} ({move}): moves after the end of the deal, which ended in a {outcome} "
                f"with move {n - 1}; legal moves: none")
    return f"move {m} (seat {int(deals.to_act[0])}: {move}): {why}; legal moves: {_legal_text(deals)}"


def _replay(parsed: ParsedPotRecord, legal: bool, total: int) -> tuple[ReplayOutcome, DealBatch]:
    """Replay a parsed record through a one-deal engine; also return the engine where it stopped."""
    deals = DealBatch(parsed.rules, 1)
    deals.reset(decks=parsed.deck[None, :], dealers=parsed.dealer, pots=parsed.pot, deals=parsed.deal)
    out = ReplayOutcome(ok=True, total_moves=total)
    for m, a in enumerate(parsed.moves):
        if legal:
            out.legal_moves.append(deals.legal_moves(0))  # type: ignore[arg-type]
        why = deals.why_illegal(0, a)
        if why is not None:
            out.ok, out.failed_move, out.moves_played = False, m, m
            out.error = _move_error(deals, m, action_name(a), why)
            return out, deals
        deals.play_action(0, a)
    out.moves_played = len(parsed.moves)
    if not deals.done[0]:
        if parsed.result is not None:
            out.ok = False
            out.error = (f"the record has a result but the deal is unfinished after {len(parsed.moves)} moves "
                         f"(seat {int(deals.to_act[0])} is to act: {_legal_text(deals)}); "
                         "a partial record must not carry a result")
        return out, deals
    out.result = deals.result(0)
    if parsed.result is not None:
        diffs = [f"{k} {parsed.result[k]!r} recomputed {out.result[k]!r}"
                 for k in RESULT_KEYS if parsed.result[k] != out.result[k]]
        if diffs:
            out.ok, out.error = False, "the recorded result does not match: " + "; ".join(diffs)
    return out, deals


def replay(parsed: ParsedPotRecord, legal: bool = False) -> ReplayOutcome:
    """Play a parsed record through the engine, checking every move and the recorded result."""
    return _replay(parsed, legal, len(parsed.moves))[0]


def check_record(obj: Any, legal: bool = False) -> ReplayOutcome:
    """Parse and replay a loaded record; every problem becomes ``ok=False`` with a one-line message, never an
    exception."""
    try:
        try:
            parsed = parse_record(obj)
        except RecordError as exc:
            if exc.move is None:
                return ReplayOutcome(ok=False, error=str(exc))
            # a malformed move string: replay the moves before it to say where the deal stood
            out, deals = _replay(parse_record(common.record_before(obj, exc.move)), legal, len(obj["moves"]))
            if not out.ok:
                return out
            if legal:
                out.legal_moves.append(deals.legal_moves(0))  # type: ignore[arg-type]
            out.ok, out.failed_move = False, exc.move
            out.error = _move_error(deals, exc.move, repr(obj["moves"][exc.move]), str(exc))
            return out
        return replay(parsed, legal)
    except Exception as exc:  # noqa: BLE001 - a checker must answer for every input
        return ReplayOutcome(ok=False, error=f"internal error while replaying (please report): "
                                             f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------- text
def _row(label: str, values: list[int]) -> str:
    """One right-aligned table row of per-seat numbers, six characters a seat."""
    return common.seat_row(label, values, 6)


def describe_result(result: dict[str, Any], pot: int) -> str:
    """The ending in words: ``showdown: seat 1 wins 8, seat 0 pays a penalty of 8``."""
    oc = result["outcome"]
    if oc == "budrunda":
        return f"budrunda (L12): the pot of {pot} stays"
    if oc == "settled":
        return f"settled (L21): the pot of {pot} is shared out, {'/'.join(str(m) for m in result['money'])}"
    if oc == "walkover":
        return f"walkover (L15): seat {result['winner']} wins {pot}"
    text = f"showdown: seat {result['winner']} wins {pot}"
    if result["penalty"]:
        text += f", seat {result['shower']} pays a penalty of {result['penalty']}"
    return text


def summary(label: str, obj: Any, outcome: ReplayOutcome) -> list[str]:
    """The text-mode lines of ``krypenv replay`` for one checked record."""
    if not outcome.ok:
        lines = [f"{label}: error: {outcome.error}"]
    else:
        players, pot = obj["rules"]["players"], obj["pot"]
        head = f"{label}: ok: {players} players, dealer seat {obj['dealer']}, pot {pot}, {outcome.moves_played} moves"
        variant = {k: v for k, v in obj["rules"].items() if k != "players"}
        if variant:  # L20, L21: only non-standard records say so
            keys = ", ".join(f"{k} {v}" for k, v in variant.items())
            head += f" ({keys}; deal {obj[DEAL_KEY]} of its pot)" if DEAL_KEY in obj else f" ({keys})"
        res = outcome.result
        if res is None:
            lines = [f"{head}, partial deal (no result until it is finished)"]
        else:
            checked = "result matches the record" if obj.get("result") is not None else "no recorded result to compare"
            lines = [
                f"{head}, {describe_result(res, pot)}; {checked}",
                _row("seat", list(range(players))),
                _row("money", res["money"]) + f"   (sum {sum(res['money'])})",
                _row("antes next", res["antes_next"]) + f"   (pot next {res['pot_next']})",
            ]
    return lines + common.legal_lines(outcome)
