"""``krypenv play``: parsing typed moves, rendering, and whole deals driven through a pipe and a pseudo-terminal."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from krypenv.records import check_record
from krypenv.ui.moves import InputError
from krypenv.ui.session import Session, parse_specs
from krypenv.ui.terminal import play, render_state
from krypenv.ui.terminal_text import Style

ROOT = Path(__file__).resolve().parents[2]


def test_parse_specs_forms_and_errors() -> None:
    """One spec per seat with one human, opponents only, or one spec for all; clear errors otherwise."""
    assert parse_specs(["human", "expert", "greedy"], 3, None) == (["human", "expert", "greedy"], 0)
    assert parse_specs(["expert"], 3, 2) == (["expert", "expert", "human"], 2)
    assert parse_specs(["greedy", "expert"], 3, 1) == (["greedy", "human", "expert"], 1)
    for specs, seat, words in ((["human", "human"], None, "2 humans"), (["a", "b", "c"], None, "3 opponents"),
                               (["human", "expert"], None, "2 seats"), (["expert"], 5, "--seat")):
        with pytest.raises(ValueError, match=words):
            parse_specs(specs, 3, seat)


def test_krypkasino_typed_moves(tmp_path: Path) -> None:
    """Numbers and short forms pick legal moves; every bad input says why."""
    s = Session("krypkasino", 3, ["human", "expert", "greedy"], seed=1, record=tmp_path / "r.jsonl")
    legal = s.legal()  # hand 9C 9D 3H 6H 9S on table 3C 6C 5H 9H (seed 1)
    assert [c.label for c in legal][:3] == ["9C takes 3C 6C 9H", "9D takes 3C 6C 9H", "3H takes 3C"]
    keys = [c.key for c in legal]
    assert s.parse("2").key == keys[1] and s.parse("3h 3c").key == keys[2] and s.parse("3H").key == keys[2]
    assert s.parse(" 9c,3c,6c,9h ").key == keys[0]
    for text, words in (("0", "no move 0"), ("6", "choose 1 to 5"), ("kh", "not in your hand"),
                        ("zz", "unknown card"), ("3h creeps", "cannot creep"), ("3h 6c", "cannot take 6C"),
                        ("", "type a move")):
        with pytest.raises(InputError, match=words):
            s.parse(text)


def test_kille_typed_moves(tmp_path: Path) -> None:
    """L17 strings, words and bare ranks; the rule is named when a move is illegal."""
    s = Session("kungsholmskille", 4, ["random"], seed=2, record=tmp_path / "r.jsonl")
    assert [c.key for c in s.legal()] == ["bud", "knacka"]
    assert s.parse("knock").key == "knacka" and s.parse("BUD").key == "bud" and s.parse("2").key == "knacka"
    with pytest.raises(InputError, match="unknown word or rank 'zz'"):
        s.parse("zz")
    with pytest.raises(InputError, match="not legal now: a move of the wrong kind"):
        s.parse("stand")


def test_render_state_plain_and_coloured(tmp_path: Path) -> None:
    """Plain text has no escape codes; on a terminal hearts and diamonds are red."""
    s = Session("krypkasino", 3, ["expert"], seed=1, record=tmp_path / "r.jsonl")
    plain = "\n".join(render_state(s.state(), Style(False)))
    assert "\x1b" not in plain and "your hand:  9C 9D 3H 6H 9S" in plain and "tabbe på 5" not in plain
    assert "table:      3C 6C 5H 9H" in plain
    coloured = "\n".join(render_state(s.state(), Style(True)))
    assert "\x1b[31m9D\x1b[0m" in coloured and "\x1b[31m9C" not in coloured


def test_play_loop_help_hint_reask_and_eof(tmp_path: Path) -> None:
    """? and h answer without moving, bad input is asked again, end of input saves the partial record."""
    s = Session("krypkasino", 2, ["greedy"], seed=4, record=tmp_path / "r.jsonl")
    out = io.StringIO()
    assert play(s, io.StringIO("?\nnonsense\nh\n1\n"), out, colour=False, hint_spec="expert") == 0
    text = out.getvalue()
    assert "Krypkasino moves: type the number" in text and "unknown card name 'nonsense'" in text
    assert "hint: searching (Ctrl-C gives it up)\nhint from expert" in text and "end of input" in text
    (rec,) = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(rec["moves"]) == 2 and "result" not in rec and check_record(rec).ok


def _play_piped(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    record = tmp_path / "game.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "krypenv.cli", "play", *args, "--record", str(record)],
                          input="1\n" * 400, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
                          check=False)
    return proc, [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


@pytest.mark.parametrize("game,args,final", [
    ("krypkasino", ["--players", "2", "--agents", "expert", "--seed", "3"], "winner:"),
    ("kungsholmskille", ["--players", "3", "--deals", "2", "--seed", "3"], "net money:"),
])
def test_piped_play_to_the_end(tmp_path: Path, game: str, args: list[str], final: str) -> None:
    """Always answering 1 through a pipe finishes the match: final scores, exit 0, legal records, no colour."""
    proc, records = _play_piped(tmp_path, "--game", game, *args)
    assert proc.returncode == 0, proc.stderr
    assert "Match over" in proc.stdout and final in proc.stdout and "\x1b" not in proc.stdout
    assert records and all("result" in r and check_record(r).ok for r in records)


def test_k22_piped_preset_play(tmp_path: Path) -> None:
    """``--preset tiny`` (K22) deals the 8-card deck, says so, and records its keys; 3 players are refused."""
    proc, records = _play_piped(tmp_path, "--players", "2", "--preset", "tiny", "--agents", "expert", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    (rec,) = records
    assert "Krypkasino (tiny deck)" in proc.stdout and len(rec["deck"]) == 8 and check_record(rec).ok
    proc, _ = _play_piped(tmp_path, "--players", "3", "--preset", "tiny", "--seed", "3")
    assert proc.returncode != 0 and "preset 'tiny' is for players 2" in proc.stderr and "Traceback" not in proc.stderr


def test_piped_team_play_scores_the_teams(tmp_path: Path) -> None:
    """``--teams 2`` (as in eval and train.py) seats 2v2 (K18): team totals, a winning team, teams in the record."""
    proc, records = _play_piped(tmp_path, "--players", "4", "--teams", "2", "--agents", "greedy", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    (rec,) = records
    assert rec["rules"]["teams"] == [[0, 2], [1, 3]] and check_record(rec).ok
    scores = rec["result"]["scores"]
    sides = {"you + seat 2 (greedy)": scores[0] + scores[2], "seat 1 (greedy) + seat 3 (greedy)": scores[1] + scores[3]}
    assert "  teams: " + ", ".join(f"{k} {v}" for k, v in sides.items()) in proc.stdout
    assert f"  winner: {min(sides, key=sides.get)}" in proc.stdout
    assert f"team 0+2 {scores[0] + scores[2]}; team 1+3 {scores[1] + scores[3]}" in proc.stdout


@pytest.mark.parametrize("teams,players,why", [("0,1/2,3", 4, "do not alternate seats"), ("2", 3, "4 or 6 players"),
                                               ("two", 4, "a number of teams")])
def test_bad_teams_are_one_line_errors(tmp_path: Path, teams: str, players: int, why: str) -> None:
    """A bad ``--teams`` is refused before the game starts, with the reason and no traceback."""
    proc, _ = _play_piped(tmp_path, "--players", str(players), "--teams", teams, "--seed", "3")
    assert proc.returncode != 0 and why in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "game.jsonl").exists()


def spawn_play(tmp_path: Path, *args: str) -> Any:
    """``krypenv play ARGS`` on a pseudo-terminal (pexpect), its record at ``tmp_path/t.jsonl``, waiting for the
    prompt."""
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    # Started as from a shell, with Ctrl-C's default disposition: a child inherits an ignored SIGINT from its parent,
    # and a test worker's SIGINT may have been set to ignored by an earlier test's library (Python then never raises
    # KeyboardInterrupt in the child).
    child = pexpect.spawn(sys.executable, ["-m", "krypenv.cli", "play", *args, "--record", str(tmp_path / "t.jsonl")],
                          env=env, cwd=str(tmp_path), encoding="utf-8", timeout=120,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child.expect("your move")
    return child


def move_then_quit(child: Any, tmp_path: Path) -> None:
    """Make move 1, quit with q; the process ends with 0 and the saved partial record replays legally."""
    import pexpect

    child.sendline("1")
    child.expect("your move")
    child.sendline("q")
    child.expect("quit: record saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    (rec,) = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert len(rec["moves"]) >= 1 and check_record(rec).ok


def test_pseudo_terminal_session(tmp_path: Path) -> None:
    """On a pseudo-terminal the cards are in colour, q quits and saves the partial record."""
    child = spawn_play(tmp_path, "--players", "2", "--seed", "1")
    assert "\x1b[" in child.before
    move_then_quit(child, tmp_path)


def test_ctrl_c_gives_up_a_long_hint_and_the_game_goes_on(tmp_path: Path) -> None:
    """Ctrl-C during a long hint (a 6-player pimc search of 12 votes) gives the prompt back with "hint
    interrupted"; the game goes on (a move is taken, q saves), instead of the process ending after the search."""
    import time

    child = spawn_play(tmp_path, "--players", "6", "--agents", "random", "--seed", "1", "--hint",
                       "pimc:samples=256,rollouts=4")
    child.sendline("h")
    child.expect("Ctrl-C gives it up")  # printed by the game once it has read h (the tty's echo of h is not)
    time.sleep(0.5)  # inside the search (12 votes of 256 worlds × 4 rollouts: seconds)
    child.sendintr()
    child.expect("hint interrupted")
    child.expect("your move")
    move_then_quit(child, tmp_path)


def test_a_record_that_cannot_be_written_is_a_warning_then_an_error(tmp_path: Path) -> None:
    """The record's folder is a file: the end of deal 1 warns and the match goes on to deal 2; the final save fails
    with a one-line error and exit status 1, not a traceback."""
    (tmp_path / "taken").write_text("a file, not a folder")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "krypenv.cli", "play", "--game", "kungsholmskille", "--players", "3",
                           "--deals", "2", "--seed", "3", "--record", str(tmp_path / "taken" / "game.jsonl")],
                          input="1\n" * 400, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
                          check=False)
    why = f"the record could not be saved to {tmp_path / 'taken' / 'game.jsonl'}: {tmp_path / 'taken'} is not a folder"
    assert f"warning: {why}; the game goes on" in proc.stdout
    assert "deal 2/2" in proc.stdout.split("warning:", 1)[1]  # the match went on after the warning
    assert proc.returncode == 1 and proc.stderr.strip() == f"krypenv play: error: {why}"
