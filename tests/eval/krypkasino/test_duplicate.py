"""Krypkasino's duplicate evaluation (krypenv.eval.krypkasino): values, playing, workers, records, ``krypenv eval``."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from krypenv.eval.krypkasino import EvalConfig, Played, default_out, evaluate, run_eval
from krypenv.eval.krypkasino.duplicate import game_values, summarise

from krypenv.cli import main
from krypenv.krypkasino.records import check_record
from krypenv.krypkasino.rules import Rules, parse_teams


class Lowest:
    """Always the lowest legal action (deterministic)."""

    name = "lowest"

    def act(self, batch) -> np.ndarray:
        return batch.mask.argmax(axis=1)


class Highest:
    """Always the highest legal action (deterministic)."""

    name = "highest"

    def act(self, batch) -> np.ndarray:
        return batch.mask.shape[1] - 1 - batch.mask[:, ::-1].argmax(axis=1)


LOWEST, HIGHEST = "tests.eval.krypkasino.test_duplicate:Lowest", "tests.eval.krypkasino.test_duplicate:Highest"


def test_default_output_folder_names_every_game_defining_variant() -> None:
    """A 2v2 (or other variant) evaluation of the same agents never overwrites the plain one's folder."""
    plain = EvalConfig(agents=("greedy", "expert"), players=4, deals=10, seed=5)
    assert default_out(plain).name == "greedy_expert-4p-10d-s5"
    variants = [EvalConfig(agents=("greedy", "expert"), players=4, deals=10, seed=5, teams=parse_teams("2", 4)),
                EvalConfig(agents=("greedy", "expert"), players=4, deals=10, seed=5, set_aside="spades"),
                EvalConfig(agents=("greedy", "expert"), players=4, deals=10, seed=5, last_capture_point=True),
                EvalConfig(agents=("greedy", "expert"), players=4, deals=10, seed=5, seatings="permutations"),
                EvalConfig(agents=("greedy", "expert"), players=4, deals=10, seed=5, independent=True),
                EvalConfig(agents=("greedy", "expert"), players=2, deals=10, seed=5, two_player_deal="5+6")]
    names = [default_out(c).name for c in variants]
    assert names[0] == "greedy_expert-4p-10d-s5-teams02+13"
    assert len(set(names + [default_out(plain).name])) == len(names) + 1
    long = EvalConfig(agents=("pimc:policy=ppo:" + "x" * 200, "expert"), players=4, deals=10, seed=5,
                      teams=parse_teams("2", 4))
    assert default_out(long).name.endswith("-4p-10d-s5-teams02+13") and len(default_out(long).name) <= 120


def test_k22_preset_eval_names_its_folder_repeats_and_replays(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """K22: ``--preset tiny`` tags the folder and the command line; its records replay; a standard run names none."""
    plain = EvalConfig(agents=("greedy", "expert"), players=2, deals=10, seed=5)
    tiny = EvalConfig(agents=("greedy", "expert"), players=2, deals=10, seed=5, preset="tiny")
    assert default_out(tiny).name == "greedy_expert-2p-10d-s5-tiny" != default_out(plain).name
    out = tmp_path / "tiny"
    argv = ["eval", "--agents", "expert,greedy", "--deals", "3", "--seed", "5", "--workers", "1", "--out", str(out),
            "--no-progress", "--preset", "tiny"]
    assert main(argv) == 0
    run = json.loads((out / "run.json").read_text())
    assert "--preset tiny" in run["command"] and run["config"]["rules"]["hand"] == 3
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(len(r["deck"]) == 8 and check_record(r).ok for r in records)
    assert all(sum(r["result"]["scores"]) == 7 for r in records)  # K20: tiny's total points
    capsys.readouterr()
    assert main(run["command"].split()[1:] + ["--no-progress", "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "results.json").read_text() == (out / "results.json").read_text()


def test_game_values_wins_tabbes_teams_and_repeats() -> None:
    rules = Rules(players=3)
    seating = np.array([[0, 1, 0]])  # agent 0 holds seats 0 and 2
    scores = np.array([[10, 22, 10]])
    tabbes = np.array([[1, 2, 0]])
    v = game_values(rules, seating, scores, tabbes, 2)
    assert v.score.tolist() == [[10.0, 22.0]]
    assert v.won.tolist() == [[0.5, 0.0]]  # seats 0 and 2 tie for the lowest score: half a win each
    assert v.taken.tolist() == [[0.5, 2.0]]
    assert v.setup.tolist() == [[1.5, 0.0]]  # seat 0 sets up seat 1's two tabbes, seat 2 seat 0's one
    team = game_values(Rules(players=4, teams=((0, 2), (1, 3))), np.array([[1, 0, 1, 0]]),
                       np.array([[5, 10, 7, 20]]), np.array([[1, 0, 2, 0]]), 2)
    assert team.score.tolist() == [[30.0, 12.0]] and team.won.tolist() == [[0.0, 1.0]]
    assert team.taken.tolist() == [[0.0, 3.0]] and team.setup.tolist() == [[3.0, 0.0]]  # seats 1, 3 set up 2, 0
    absent = game_values(rules, np.array([[0, 1, 1]]), scores, tabbes, 3)
    assert np.isnan(absent.score[0, 2])


# --------------------------------------------------------------------------- playing
def test_duplicate_games_share_decks_and_records_replay() -> None:
    config = EvalConfig(agents=("random", LOWEST, HIGHEST), players=2, deals=2, seed=3, batch=5)
    seen: list[Played] = []
    results = evaluate(config, on_chunk=lambda part, ind: seen.append(part))
    records = [json.loads(line) for part in seen for line in part.records]
    assert len(records) == 12 and [int(g) for part in seen for g in part.games] == list(range(12))
    for rec in records:
        assert check_record(rec).ok
    assert all(records[g]["deck"] == records[0]["deck"] for g in range(6))
    assert all(records[g]["deck"] == records[6]["deck"] for g in range(6, 12))
    assert records[0]["deck"] != records[6]["deck"]
    for g, rec in enumerate(records):
        assert rec["result"]["scores"] == results.played.scores[g].tolist()
        assert rec["result"]["tabbes"] == results.played.tabbes[g].tolist()
    assert [r.games for r in results.rows] == [8, 8, 8]
    assert {(p.a, p.b) for p in results.pairs} == {("random", LOWEST), ("random", HIGHEST), (LOWEST, HIGHEST)}
    assert all(p.games == 4 and p.diff.n == 2 for p in results.pairs)


def test_mirror_match_of_a_deterministic_agent_cancels_exactly() -> None:
    results = evaluate(EvalConfig(agents=(LOWEST, LOWEST), deals=6, independent=True))
    (pair,) = results.pairs
    assert pair.diff.mean == 0.0 and pair.diff.se == 0.0  # both rotations of a deck are the same game
    assert pair.independent is not None and pair.independent.se > 0
    assert pair.reduction is None
    assert results.rows[0].score.mean + results.rows[1].score.mean == pytest.approx(42.0)


def test_variance_reduction_is_the_ratio_of_squared_standard_errors() -> None:
    config = EvalConfig(agents=("random", LOWEST), deals=8, seed=1, independent=True)
    results = evaluate(config)
    (pair,) = results.pairs
    s = config.schedule
    again = summarise(config, results.played, results.independent)
    assert again.pairs[0].reduction == pair.reduction
    ind = results.independent
    seat_a = s.seating[s.table_of(ind.games)] == 0
    diff = np.where(seat_a, ind.scores, 0).sum(1) - np.where(~seat_a, ind.scores, 0).sum(1)
    se_ind = diff.std(ddof=1) / math.sqrt(len(diff))
    dup = results.played
    seat_a = s.seating[s.table_of(dup.games)] == 0
    per_deck = (np.where(seat_a, dup.scores, 0).sum(1) - np.where(~seat_a, dup.scores, 0).sum(1)).reshape(8, 2).mean(1)
    se_dup = per_deck.std(ddof=1) / math.sqrt(8)
    assert pair.independent.se == pytest.approx(se_ind) and pair.diff.se == pytest.approx(se_dup)
    assert pair.reduction == pytest.approx((se_ind / se_dup) ** 2)
    assert ind.scores.shape == dup.scores.shape
    assert not np.array_equal(ind.scores, dup.scores)


def test_workers_do_not_change_results(tmp_path: Path) -> None:
    outs = []
    for workers, batch in [(1, 256), (2, 3)]:
        config = EvalConfig(agents=("random", LOWEST, HIGHEST), players=3, deals=3, seed=11, workers=workers,
                            batch=batch)
        with open(tmp_path / f"{workers}.txt", "w") as stdout:
            run_eval(config, tmp_path / str(workers), progress=False, stdout=stdout)
        outs.append(tmp_path / str(workers))
    for name in ("results.json", "results.csv", "head_to_head.csv", "games.csv", "records.jsonl"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    assert len((outs[0] / "records.jsonl").read_text().splitlines()) == 9


# --------------------------------------------------------------------------- the command
def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--agents", "random,random", "--deals", "3", "--seed", "5", "--workers", "1", "--out", str(out),
            "--independent", "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "random#2" in text and "head to head" in text and "variance reduction" in text
    for name in ("results.csv", "results.json", "head_to_head.csv", "games.csv", "games-independent.csv",
                 "records.jsonl", "records-independent.jsonl", "scores.png", "run.json"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "scores.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["replay", str(out / "records.jsonl"), str(out / "records-independent.jsonl")]) == 0
    assert "12 record(s): 12 ok" in capsys.readouterr().out
    res = json.loads((out / "results.json").read_text())
    assert [a["agent"] for a in res["agents"]] == ["random", "random#2"]
    assert res["schedule"]["games"] == 6 and res["config"]["seed"] == 5
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert float(rows[0]["mean_score"]) + float(rows[1]["mean_score"]) == pytest.approx(42.0)
    run = json.loads((out / "run.json").read_text())
    assert run["command"].startswith("krypenv eval --agents random,random --players 2 --deals 3 --seed 5")
    assert main(run["command"].split()[1:] + ["--no-progress", "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "results.json").read_text() == (out / "results.json").read_text()


@pytest.mark.parametrize("args, message", [
    (["--agents", "random,nosuch"], "unknown agent 'nosuch'"),
    (["--agents", "random"], "at least two agent specs"),
    (["--agents", "random,random", "--players", "3", "--teams", "2"], "teams need 4 or 6 players"),
    (["--agents", "random,random", "--players", "4", "--teams", "0,1/2,3"], "do not alternate"),
    (["--agents", "random,random", "--players", "3", "--preset", "tiny"], "preset 'tiny' is for players 2"),
    (["--agents", "random,random", "--preset", "huge"], "preset must be one of"),
])
def test_cli_errors_are_one_line(args: list[str], message: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", *args, "--out", str(tmp_path / "x"), "--deals", "2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("krypenv eval: error:") and message in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


