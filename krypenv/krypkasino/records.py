"""Game records: write a deal as JSON, read it back, and replay it move by move.

A *game record* (RULES.md, "Game records") is one JSON object::

    {"game": "krypkasino",
     "rules": {"players": 3, "teams": null, "two_player_deal": "6+4",
               "set_aside": "court", "last_capture_point": false},
     "dealer": 2,
     "deck": ["7H", "10D", "QS", ...],                      # all 104 cards, dealing order (K6)
     "moves": [{"card": "9S", "capture": ["4H", "5C"]},    # the table cards taken
               {"card": "3D", "capture": []}, ...],        # [] = the card creeps (K12)
     "result": {"scores": [12, 25, 5], "card_points": [17, 20, 5], "tabbes": [1, 0, 0]}}

A variant deck or deal (RULES.md K20–K22) adds its keys to ``rules`` (``ranks``, ``suits``,
``copies``, ``hand``, ``table``, only those that differ from the standard game) and lists
its own cards in ``deck``; a standard record has none of them and reads exactly as before.
The seat of each move is implied by turn order.  ``result`` is present only once the deal
is finished (a partial record simply has fewer moves); ``tabbes`` counts a dubbeltabbe as
two (K14).  Unknown keys are rejected, so a misspelt ``result`` is never silently ignored.

- :func:`record_from_deals` writes deal ``i`` of a :class:`~krypenv.krypkasino.engine.DealBatch` batch.
- :func:`parse_record` validates a loaded object and raises :class:`RecordError` naming
  exactly what is wrong; :func:`replay` plays a parsed record through the engine and checks
  every move (K9–K13) and the result (K14–K17); :func:`check_record` does both and never raises.
- :func:`summary` is the text that ``krypenv replay`` prints for a checked record.

These are the functions :mod:`krypenv.records` dispatches to for records whose ``game`` is
``"krypkasino"``; storing records in files (``write_jsonl``, ``iter_records``) and the
:class:`~krypenv.records.ReplayOutcome` are shared by every game and live there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from krypenv import records as common  # the checks every game's records share
from krypenv.krypkasino.cards import N_CODES, card_code, card_name, names_from_counts, parse_deck
from krypenv.krypkasino.engine.kernels import NOT_MAXIMAL
from krypenv.krypkasino.engine.state import MOVE_ERRORS, DealBatch
from krypenv.krypkasino.rules import Rules
from krypenv.records import ParsedRecord, RecordError, ReplayOutcome

GAME = "krypkasino"
RECORD_KEYS = ("game", "rules", "dealer", "deck", "moves", "result")
RESULT_KEYS = ("scores", "card_points", "tabbes")
# A ParsedRecord (krypenv.records) of Krypkasino: rules a Rules, deck (D,) int8 card codes in dealing
# order, moves (played card code, (52,) int8 capture counts), result the recorded scores, card points, tabbes.


# --------------------------------------------------------------------------- writing
def record_from_deals(deals: DealBatch, i: int = 0) -> dict[str, Any]:
    """The game record of deal ``i`` of a batch, finished or partial (``result`` only when done)."""
    if not 0 <= i < deals.n:
        raise ValueError(f"deal index {i} is outside 0..{deals.n - 1}")
    deck = deals.deck[i]
    if not np.array_equal(np.bincount(deck.astype(np.int64) % N_CODES, minlength=N_CODES), deals.rules.deck_counts):
        deck_name = "two full decks" if deals.rules.is_standard else "this variant's deck (K20)"
        raise ValueError(f"deal {i} was not dealt from {deck_name} (a hand-built position?); it has no record")
    moves = []
    for m in range(int(deals.n_moves[i])):
        moves.append(move_json(int(deals.hist_card[i, m]), deals.move_capture(i, m)))
    record: dict[str, Any] = {
        "game": GAME,
        "rules": deals.rules.to_dict(),
        "dealer": int(deals.dealer[i]),
        "deck": [card_name(int(c)) for c in deck],
        "moves": moves,
    }
    if deals.done[i]:
        record["result"] = _result_of(deals, i)
    return record


def _result_of(deals: DealBatch, i: int) -> dict[str, list[int]]:
    """The ``result`` object of a finished deal ``i``."""
    return {
        "scores": [int(x) for x in deals.scores()[i]],
        "card_points": [int(x) for x in deals.card_points()[i]],
        "tabbes": [int(x) for x in deals.tabbes[i]],
    }


# --------------------------------------------------------------------------- parsing
def _code(name: Any, where: str, move: int | None = None) -> int:
    """Card code of a record's card name, RecordError naming the place otherwise."""
    try:
        return card_code(name)
    except ValueError as exc:
        raise RecordError(f"{where}: {exc}", move) from None


def _parse_move(m: int, mv: Any, rules: Rules) -> tuple[int, np.ndarray]:
    """One move ``{"card": name, "capture": [names]}`` as (code, capture counts)."""
    if not isinstance(mv, dict) or set(mv) != {"card", "capture"}:
        got = sorted(mv) if isinstance(mv, dict) else type(mv).__name__
        raise RecordError(f"move {m}: must be an object with exactly the keys card and capture, got {got}", m)
    card = _code(mv["card"], f"move {m}: card", m)
    cap_names = mv["capture"]
    if not isinstance(cap_names, list):
        raise RecordError(f"move {m}: capture must be a list of card names, got {type(cap_names).__name__}", m)
    counts = np.zeros(N_CODES, np.int64)
    for j, name in enumerate(cap_names):
        counts[_code(name, f"move {m}: capture[{j}]", m)] += 1
    over = [f"{card_name(c)} x{int(counts[c])}" for c in range(N_CODES) if counts[c] > rules.deck_counts[c]]
    if over:
        have = "each card exists only twice (K1)" if rules.is_standard else "the deck has fewer (K20)"
        raise RecordError(f"move {m}: capture lists {', '.join(over)}, but {have}", m)
    return card, counts.astype(np.int8)


def _parse_result(res: Any, players: int) -> dict[str, list[int]]:
    """The recorded ``result`` object, checked for keys and per-seat integer lists."""
    common.check_result_keys(res, RESULT_KEYS)
    common.check_seat_lists(res, RESULT_KEYS, players)
    return {key: list(res[key]) for key in RESULT_KEYS}


def parse_record(obj: Any) -> ParsedRecord:
    """Validate a loaded game record; RecordError names exactly what is wrong."""
    common.check_keys(obj, GAME, RECORD_KEYS)
    rules = common.parse_rules(Rules, obj["rules"])
    dealer = common.check_dealer(obj["dealer"], rules.players)
    names = obj["deck"]
    if not isinstance(names, list) or len(names) != rules.deck_size:
        got = f"{len(names)} cards" if isinstance(names, list) else type(names).__name__
        raise RecordError(f"deck must list all {rules.deck_size} cards in dealing order, got {got}")
    for j, name in enumerate(names):
        _code(name, f"deck[{j}]")
    try:
        deck = parse_deck(names, None if rules.is_standard else rules.deck_counts)
    except ValueError as exc:
        raise RecordError(f"bad deck: {exc}") from None
    if not isinstance(obj["moves"], list):
        raise RecordError(f"moves must be a list, got {type(obj['moves']).__name__}")
    moves = [_parse_move(m, mv, rules) for m, mv in enumerate(obj["moves"])]
    res = obj.get("result")
    result = None if res is None else _parse_result(res, rules.players)
    return ParsedRecord(rules=rules, dealer=dealer, deck=deck, moves=moves, result=result)


# --------------------------------------------------------------------------- replaying
def move_json(card: int, cap: np.ndarray) -> dict[str, Any]:
    """A move as the record/JSON object ``{"card": name, "capture": [names]}``."""
    return {"card": card_name(card), "capture": names_from_counts(cap)}


def _cards(counts: np.ndarray) -> str:
    """Space-separated card names of a count vector, or ``-``."""
    return " ".join(names_from_counts(counts)) or "-"


def describe_move(card: int, cap: np.ndarray) -> str:
    """A move in words: ``8H takes AC 7C`` or ``3D creeps``."""
    taken = names_from_counts(cap)
    return f"{card_name(card)} takes {' '.join(taken)}" if taken else f"{card_name(card)} creeps"


def describe_legal(moves: list[tuple[int, np.ndarray]]) -> str:
    """The legal moves compactly: ``8H takes AC 7C | 3D creeps``, or ``none``."""
    return " | ".join(describe_move(c, cap) for c, cap in moves) or "none"


def _context(deals: DealBatch, legal: list[tuple[int, np.ndarray]]) -> str:
    """Hand, table and legal moves of the seat to play, for an error message."""
    if deals.done[0]:
        return "legal moves: none (the deal is over)"
    seat = int(deals.turn[0])
    return (
        f"seat {seat} holds {_cards(deals.hands[0, seat])}; table: {_cards(deals.table[0])}; "
        f"legal moves: {describe_legal(legal)}"
    )


def _start(parsed: ParsedRecord) -> DealBatch:
    """A one-deal batch dealt from the record's deck and dealer."""
    deals = DealBatch(parsed.rules, 1)
    deals.reset(decks=parsed.deck[None, :], dealers=np.array([parsed.dealer], np.int64))
    return deals


def _replay(parsed: ParsedRecord, legal: bool) -> tuple[ReplayOutcome, DealBatch]:
    """Replay the record; also return the engine state where it stopped."""
    deals = _start(parsed)
    out = ReplayOutcome(ok=True, total_moves=parsed.rules.decisions_per_deal)
    for m, (card, cap) in enumerate(parsed.moves):
        moves = deals.legal_moves(0)
        if legal:
            out.legal_moves.append([move_json(c, k) for c, k in moves])
        seat = int(deals.turn[0])
        status = int(deals.step(np.array([card]), cap[None, :])[0])
        if status:
            why = MOVE_ERRORS.get(status, f"engine status {status}")
            if status == NOT_MAXIMAL and not cap.any():  # K12: creeping is only allowed without a capture
                why = f"{card_name(card)} creeps although it can capture ({why})"
            who = "after the deal ended" if deals.done[0] else f"seat {seat}"
            out.ok, out.failed_move = False, m
            out.error = f"move {m} ({who}: {describe_move(card, cap)}): {why}; {_context(deals, moves)}"
            out.moves_played = m
            return out, deals
    out.moves_played = len(parsed.moves)
    if deals.done[0]:
        out.result = _result_of(deals, 0)
        out.taker = int(deals.taker[0])
        if parsed.rules.teams is not None:
            out.team_scores = [int(x) for x in deals.team_scores()[0]]
        if parsed.result is not None:
            diffs = [
                f"result.{k} differs: expected {out.result[k]}, recorded {parsed.result[k]}"
                for k in RESULT_KEYS
                if out.result[k] != parsed.result[k]
            ]
            if diffs:
                out.ok, out.error = False, "; ".join(diffs)
    elif parsed.result is not None:
        left = parsed.rules.decisions_per_deal - len(parsed.moves)
        out.ok = False
        out.error = (
            f"the record has a result but the deal is unfinished after {len(parsed.moves)} moves "
            f"({left} more cards to play); a partial record must not carry a result"
        )
    return out, deals


def replay(parsed: ParsedRecord, legal: bool = False) -> ReplayOutcome:
    """Play a parsed record through the engine, checking every move and the recorded result."""
    return _replay(parsed, legal)[0]


def check_record(obj: Any, legal: bool = False) -> ReplayOutcome:
    """Parse and replay a loaded record; every problem becomes ``ok=False`` with a message, never an exception."""
    try:
        parsed = parse_record(obj)
    except RecordError as exc:
        if exc.move is None:
            return ReplayOutcome(ok=False, error=str(exc))
        # A malformed move: replay the moves before it to report where the deal stood.
        out, deals = _replay(parse_record(common.record_before(obj, exc.move)), legal)
        if not out.ok:
            return out
        moves = deals.legal_moves(0)
        if legal:
            out.legal_moves.append([move_json(c, k) for c, k in moves])
        out.ok, out.failed_move, out.error = False, exc.move, f"{exc}; {_context(deals, moves)}"
        return out
    return replay(parsed, legal)


# --------------------------------------------------------------------------- the text of krypenv replay
def _row(label: str, values: list[int]) -> str:
    """One right-aligned table row of per-seat numbers, five characters a seat."""
    return common.seat_row(label, values, 5)


def _move_text(mv: dict[str, Any]) -> str:
    """A JSON move in words: ``8H takes AC 7C`` or ``3D creeps``."""
    return f"{mv['card']} takes {' '.join(mv['capture'])}" if mv["capture"] else f"{mv['card']} creeps"


def summary(label: str, obj: Any, out: ReplayOutcome) -> list[str]:
    """The text-mode lines of one checked record."""
    if not out.ok:
        lines = [f"{label}: error: {out.error}"]
    else:
        rules = obj["rules"]
        players = rules.get("players", 3)
        moves = f"{out.moves_played} of {out.total_moves} moves"
        head = f"{label}: ok: {players} players, dealer seat {obj['dealer']}, {moves}"
        preset = Rules.from_dict(rules).preset_name
        if preset != "standard":
            head = f"{label}: ok: {players} players, preset {preset}, dealer seat {obj['dealer']}, {moves}"
        if out.result is None:
            lines = [f"{head}, partial deal (no result until it is finished)"]
        else:
            checked = "result matches the record" if obj.get("result") is not None else "no recorded result to compare"
            scores = out.result["scores"]
            lines = [
                f"{head}, {checked}",
                _row("seat", list(range(players))),
                _row("score", scores) + f"   (sum {sum(scores)})",
                _row("card points", out.result["card_points"]),
                _row("tabbes", out.result["tabbes"]),
            ]
            if out.team_scores is not None:
                lines.append(f"  team scores {out.team_scores} for teams {rules['teams']}")
            lines.append(f"  seat {out.taker} took the table rest and the set-aside pile (K15)")
    return lines + common.legal_lines(out, _move_text)
