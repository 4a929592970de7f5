"""Replays for the browser: game records turned into frames, and ``krypenv replay FILE --html OUT.html``.

:func:`load_text` reads the text of a records file (one JSON record, or JSON Lines of any
games mixed, as :func:`krypenv.records.read_records`), checks every record by its game's rules
and keeps the legal ones as :class:`Deal` entries; a bad line is reported with its line
number and does not stop the others.  :func:`frames` turns one record into its replay: the
position before the first move and after every move (every hand visible: the page hides the
hidden ones until "show hands"), each move in words with its table talk.

:func:`write_html` writes one self-contained HTML file (no server, no network): the page's
own CSS and JavaScript inlined, with the frames of every record of the files in it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from krypenv.records import check_record, summary
from krypenv.ui.games import replay_frames

STATIC = Path(__file__).with_name("static")


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


def load_text(text: str, name: str) -> tuple[list[Deal], list[str]]:
    """The legal records of a records file's text, and one error line per record that failed."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    objs: list[tuple[str, Any, str | None]] = []
    try:
        objs = [(f"{name}:{lines[0][0] if lines else 1}", json.loads(text), None)] if lines else []
    except json.JSONDecodeError:
        for n, line in lines:
            try:
                objs.append((f"{name}:{n}", json.loads(line), None))
            except json.JSONDecodeError as exc:
                objs.append((f"{name}:{n}", None, f"bad JSON: {exc}"))
    deals, errors = [], []
    for label, obj, err in objs:
        if err is None:
            outcome = check_record(obj)
            err = None if outcome.ok else outcome.error
        if err is not None:
            errors.append(f"{label}: {err}")
            continue
        head = summary(label, obj, outcome)[0].split(": ok: ", 1)[-1]
        deals.append(Deal(label, obj["game"], head, obj))
    return deals, errors


def frames(deal: Deal) -> dict[str, Any]:
    """The replay of one deal: frames (every hand visible), moves with their talk, its result."""
    out = replay_frames(deal.record)
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


def write_html(paths: list[str], out: str | Path) -> tuple[int, list[str]]:
    """Write the replay page of every legal record of ``paths`` to ``out``; (records written, error lines).

    ValueError, writing nothing, when no record of ``paths`` is legal.
    """
    deals, errors = [], []
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{p}: cannot read: {exc}")
            continue
        d, e = load_text(text, p)
        deals += d
        errors += e
    if not deals:
        raise ValueError(f"no legal game record in {', '.join(map(str, paths))}; {out} not written"
                         + (f": {'; '.join(errors[:3])}" if errors else ""))
    inline = {"deals": [d.to_json(i) for i, d in enumerate(deals)], "frames": [frames(d) for d in deals]}
    Path(out).write_text(page(inline), encoding="utf-8")
    return len(deals), errors
