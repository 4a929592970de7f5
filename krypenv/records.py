"""Game records of every game: read and write them, and check each by the rules of the game it names.

A *game record* is one JSON object per deal whose ``"game"`` key names its game; the rest of
the object is that game's format (Krypkasino: RULES.md, "Game records", and
:mod:`krypenv.krypkasino.records`).  A file holds either one JSON record (possibly
pretty-printed over many lines) or JSON Lines, one record per line, of any games mixed:

- :func:`write_jsonl` stores records; :func:`iter_records` (a file) and :func:`iter_text_records`
  (a file's text, e.g. an upload) load them one at a time (:class:`RawRecord`: where a record
  starts, ``path:line``, and its object or why it failed to load).
- :func:`check_record` dispatches on ``obj["game"]`` to that game's records module and returns
  its :class:`ReplayOutcome`; it never raises.  A record that is not an object, or names no
  game or an unknown one, is an error outcome that lists the known games.
- :func:`summary` gives the text-mode lines of ``krypenv replay`` for a checked record, from
  the game's own ``summary``.

**Reading is bounded, whatever the input.**  Records come one at a time and a file is read a
line at a time: memory is about one line, not the file (but for one pretty-printed record,
below).  A line over :data:`MAX_LINE` (1 MiB) is an error for that record and is never held
whole; so is a line not UTF-8, or JSON nested too deeply, or an integer too long for Python
(``bad JSON: ...``).  Lines end with LF (or CR LF).  The format is told as before:

- the first non-blank line is a JSON value on its own (or is too long or not UTF-8), or is the
  only non-blank line: JSON Lines, one record per non-blank line;
- otherwise the text from that line on is read whole, up to :data:`MAX_TEXT` (16 MiB; a
  pretty-printed record is about 8 KB), and is the one record when it parses;
- when it does not parse, or is bigger than that: JSON Lines if any later line is a JSON
  object with a ``game`` key, else one bad record at the first line (whose error names the
  limit when the file is over it; a pipe over it is not read twice to look).

An error message that quotes the record is printed cut to :data:`MAX_MESSAGE` characters
(:func:`clip`).

**The games.**  The registry of games (:mod:`krypenv.games`) names each game's records module,
its ``records`` part, imported on first use (so this module imports no game).  A game plugs in
with its declaration there; its records module provides::

    GAME: str                                                       # the record's "game" value
    check_record(obj: Any, legal: bool = False) -> ReplayOutcome    # parse, replay, compare; never raises
    summary(label: str, obj: Any, outcome: ReplayOutcome) -> list[str]   # the text mode's lines

``check_record`` receives only objects whose ``game`` is its own.  What every game's records module
shares is written once here: :class:`RecordError`, :class:`ParsedRecord` (a game adds its own fields),
the checks of a record's keys, rules, dealer and result (:func:`check_keys`, :func:`parse_rules`,
:func:`check_dealer`, :func:`check_result_keys`, :func:`check_seat_lists`), :func:`record_before` (a
malformed move's prefix) and the text pieces :func:`seat_row` and :func:`legal_lines`.  With ``legal`` the outcome
lists, per move, the legal moves before it in the game's JSON form.  ``outcome.to_json()``
is the ``krypenv replay --json`` object, the same five keys for every game.
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from krypenv.games import GAMES

__all__ = ["MAX_LINE", "MAX_MESSAGE", "MAX_TEXT", "ParsedRecord", "RawRecord", "RecordError", "ReplayOutcome",
           "check_dealer", "check_keys", "check_record", "check_result_keys", "check_seat_lists", "clip", "is_int",
           "iter_records", "iter_text_records", "legal_lines", "parse_rules", "record_before", "seat_row", "summary",
           "write_jsonl"]

MAX_LINE = 2**20  # bytes of one line of JSON Lines; a longer line is an error of its own, never read whole
MAX_TEXT = 16 * 2**20  # bytes of a file read whole as one pretty-printed record
MAX_MESSAGE = 4000  # characters of one error message as printed (it may quote the record)


@dataclass
class ReplayOutcome:
    """What replaying one record found; :meth:`to_json` is the ``krypenv replay --json`` object."""

    ok: bool
    error: str | None = None
    failed_move: int | None = None
    result: dict[str, list[int]] | None = None
    legal_moves: list[list[Any]] = field(default_factory=list)  # per move, the legal moves in the game's JSON form
    moves_played: int = 0
    total_moves: int | None = None  # moves in a full deal, once the rules are known
    taker: int | None = None  # seat that took the table rest and set-aside pile (K15)
    team_scores: list[int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The five-key JSON object of ``krypenv replay --json``."""
        return {
            "ok": self.ok,
            "error": self.error,
            "failed_move": self.failed_move,
            "result": self.result,
            "legal_moves": self.legal_moves,
        }


# --------------------------------------------------------------------------- what every game's records module shares
class RecordError(ValueError):
    """A malformed game record; ``move`` is the index of the offending move, if any."""

    def __init__(self, message: str, move: int | None = None) -> None:
        super().__init__(message)
        self.move = move


@dataclass
class ParsedRecord:
    """A validated game record: rules, dealer, deck, moves and the optional recorded result (a game adds its own)."""

    rules: Any  # the game's Rules
    dealer: int
    deck: Any  # the game's deck in dealing order (an int8 array of card or rank codes)
    moves: list[Any]  # the game's moves, parsed
    result: dict[str, Any] | None = None


def is_int(x: Any) -> bool:
    """True for a JSON integer (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool)


def check_keys(obj: Any, game: str, keys: tuple[str, ...], optional: tuple[str, ...] = ("result",)) -> None:
    """RecordError unless ``obj`` is an object with exactly ``keys`` (``optional`` may be absent) and names ``game``."""
    if not isinstance(obj, dict):
        raise RecordError(f"a record must be a JSON object, got {type(obj).__name__}")
    missing = [k for k in keys if k not in obj and k not in optional]
    if missing:
        raise RecordError(f"missing key(s) {', '.join(missing)}; a record has {', '.join(keys)}")
    unknown = sorted(str(k) for k in set(obj) - set(keys))
    if unknown:
        raise RecordError(f"unknown key(s) {', '.join(unknown)}; a record has {', '.join(keys)}")
    if obj["game"] != game:
        raise RecordError(f"game must be {game!r}, got {obj['game']!r}")


def parse_rules(rules_class: Any, value: Any) -> Any:
    """The record's ``rules`` object as the game's ``Rules`` (``rules_class.from_dict``); RecordError otherwise."""
    try:
        return rules_class.from_dict(value)
    except (ValueError, TypeError) as exc:
        raise RecordError(f"bad rules: {exc}") from None


def check_dealer(dealer: Any, players: int) -> int:
    """The record's ``dealer``, a seat of the table; RecordError otherwise."""
    if not is_int(dealer) or not 0 <= dealer < players:
        raise RecordError(f"dealer must be a seat 0..{players - 1}, got {dealer!r}")
    return int(dealer)


def check_result_keys(res: Any, keys: tuple[str, ...]) -> None:
    """RecordError unless the recorded ``result`` is an object with exactly ``keys``."""
    if not isinstance(res, dict):
        raise RecordError(f"result must be an object or absent, got {type(res).__name__}")
    missing, extra = sorted(set(keys) - set(res)), sorted(str(k) for k in set(res) - set(keys))
    if missing or extra:
        parts = (([f"missing {', '.join(missing)}"] if missing else [])
                 + ([f"unknown {', '.join(extra)}"] if extra else []))
        raise RecordError(f"result must have exactly the keys {', '.join(keys)}: {'; '.join(parts)}")


def check_seat_lists(res: dict[str, Any], keys: tuple[str, ...], players: int) -> None:
    """RecordError unless each of the result's ``keys`` is a list of one integer per seat."""
    for key in keys:
        vals = res[key]
        if not isinstance(vals, list) or len(vals) != players or not all(is_int(v) for v in vals):
            raise RecordError(f"result.{key} must be a list of {players} integers (one per seat), got {vals!r}")


def record_before(obj: dict[str, Any], move: int) -> dict[str, Any]:
    """The record cut before move ``move``, without a result: where a malformed move is replayed up to."""
    prefix = {k: v for k, v in obj.items() if k != "result"}
    prefix["moves"] = obj["moves"][:move]
    return prefix


def seat_row(label: str, values: list[int], width: int) -> str:
    """One right-aligned row of per-seat numbers for ``krypenv replay``'s text."""
    return f"  {label:<12}" + "".join(f"{v:>{width}}" for v in values)


def legal_lines(outcome: ReplayOutcome, text: Any = str) -> list[str]:
    """The text mode's lines of ``--legal``: per move, the legal moves before it (``text`` puts one in words)."""
    return [f"  legal before move {m} ({len(legal)}): {' | '.join(text(mv) for mv in legal) or 'none'}"
            for m, legal in enumerate(outcome.legal_moves)]


# --------------------------------------------------------------------------- dispatch by game
def _game_of(obj: Any) -> str | None:
    """The registered game a loaded record names, or None."""
    if isinstance(obj, dict) and isinstance(obj.get("game"), str) and obj["game"] in GAMES:
        return obj["game"]
    return None


def check_record(obj: Any, legal: bool = False) -> ReplayOutcome:
    """Check a loaded record by the rules of the game it names; every problem is ``ok=False`` with a message."""
    if not isinstance(obj, dict):
        return ReplayOutcome(ok=False, error=f"a record must be a JSON object, got {type(obj).__name__}")
    game = _game_of(obj)
    if game is None:
        known = ", ".join(GAMES)
        what = "missing key game" if "game" not in obj else f"unknown game {obj['game']!r}"
        return ReplayOutcome(ok=False, error=f"{what}; known games: {known}")
    return GAMES[game].part("records").check_record(obj, legal)


def summary(label: str, obj: Any, outcome: ReplayOutcome) -> list[str]:
    """The text-mode lines of ``krypenv replay`` for a checked record (``label``: its ``file:line``)."""
    game = _game_of(obj)
    if game is not None:
        return GAMES[game].part("records").summary(label, obj, outcome)
    return [f"{label}: error: {outcome.error}"]  # no game to describe it: it failed before any move


# --------------------------------------------------------------------------- files
@dataclass
class RawRecord:
    """One record read from a file: where it starts, and the loaded object or why it failed to load."""

    label: str  # "path:line"
    obj: Any = None
    error: str | None = None


def write_jsonl(records: Iterable[dict[str, Any]], path: str | Path) -> None:
    """Write records as JSON Lines, one record per line."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(rec) + "\n" for rec in records)


def clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut to ``limit`` characters, saying how many were left out (errors can quote hostile input)."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message) - limit} more characters)"


def _size(n: int) -> str:
    """A limit in words: ``1 MiB``, ``100 bytes``."""
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"


def _loads(text: str | bytes, line: int = 1) -> tuple[Any, str | None]:
    """Load JSON text (bytes: UTF-8) starting on file line ``line``: (object, None), or (None, error message).

    Never raises for any input: deep nesting, huge integers and bytes not UTF-8 are error messages too.
    """
    try:
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text), None
    except RecursionError:  # json's answer to "[[[[...": not a JSONDecodeError
        return None, "bad JSON: nested too deeply"
    except json.JSONDecodeError as exc:
        if line > 1:  # the position in the file, not in the text from its first non-blank line
            return None, f"bad JSON: {exc.msg}: line {exc.lineno + line - 1} column {exc.colno}"
        return None, f"bad JSON: {exc}"
    except ValueError as exc:  # not UTF-8, an integer over sys.get_int_max_str_digits() digits
        return None, f"bad JSON: {exc}"


def _looks_like_record(line: str) -> bool:
    """True if a line on its own is a JSON object with a ``game`` key."""
    obj, err = _loads(line)
    return err is None and isinstance(obj, dict) and "game" in obj


def _lines(fh: BinaryIO, n: int = 0) -> Iterator[tuple[int, str | None, str | None]]:
    """The non-blank lines from ``fh``'s position, numbered after ``n``: (number, text, None) or (number, None, why).

    Reads at most :data:`MAX_LINE` + 1 bytes at a time: a longer line, or one not UTF-8, gives only its reason.
    """
    while raw := fh.readline(MAX_LINE + 1):
        n += 1
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # skip the rest of the line, a bounded piece at a time
                raw = fh.readline(MAX_LINE)
            yield n, None, f"the line is longer than the limit of {_size(MAX_LINE)}"
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield n, None, f"not UTF-8 text: {exc}"
            continue
        if line.strip():
            yield n, line, None


def _json_lines(lines: Iterator[tuple[int, str | None, str | None]], name: str) -> Iterator[RawRecord]:
    """One record per line."""
    for n, line, why in lines:
        obj, err = (None, why) if line is None else _loads(line)
        yield RawRecord(f"{name}:{n}", obj, err)


def _records(fh: BinaryIO, name: str) -> Iterator[RawRecord]:
    """The records of a binary stream holding one JSON record or JSON Lines, as :func:`iter_records` tells."""
    lines = _lines(fh)
    first_n, first, why = next(lines, (0, None, None))
    if not first_n:
        return  # no non-blank line
    first_err = why if first is None else _loads(first)[1]
    if first is None or first_err is None:  # JSON Lines (a first line too long or not UTF-8 is only its error)
        yield from _json_lines(itertools.chain([(first_n, first, why)], lines), name)
        return
    head = first.encode("utf-8")  # the exact bytes of the first line: it decoded strictly
    data: bytes | None = None
    if fh.seekable():  # read from where the first line starts (one copy), unless over the limit
        at = fh.tell() - len(head)
        size = fh.seek(0, io.SEEK_END) - at
        fh.seek(at)
        data = fh.read(size + 1) if size <= MAX_TEXT else None
    else:
        at, data = 0, head + fh.read(MAX_TEXT + 1 - len(head))
    if data is not None and len(data) <= MAX_TEXT:  # the text from the first line on: one pretty-printed record?
        obj, whole_err = _loads(data, first_n)
        if whole_err is None:
            yield RawRecord(f"{name}:{first_n}", obj)
            return
        if not fh.seekable():  # a pipe's lines are read again from memory, a file's from the file
            fh, at = io.BytesIO(data), 0
    else:
        whole_err = f"{first_err}; as one pretty-printed record the file is over the limit of {_size(MAX_TEXT)}"
        if not fh.seekable():  # a pipe cannot be read twice
            yield RawRecord(f"{name}:{first_n}", error=whole_err)
            return
    data = None  # the lines are read one at a time again
    fh.seek(at)
    later = _lines(fh, first_n - 1)
    next(later)  # the first line itself
    others = jsonl = False
    for _, line, _ in later:
        others = True
        if line is not None and _looks_like_record(line):
            jsonl = True
            break
    if others and not jsonl:  # one pretty-printed record that does not parse
        yield RawRecord(f"{name}:{first_n}", error=whole_err)
        return
    fh.seek(at)
    yield from _json_lines(_lines(fh, first_n - 1), name)


def iter_records(path: str | Path) -> Iterator[RawRecord]:
    """The records of a file holding one JSON record or JSON Lines, one at a time; OSError if it cannot be read.

    Blank lines are ignored; bad JSON on one line is an error for that record only.  Memory is bounded as the
    module tells (:data:`MAX_LINE`, :data:`MAX_TEXT`); an OSError can come after some records.
    """
    with open(path, "rb") as fh:
        yield from _records(fh, str(path))


def iter_text_records(text: str, name: str) -> Iterator[RawRecord]:
    """The records of a records file's text (e.g. an upload), as :func:`iter_records`, labelled ``name:line``."""
    yield from _records(io.BytesIO(text.encode("utf-8", "surrogatepass")), name)
