"""Shared game records (krypenv.records): dispatch on the ``game`` key, the game registry, and replay of mixed files."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from krypenv import games
from krypenv.krypkasino import records as krypkasino_records
from krypenv.records import ReplayOutcome, check_record, summary
from krypenv.replay import run

DEAL = Path(__file__).parent / "krypkasino" / "data" / "deal_3p.json"
KNOWN = ", ".join(games.names())  # the registry's games, in its order


def toy_records_module() -> types.ModuleType:
    """A stand-in second game's records module: a deal is a list of "ok"/"bad" moves."""
    mod = types.ModuleType("toy_records")
    mod.GAME = "toy"

    def check(obj: Any, legal: bool = False) -> ReplayOutcome:
        moves = obj.get("moves", [])
        bad = [m for m, mv in enumerate(moves) if mv != "ok"]
        out = ReplayOutcome(ok=not bad, moves_played=len(moves), result={"moves": [len(moves)]})
        if legal:
            out.legal_moves = [["ok"] for _ in moves[: (bad[0] + 1) if bad else len(moves)]]
        if bad:
            out.error, out.failed_move, out.result = f"move {bad[0]}: {moves[bad[0]]!r} is not a move", bad[0], None
        return out

    def text(label: str, obj: Any, outcome: ReplayOutcome) -> list[str]:
        return [f"{label}: {'ok' if outcome.ok else 'error: ' + str(outcome.error)} (toy, {len(obj['moves'])} moves)"]

    mod.check_record, mod.summary = check, text
    return mod


@pytest.fixture
def toy_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the stand-in game for one test: one more declaration in the registry of games."""
    monkeypatch.setitem(sys.modules, "toy_records", toy_records_module())
    toy = dataclasses.replace(games.GAMES[games.DEFAULT_GAME], name="toy", title="Toy", records="toy_records")
    monkeypatch.setitem(games.GAMES, "toy", toy)


def test_krypkasino_records_dispatch_to_their_module() -> None:
    """A Krypkasino record is checked and summarised by krypenv.krypkasino.records, exactly as there."""
    obj = json.loads(DEAL.read_text())
    assert games.game("krypkasino").part("records") is krypkasino_records
    out = check_record(obj, legal=True)
    assert out.ok and out == krypkasino_records.check_record(obj, legal=True)
    assert summary("deal.json:1", obj, out) == krypkasino_records.summary("deal.json:1", obj, out)


@pytest.mark.parametrize(("obj", "error"), [
    ([1, 2], "a record must be a JSON object, got list"),
    ({"rules": {}, "moves": []}, f"missing key game; known games: {KNOWN}"),
    ({"game": "casino", "moves": []}, f"unknown game 'casino'; known games: {KNOWN}"),
    ({"game": ["krypkasino"]}, f"unknown game ['krypkasino']; known games: {KNOWN}"),
])
def test_no_known_game_is_an_error_naming_the_known_games(obj: Any, error: str) -> None:
    """Not an object, no game, or an unknown game: an error outcome, never an exception; summary is its line."""
    out = check_record(obj)
    assert (out.ok, out.error, out.failed_move, out.result) == (False, error, None, None)
    assert summary("f.jsonl:3", obj, out) == [f"f.jsonl:3: error: {error}"]
    with pytest.raises(ValueError, match=f"unknown game 'casino'; known games: {KNOWN}"):
        games.game("casino")


def test_another_game_plugs_in_by_one_registry_entry(toy_game: None, tmp_path: Path) -> None:
    """A mixed file with a third (toy) game: each record is replayed by its own game, in text and JSON, with one exit
    status."""
    krypkasino = json.loads(DEAL.read_text())
    mixed = tmp_path / "mixed.jsonl"
    lines = [krypkasino, {"game": "toy", "moves": ["ok", "ok"]}, {"game": "toy", "moves": ["ok", "no"]},
             {"game": "casino"}]
    mixed.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    assert games.names() == ("krypkasino", "kungsholmskille", "toy")
    out, err = io.StringIO(), io.StringIO()
    assert run([str(mixed)], as_json=False, legal=False, out=out, err=err) == 1
    text = out.getvalue().splitlines()
    assert text[0] == f"{mixed}:1: ok: 3 players, dealer seat 2, 99 of 99 moves, result matches the record"
    assert f"{mixed}:2: ok (toy, 2 moves)" in text
    assert f"{mixed}:3: error: move 1: 'no' is not a move (toy, 2 moves)" in text
    assert f"{mixed}:4: error: unknown game 'casino'; known games: {KNOWN}, toy" in text
    assert text[-1] == "4 record(s): 2 ok, 2 with errors" and err.getvalue() == ""
    out = io.StringIO()
    assert run([str(mixed)], as_json=True, legal=True, out=out, err=err) == 1
    objs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [o["ok"] for o in objs] == [True, True, False, False]
    assert objs[1] == {"ok": True, "error": None, "failed_move": None, "result": {"moves": [2]},
                       "legal_moves": [["ok"], ["ok"]]}
    assert objs[2]["failed_move"] == 1 and objs[2]["error"] == f"{mixed}:3: move 1: 'no' is not a move"
    assert objs[0] == dict(check_record(krypkasino, legal=True).to_json())


def test_shared_records_import_no_game() -> None:
    """Importing krypenv.records (and the replay command) loads no game package: games load on first use."""
    code = ("import sys, krypenv.records, krypenv.replay; print(any(m.startswith('krypenv.krypkasino') "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
