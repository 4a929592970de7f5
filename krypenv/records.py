"""Game records of every game: read and write them, and check each by the rules of the game it names.

A *game record* is one JSON object per deal whose ``"game"`` key names its game; the rest of
the object is that game's format (Krypkasino: RULES.md, "Game records", and
:mod:`krypenv.krypkasino.records`).  A file holds either one JSON record (possibly
pretty-printed over many lines) or JSON Lines, one record per line, of any games mixed:

- :func:`write_jsonl` / :func:`read_records` store and load records (:class:`RawRecord`:
  where a record starts, and its object or why it failed to load).
- :func:`check_record` dispatches on ``obj["game"]`` to that game's records module and returns
  its :class:`ReplayOutcome`; it never raises.  A record that is not an object, or names no
  game or an unknown one, is an error outcome that lists the known games.
- :func:`summary` gives the text-mode lines of ``krypenv replay`` for a checked record, from
  the game's own ``summary``.

**The game registry.**  :data:`GAME_RECORDS` maps each game name to the module path of its
records module, imported on first use (so this module imports no game).  A game plugs in by
adding one entry; its module provides::

    GAME: str                                                       # the record's "game" value
    check_record(obj: Any, legal: bool = False) -> ReplayOutcome    # parse, replay, compare; never raises
    summary(label: str, obj: Any, outcome: ReplayOutcome) -> list[str]   # the text mode's lines

``check_record`` receives only objects whose ``game`` is its own.  With ``legal`` the outcome
lists, per move, the legal moves before it in the game's JSON form.  ``outcome.to_json()``
is the ``krypenv replay --json`` object, the same five keys for every game.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["GAME_RECORDS", "RawRecord", "ReplayOutcome", "check_record", "game_records", "known_games",
           "read_records", "summary", "write_jsonl"]

GAME_RECORDS: dict[str, str] = {  # game name -> module path of its records module (loaded lazily)
    "krypkasino": "krypenv.krypkasino.records",
    "kungsholmskille": "krypenv.kungsholmskille.records",
}


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


# --------------------------------------------------------------------------- dispatch by game
def known_games() -> list[str]:
    """The games whose records can be checked, sorted."""
    return sorted(GAME_RECORDS)


def game_records(game: str) -> ModuleType:
    """The records module of ``game`` (imported on first use); ValueError naming the known games otherwise."""
    if not isinstance(game, str) or game not in GAME_RECORDS:
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(known_games())}")
    return importlib.import_module(GAME_RECORDS[game])  # the registry's lazy load: no game at import time


def _game_of(obj: Any) -> str | None:
    """The known game a loaded record names, or None."""
    if isinstance(obj, dict) and isinstance(obj.get("game"), str) and obj["game"] in GAME_RECORDS:
        return obj["game"]
    return None


def check_record(obj: Any, legal: bool = False) -> ReplayOutcome:
    """Check a loaded record by the rules of the game it names; every problem is ``ok=False`` with a message."""
    if not isinstance(obj, dict):
        return ReplayOutcome(ok=False, error=f"a record must be a JSON object, got {type(obj).__name__}")
    game = _game_of(obj)
    if game is None:
        known = ", ".join(known_games())
        what = "missing key game" if "game" not in obj else f"unknown game {obj['game']!r}"
        return ReplayOutcome(ok=False, error=f"{what}; known games: {known}")
    return game_records(game).check_record(obj, legal)


def summary(label: str, obj: Any, outcome: ReplayOutcome) -> list[str]:
    """The text-mode lines of ``krypenv replay`` for a checked record (``label``: its ``file:line``)."""
    game = _game_of(obj)
    if game is not None:
        return game_records(game).summary(label, obj, outcome)
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
        for rec in records:
            fh.write(json.dumps(rec) + "\n")


def _loads(text: str) -> tuple[Any, str | None]:
    """Load JSON text: (object, None), or (None, error message)."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"bad JSON: {exc}"


def _looks_like_record(line: str) -> bool:
    """True if a line on its own is a JSON object with a ``game`` key."""
    obj, err = _loads(line)
    return err is None and isinstance(obj, dict) and "game" in obj


def read_records(path: str | Path) -> list[RawRecord]:
    """Records of a file holding one JSON record or JSON Lines; OSError/UnicodeDecodeError if unreadable.

    Blank lines are ignored; bad JSON on one line is an error for that record only.
    """
    text = Path(path).read_text(encoding="utf-8")
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        return []
    obj, err = _loads(text)
    first_n, first = lines[0]
    if err is None:
        return [RawRecord(f"{path}:{first_n}", obj)]
    jsonl = len(lines) == 1 or _loads(first)[1] is None or any(_looks_like_record(line) for _, line in lines[1:])
    if not jsonl:  # one pretty-printed record that does not parse
        return [RawRecord(f"{path}:{first_n}", error=err)]
    out = []
    for n, line in lines:
        obj, err = _loads(line)
        out.append(RawRecord(f"{path}:{n}", obj, err))
    return out
