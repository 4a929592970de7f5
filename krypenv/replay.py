"""``krypenv replay FILE... [--json] [--legal] [--max-errors N]``: check game records against the rules.

Each FILE holds one game record (a JSON object, possibly pretty-printed over many lines)
or JSON Lines, one record per line; blank lines are ignored.  Every record is checked by the
rules of the game its ``"game"`` key names, so one file may mix games (the dispatch and the
registry of games are in :mod:`krypenv.records`; a record of no known game is an error that
lists the known ones).  For a Krypkasino record (format in RULES.md, "Game records", and
:mod:`krypenv.krypkasino.records`) the command deals the recorded deck, replays every move
checking that it is legal (the card is in the hand of the seat to play, K13 forced sweeps are
played, captures are maximal, K10–K13), recomputes the result (K14–K17) and compares it with
the record's ``result`` when present.

Without ``--json`` it prints a readable summary per record (the game's own; for Krypkasino)::

    deal.json:1: ok: 3 players, dealer seat 2, 99 of 99 moves, result matches the record
      seat            0    1    2
      score          12   25    5   (sum 42)
      card points    17   20    5
      tabbes          1    0    0
      seat 1 took the table rest and the set-aside pile (K15)

or, for a bad record, one line naming the record (``file:line``), the move index, what was
wrong and the legal moves at that point::

    games.jsonl:3: error: move 12 (seat 1: 8H takes 8C): a sweep is forced (K13): ...; seat 1
    holds 5D 8H; table: 8C 10S; legal moves: 8H takes 8C 10S ...   (all on one line)

With ``--json`` it prints exactly one JSON object per record, one per line, with the same
five keys for every game (here a Krypkasino record's)::

    {"ok": true, "error": null, "failed_move": null,
     "result": {"scores": [...], "card_points": [...], "tabbes": [...]}, "legal_moves": []}

``result`` is null until the deal is finished (a partial record is fine, but must not carry
a result); ``tabbes`` counts a dubbeltabbe as two.  With ``--legal``, ``legal_moves[i]``
lists every legal move before move i as ``{"card": "8H", "capture": ["AC", "7C"]}``, up to
and including a failing move (the text mode then prints them per move); without it the
list is empty.  A failing record's ``error`` starts with its ``file:line``.

One bad record does not stop the others.  Exit status: 0 when every record is legal and
consistent, 1 otherwise: a bad record, a file that holds no record, or a file that cannot be
read (reported on stderr; the other files are still checked).

**Hostile or broken files.**  The output is bounded, whatever a file holds: at most
``--max-errors N`` records with errors are printed per file (default 20; ``0`` prints all),
and the others are counted, not shown; after that file's records one line says so::

    junk.jsonl: 4180 more record(s) with errors not shown (--max-errors 20)

With ``--json`` that line is instead one last object for the file, with the same five keys
and ``"omitted"``: ``{"ok": false, "error": "junk.jsonl: 4180 more ...", "failed_move": null,
"result": null, "legal_moves": [], "omitted": 4180}``.  The closing summary line counts every
record, shown or not, and the exit status is the same.  A printed error message is cut to
a few thousand characters.  Files are read a record at a time (nothing is kept of a record
once printed), a line of JSON Lines at most 1 MiB, JSON nested too deeply or an integer too
long for Python is ``bad JSON`` for that line only: :mod:`krypenv.records` gives the limits.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from krypenv.records import RawRecord, ReplayOutcome, check_record, clip, iter_records, summary

PROG = "krypenv replay"
MAX_ERRORS = 20  # records with errors printed per file by default (--max-errors)


def _count(text: str) -> int:
    """A ``--max-errors`` value: a whole number, 0 or more (argparse's type)."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of records, 0 or more, got {text!r}")
    return n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``replay`` arguments: files, ``--json``, ``--legal``, ``--max-errors``, ``--html``."""
    parser.description = "Replay game records, check every move and the recorded result."
    parser.add_argument("files", nargs="+", metavar="FILE", help="a JSON record or a JSON Lines file of records")
    parser.add_argument("--json", action="store_true", help="print one JSON object per record")
    parser.add_argument("--legal", action="store_true", help="also list the legal moves before every move")
    parser.add_argument("--max-errors", type=_count, default=MAX_ERRORS, metavar="N",
                        help=f"show at most N records with errors per file, then only how many more (default "
                             f"{MAX_ERRORS}; 0: all)")
    parser.add_argument("--html", metavar="OUT.html", default=None,
                        help="instead, write one self-contained HTML page (no server, no network) with the replay "
                             "view of every legal record, for sharing (the krypenv command only)")


def _check(obj: Any, legal: bool) -> ReplayOutcome:
    """check_record, with an unexpected exception turned into an error outcome (never a traceback)."""
    try:
        return check_record(obj, legal)
    except Exception as exc:  # noqa: BLE001 - an engine bug must not hide the other records
        why = f"internal error while replaying (please report): {type(exc).__name__}: {exc}"
        return ReplayOutcome(ok=False, error=why)


def _read(path: str, problems: list[str]) -> Iterator[RawRecord]:
    """The records of a file; an OSError reading it (before any record, or rarely after some) goes to ``problems``."""
    try:
        yield from iter_records(path)
    except OSError as exc:  # only the reader's: an error writing the output is raised in the caller, not here
        problems.append(exc.strerror or str(exc))


def _omitted(path: str, omitted: int, max_errors: int) -> str:
    """The line that stands for the records with errors not shown."""
    return f"{path}: {omitted} more record(s) with errors not shown (--max-errors {max_errors})"


def run(paths: list[str], as_json: bool, legal: bool, out: TextIO | None = None, err: TextIO | None = None,
        max_errors: int = MAX_ERRORS) -> int:
    """Check every record of every file; print per record (up to ``max_errors`` bad ones per file, 0: all).

    Returns the exit status 0 or 1.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    n_ok = n_bad = 0
    unreadable = empty = False
    for path in paths:
        n_records = shown = omitted = 0
        problems: list[str] = []
        for raw in _read(path, problems):
            n_records += 1
            outcome = ReplayOutcome(ok=False, error=raw.error) if raw.error else _check(raw.obj, legal)
            if outcome.ok:
                n_ok += 1
            else:
                n_bad += 1
                if max_errors and shown >= max_errors:
                    omitted += 1  # counted, not printed
                    continue
                shown += 1
                outcome.error = clip(str(outcome.error))
            if as_json:
                obj = outcome.to_json()
                if obj["error"] is not None:
                    obj["error"] = f"{raw.label}: {obj['error']}"
                print(json.dumps(obj), file=out)
            else:
                print("\n".join(summary(raw.label, raw.obj, outcome)), file=out)
        if omitted:
            line = _omitted(path, omitted, max_errors)
            if as_json:
                line = json.dumps(dict(ReplayOutcome(ok=False, error=line).to_json(), omitted=omitted))
            print(line, file=out)
        if problems:
            print(f"{PROG}: error: cannot read {path}: {problems[0]}", file=err)
            unreadable = True
        elif not n_records:
            print(f"{PROG}: error: {path} holds no game record", file=err)
            empty = True
    if not as_json:
        print(f"{n_ok + n_bad} record(s): {n_ok} ok, {n_bad} with errors", file=out)
    return 1 if unreadable or n_bad or empty else 0


def main(argv: list[str] | None = None) -> int:
    """Run the command on its own (``python -m krypenv.replay``)."""
    parser = argparse.ArgumentParser(prog=PROG)
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.html:  # the page belongs to krypenv.ui, above this module: the CLI joins the two
        parser.error("--html is written by the krypenv command: krypenv replay FILE... --html OUT.html")
    return run(args.files, args.json, args.legal, max_errors=args.max_errors)


if __name__ == "__main__":
    sys.exit(main())
