"""experiments/distill_results.py's ``exploit`` command: ``krypenv exploit --json`` outputs become rows of a CSV,
one per (agent, seed, budget, decks, start), replaced when measured again; anything else is refused by name."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import distill_results


def result(agent: str, seed: int, gain: float) -> dict:
    """What ``krypenv exploit --json`` prints for an approximate best response (the fields the rows read)."""
    return {"method": "approximate best response (PPO learner, duplicate evaluation)", "agent": agent, "seed": seed,
            "budget_steps": 300000, "deals": 2000, "init_from": "checkpoints/ppo-2p.zip", "gain": gain,
            "ci_low": gain - 1.0, "ci_high": gain + 1.0, "learner": 20.0, "agent_value": 20.0 + gain,
            "train_s": 60.0}


@pytest.fixture
def csv_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CSV in a temporary folder."""
    path = tmp_path / "exit-exploit.csv"
    monkeypatch.setattr(distill_results, "EXPLOIT", path)
    return path


def write(tmp_path: Path, name: str, data: dict) -> str:
    """A JSON file of ``data``."""
    (tmp_path / name).write_text(json.dumps(data))
    return str(tmp_path / name)


def test_rows_are_added_and_a_measurement_again_replaces_its_row(tmp_path: Path, csv_path: Path) -> None:
    """Two agents' rows, then seed 1 of the first again: three rows, the new gain, the others kept in order."""
    distill_results.exploit([write(tmp_path, "a.json", result("mlp:x.npz", 1, -0.5)),
                             write(tmp_path, "b.json", result("mlp:x.npz", 2, 0.25)),
                             write(tmp_path, "c.json", result("ppo:y.zip", 1, 1.5))])
    distill_results.exploit([write(tmp_path, "d.json", result("mlp:x.npz", 1, -0.75))])
    rows = list(csv.DictReader(csv_path.open()))
    assert [(r["agent"], r["seed"], float(r["gain"])) for r in rows] == [
        ("mlp:x.npz", "2", 0.25), ("ppo:y.zip", "1", 1.5), ("mlp:x.npz", "1", -0.75)]
    assert float(rows[0]["ci_low"]) == -0.75 and float(rows[0]["ci_high"]) == 1.25
    assert rows[0]["init_from"] == "checkpoints/ppo-2p.zip" and rows[0]["budget_steps"] == "300000"


@pytest.mark.parametrize("data, message", [
    ({"method": "exact best responses", "agent": "expert"}, "an exact result"),
    ({"agent": "expert"}, "KeyError: 'method'"),
    ([1, 2], "TypeError"),
])
def test_anything_but_an_approximate_result_is_refused_naming_the_file(tmp_path: Path, csv_path: Path,
                                                                       data: object, message: str) -> None:
    """An exact result, a missing field or another JSON: a clear exit naming the file; the CSV is not written."""
    name = write(tmp_path, "bad.json", data)  # type: ignore[arg-type]
    with pytest.raises(SystemExit, match=rf"bad\.json: not the JSON of `krypenv exploit --json` \(.*{message}"):
        distill_results.exploit([name])
    assert not csv_path.exists()


def test_the_pages_offline_table_is_the_one_printed_from_the_csvs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/research/expert-iteration.md's wider students: every row of exit-offline.csv, its matches, no more."""
    distill_results.offline_table()
    printed = capsys.readouterr().out.strip()
    page = (ROOT / "docs" / "research" / "expert-iteration.md").read_text(encoding="utf-8")
    section = page.split("## Wider students from both runs' labels")[1].split("\n## ")[0]
    assert printed in section
    assert len(printed.splitlines()) == 2 + len(list(csv.DictReader(distill_results.OFFLINE.open())))


def test_offline_rows_refuse_a_checkpoint_that_is_not_the_runs_student(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped file must be the run's student byte for byte; else a clear exit and no CSV."""
    monkeypatch.setattr(distill_results, "OFFLINE", tmp_path / "off.csv")
    out = tmp_path / "run"
    out.mkdir()
    (out / "student.npz").write_bytes(b"student")
    (out / "result.json").write_text(json.dumps({"labels": 1}))
    (tmp_path / "other.npz").write_bytes(b"other")
    with pytest.raises(SystemExit, match=r"other\.npz is not .*run/student\.npz"):
        distill_results.offline([f"{tmp_path / 'other.npz'}={out}"])
    assert not (tmp_path / "off.csv").exists()


@pytest.mark.parametrize("game, players", [("krypkasino", 2), ("kungsholmskille", 4)])
def test_a_match_is_the_games_own_duplicate_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       game: str, players: int) -> None:
    """``match --game G`` plays G's evaluation (the same difference as calling it), its row keyed by the game."""
    from importlib import import_module

    path = tmp_path / "exit-matches.csv"
    monkeypatch.setattr(distill_results, "MATCHES", path)
    distill_results.match("random", "expert", players, 6, 3, game)
    ev = import_module(f"krypenv.eval.{game}")
    res = ev.evaluate(ev.EvalConfig(agents=("random", "expert"), players=players, deals=6, seed=3, records=False))
    pair = next(p for p in res.pairs if {p.a, p.b} == {"random", "expert"})
    want = pair.diff.mean if pair.a == "random" else -pair.diff.mean
    (row,) = csv.DictReader(path.open())
    assert (row["game"], row["players"], row["decks"], row["seed"]) == (game, str(players), "6", "3")
    assert float(row["a_minus_b"]) == pytest.approx(round(want, 4))


def test_a_match_of_an_unknown_game_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A misspelt game is a usage error naming it and the games, and writes no row."""
    monkeypatch.setattr(distill_results, "MATCHES", tmp_path / "m.csv")
    with pytest.raises(SystemExit, match=r"--game must be one of krypkasino, kungsholmskille, got 'kille'"):
        distill_results.match("random", "expert", 4, 2, 1, "kille")
    assert not (tmp_path / "m.csv").exists()
