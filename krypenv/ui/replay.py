"""Replays for the browser: game records turned into frames, and ``krypenv replay FILE --html OUT.html``.

:func:`load_text` reads the text of a records file (one JSON record, or JSON Lines of any
games mixed, as :func:`krypenv.records.iter_text_records`: a record at a time, with its
bounds on lines and text), checks every record by its game's rules and keeps the legal ones
as :class:`Deal` entries; a bad line is reported with its line number and does not stop the
others.  Only the first :data:`MAX_ERRORS` (20) error lines are kept, then one line ``... and
N more records with errors``: an upload of junk is answered with a short list, not one line
per junk line.  :func:`frames` turns one record into its replay: the
position before the first move and after every move (every hand visible: the page hides the
hidden ones until "show hands"), each move in words with its table talk.

:func:`write_html` writes one self-contained HTML file (no server, no network): the page's
own CSS and JavaScript inlined, with the frames of every record of the files in it (each file
read a record at a time, :func:`krypenv.records.iter_records`; its errors kept as above).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from krypenv.games import game
from krypenv.records import RawRecord, check_record, clip, iter_records, iter_text_records, summary

STATIC = Path(__file__).with_name("static")
MAX_ERRORS = 20  # error lines kept per records file; the others are only counted


@dataclass
class Deal:
    """One legal record of a file: where it is, its game, one line of summary and the record itself."""

    label: str
    game: str
    summary: str
    record: dict[str, Any]

    def to_json(self, index: int) -> dict[str, Any]:
        """The deal as listed in the replay picker."""
        return {"index": index, "label": self.label, "game": self.game, "summary": self.summary,
                "moves": len(self.record["moves"])}


def _load(raws: Iterable[RawRecord], max_errors: int = MAX_ERRORS) -> tuple[list[Deal], list[str]]:
    """The legal records as deals, and the first ``max_errors`` error lines (0: all) and a count of the others."""
    deals, errors, more = [], [], 0
    for raw in raws:
        obj, err = raw.obj, raw.error
        if err is None:
            outcome = check_record(obj)
            err = None if outcome.ok else outcome.error
        if err is not None:
            if max_errors and len(errors) >= max_errors:
                more += 1  # counted, not kept
            else:
                errors.append(f"{raw.label}: {clip(err)}")
            continue
        head = summary(raw.label, obj, outcome)[0].split(": ok: ", 1)[-1]
        deals.append(Deal(raw.label, obj["game"], head, obj))
    if more:
        errors.append(f"... and {more} more records with errors")
    return deals, errors


def load_objects(records: list[dict[str, Any]], name: str) -> tuple[list[Deal], list[str]]:
    """Records in memory (a game's finished deals), checked as the lines ``name:1``, ``name:2``, ... of a file."""
    return _load(RawRecord(f"{name}:{k}", obj) for k, obj in enumerate(records, start=1))


def load_text(text: str, name: str) -> tuple[list[Deal], list[str]]:
    """The legal records of a records file's text, and an error line per failed record (the first MAX_ERRORS)."""
    return _load(iter_text_records(text, name))


def load_file(path: str | Path) -> tuple[list[Deal], list[str]]:
    """The legal records of a records file, read a record at a time, and its first MAX_ERRORS error lines."""
    return _load(iter_records(path))


def frames(deal: Deal) -> dict[str, Any]:
    """The replay of one deal: frames (every hand visible), moves with their talk, its result."""
    out = game(deal.record["game"]).part("ui").replay_frames(deal.record)
    out.update({"label": deal.label, "summary": deal.summary})
    return out


def page(inline: dict[str, Any] | None = None) -> str:
    """The web page; with ``inline`` a self-contained file holding that replay data (no server needed)."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    if inline is None:
        return html
    css = (STATIC / "style.css").read_text(encoding="utf-8")
    js = (STATIC / "app.js").read_text(encoding="utf-8")
    data = json.dumps(inline).replace("</", "<\\/")
    link, script = '<link rel="stylesheet" href="/static/style.css">', '<script src="/static/app.js"></script>'
    if link not in html or script not in html or "</script" in js.lower():
        raise ValueError(f"{STATIC}: index.html must link style.css and app.js as the server serves them, "
                         "and app.js must not contain </script>, to be inlined")
    html = html.replace(link, f"<style>\n{css}\n</style>")
    return html.replace(script, f"<script>window.KRYPENV_INLINE = {data};</script>\n<script>\n{js}\n</script>")


def write_html(paths: list[str], out: str | Path, max_errors: int = MAX_ERRORS) -> tuple[int, list[str]]:
    """Write the replay page of every legal record of ``paths`` to ``out``; (records written, error lines).

    Error lines: the first ``max_errors`` records with errors per file (0: all), then how many more.

    ValueError, writing nothing, when no record of ``paths`` is legal.
    """
    deals, errors = [], []
    for p in paths:
        try:
            d, e = _load(iter_records(p), max_errors)
        except OSError as exc:
            errors.append(f"{p}: cannot read: {exc}")
            continue
        deals += d
        errors += e
    if not deals:
        raise ValueError(f"no legal game record in {', '.join(map(str, paths))}; {out} not written"
                         + (f": {'; '.join(errors[:3])}" if errors else ""))
    inline = {"deals": [d.to_json(i) for i, d in enumerate(deals)], "frames": [frames(d) for d in deals]}
    Path(out).write_text(page(inline), encoding="utf-8")
    return len(deals), errors
