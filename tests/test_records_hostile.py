"""Hostile records files: reading, ``krypenv replay`` and the upload's ``load_text`` stay bounded and name file:line."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
from pathlib import Path

import pytest

from krypenv import records
from krypenv.cli import main
from krypenv.records import MAX_MESSAGE, iter_records, iter_text_records
from krypenv.replay import run
from krypenv.ui.replay import MAX_ERRORS, load_text

DEAL = Path(__file__).parent / "krypkasino" / "data" / "deal_3p.json"
GOOD = json.dumps(json.loads(DEAL.read_text()))  # one legal Krypkasino record on one line
JUNK = ['{"game": "nope", "pad": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}', "not json at all, just junk text", "[1, 2, 3]",
        '{"moves": []}']  # an unknown game, bad JSON, not an object, no game
NESTED = "[" * 100_000 + "]" * 100_000
HUGE_INT = "1" * 5000


def junk_text(n: int, first: str = GOOD) -> str:
    """``first`` and then ``n`` junk lines of every kind."""
    return "\n".join([first] + [JUNK[i % len(JUNK)] for i in range(n)]) + "\n"


def replay(paths: list[Path], as_json: bool = False, max_errors: int = 20) -> tuple[int, str, str]:
    """Call replay.run; return (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    status = run([str(p) for p in paths], as_json, False, out=out, err=err, max_errors=max_errors)
    return status, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- krypenv replay
def test_junk_lines_print_max_errors_then_a_count(tmp_path: Path) -> None:
    """5,000 junk lines: 20 error lines, one line for the 4,980 others, and a summary that counts them all."""
    path = tmp_path / "junk.jsonl"
    path.write_text(junk_text(5000))
    status, out, err = replay([path])
    lines = out.splitlines()
    assert status == 1 and err == ""
    assert lines[0] == f"{path}:1: ok: 3 players, dealer seat 2, 99 of 99 moves, result matches the record"
    assert sum(": error: " in line for line in lines) == 20 and len(lines) < 40
    assert f"{path}:21: error: " in out and f"{path}:22:" not in out
    assert lines[-2:] == [f"{path}: 4980 more record(s) with errors not shown (--max-errors 20)",
                          "5001 record(s): 1 ok, 5000 with errors"]
    status, out, _ = replay([path], max_errors=0)  # 0: every one
    assert status == 1 and sum(": error: " in line for line in out.splitlines()) == 5000 and "not shown" not in out
    status, out, _ = replay([path, DEAL], max_errors=3)  # per file; the other files are still checked
    assert f"{path}: 4997 more record(s) with errors not shown (--max-errors 3)" in out
    assert out.splitlines()[-1] == "5002 record(s): 2 ok, 5000 with errors"


def test_json_mode_ends_a_file_with_one_omitted_object(tmp_path: Path) -> None:
    """--json: the shown records' objects, then one object with the five keys and "omitted"."""
    path = tmp_path / "junk.jsonl"
    path.write_text(junk_text(100))
    status, out, _ = replay([path], as_json=True, max_errors=5)
    objs = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and len(objs) == 1 + 5 + 1 and objs[0]["ok"]
    assert all(o["error"].startswith(f"{path}:") for o in objs[1:6])
    assert objs[-1] == {"ok": False, "error": f"{path}: 95 more record(s) with errors not shown (--max-errors 5)",
                        "failed_move": None, "result": None, "legal_moves": [], "omitted": 95}


def test_max_errors_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """krypenv replay --max-errors N; a negative N is a usage error (status 2)."""
    path = tmp_path / "junk.jsonl"
    path.write_text(junk_text(10))
    assert main(["replay", str(path), "--max-errors", "2"]) == 1
    assert f"{path}: 8 more record(s) with errors not shown (--max-errors 2)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path), "--max-errors", "-1"])
    assert exc.value.code == 2 and "0 or more" in capsys.readouterr().err


@pytest.mark.parametrize("bad, why", [(NESTED, "bad JSON: nested too deeply"),
                                      (HUGE_INT, "bad JSON: Exceeds the limit (4300 digits)")])
@pytest.mark.parametrize("first", [True, False])
def test_nested_and_huge_int_lines_are_one_records_error(tmp_path: Path, bad: str, why: str, first: bool) -> None:
    """A line of 100,000 nested lists or a 5,000-digit integer: a file:line error; the good records still check."""
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join([bad, GOOD, GOOD] if first else [GOOD, bad, GOOD]) + "\n")
    status, out, err = replay([path])
    bad_n = 1 if first else 2
    assert status == 1 and err == "" and "Traceback" not in out
    assert f"{path}:{bad_n}: error: {why}" in out
    assert sum(": ok: " in line for line in out.splitlines()) == 2 and "3 record(s): 2 ok, 1 with errors" in out
    status, out, _ = replay([path], as_json=True)
    assert [json.loads(line)["ok"] for line in out.splitlines()] == [n != bad_n for n in (1, 2, 3)]


def test_a_quoting_error_message_is_cut(tmp_path: Path) -> None:
    """An error that quotes a huge value is printed cut to MAX_MESSAGE characters."""
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"game": "x" * 100_000}) + "\n")
    status, out, _ = replay([path])
    (line,) = [line for line in out.splitlines() if ": error: " in line]
    assert status == 1 and len(line) < MAX_MESSAGE + 200 and "more characters)" in line


def test_memory_stays_bounded_through_run(tmp_path: Path) -> None:
    """A 5 MB junk file read through run into a sink: a small peak, whether or not its first line parses.

    After a good first line the file is read a line at a time (under 2 MB); after a bad one it is read whole once
    as a candidate pretty-printed record (its size, a few times; under 50 MB).
    """
    replay([DEAL])  # the game's modules are imported before measuring
    for name, first, limit in (("after.jsonl", GOOD, 2), ("first.jsonl", JUNK[1], 50)):
        path = tmp_path / name
        path.write_text(junk_text(180_000, first))
        assert path.stat().st_size > 5_000_000
        tracemalloc.start()
        try:
            with open(os.devnull, "w", encoding="utf-8") as sink:
                assert run([str(path)], False, False, out=sink, err=sink) == 1
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < limit * 2**20, (name, peak)


# --------------------------------------------------------------------------- the reader's limits
def test_long_lines_and_bad_bytes_are_errors_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line over MAX_LINE is never read whole; a line not UTF-8 is an error; the records around them load."""
    monkeypatch.setattr(records, "MAX_LINE", 100)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"game": "a"}\n' + b"x" * 1000 + b"\n\xff\xfe\n" + b'{"game": "b"}\r\n')
    raws = list(iter_records(path))
    assert [(r.label, r.obj) for r in raws] == [(f"{path}:{n}", o) for n, o in
                                                ((1, {"game": "a"}), (2, None), (3, None), (4, {"game": "b"}))]
    assert "longer than the limit" in raws[1].error and raws[2].error.startswith("not UTF-8 text")
    path.write_bytes(b"x" * 1000 + b'\n{"game": "b"}\n')  # a first line too long: JSON Lines
    assert [r.obj for r in iter_records(path)] == [None, {"game": "b"}]


def test_one_pretty_record_is_read_whole_up_to_max_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over MAX_TEXT a pretty-printed record is an error naming the file and the limit; JSON Lines still read."""
    pretty = tmp_path / "one.json"
    pretty.write_text("\n\n" + json.dumps(json.loads(GOOD), indent=2) + "\n")
    assert [(r.label, r.error) for r in iter_records(pretty)] == [(f"{pretty}:3", None)]
    broken = tmp_path / "broken.json"
    broken.write_text("\n\n{\n  x\n}\n")  # the JSON error counts the file's lines
    assert [r.error for r in iter_records(broken)] == [
        "bad JSON: Expecting property name enclosed in double quotes: line 4 column 3"]
    monkeypatch.setattr(records, "MAX_TEXT", 1000)
    (raw,) = iter_records(pretty)
    assert raw.label == f"{pretty}:3" and raw.obj is None and "over the limit of" in raw.error
    lines = tmp_path / "lines.jsonl"  # a broken first line, a record after it: JSON Lines at any size
    lines.write_text("{\n" + "\n".join([GOOD] * 3) + "\n")
    assert [r.error is None for r in iter_records(lines)] == [False, True, True, True]


class Pipe(io.BytesIO):
    """A stream that cannot seek, as a pipe."""

    def seekable(self) -> bool:
        """Never."""
        return False


def test_a_pipe_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream that cannot seek: JSON Lines after a bad first line from memory; over MAX_TEXT an error."""
    text = ("{\n" + junk_text(5)).encode()
    assert [r.obj is None for r in records._records(Pipe(text), "p")] == [True, False, False, True, False, False, False]
    pretty = json.dumps(json.loads(GOOD), indent=2).encode()
    assert [r.obj for r in records._records(Pipe(pretty), "p")] == [json.loads(GOOD)]
    monkeypatch.setattr(records, "MAX_TEXT", 1000)
    (raw,) = records._records(Pipe(text), "p")
    assert raw.label == "p:1" and raw.error.endswith("over the limit of 1000 bytes")


def test_text_records_match_the_files(tmp_path: Path) -> None:
    """iter_text_records reads a text exactly as iter_records reads the same file."""
    for text in (junk_text(30), junk_text(3, NESTED), "\n" + json.dumps(json.loads(GOOD), indent=2), "", "{\n"):
        path = tmp_path / "same.jsonl"
        path.write_text(text)
        assert list(iter_text_records(text, str(path))) == list(iter_records(path))


# --------------------------------------------------------------------------- the upload
def test_upload_keeps_the_deals_and_the_first_errors() -> None:
    """load_text of one record and 100,000 junk lines: the deal, MAX_ERRORS error lines and the count."""
    deals, errors = load_text(junk_text(100_000), "up.jsonl")
    assert len(deals) == 1 and deals[0].label == "up.jsonl:1"
    assert len(errors) == MAX_ERRORS + 1 == 21 and errors[0].startswith("up.jsonl:2: ")
    assert errors[-1] == f"... and {100_000 - MAX_ERRORS} more records with errors"
    deals, errors = load_text(NESTED + "\n" + junk_text(3) + HUGE_INT + "\n", "up.jsonl")
    assert len(deals) == 1 and errors[0] == "up.jsonl:1: bad JSON: nested too deeply"
    assert errors[-1].startswith("up.jsonl:6: bad JSON: Exceeds the limit")


def test_html_lists_at_most_max_errors_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """krypenv replay --html: the page of the good record, and a short list of the bad ones on stderr."""
    path = tmp_path / "junk.jsonl"
    path.write_text(junk_text(500))
    assert main(["replay", str(path), "--html", str(tmp_path / "out.html"), "--max-errors", "4"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 5 and err[-1] == "krypenv replay: error: ... and 496 more records with errors"
