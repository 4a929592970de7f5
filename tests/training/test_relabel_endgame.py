"""experiments/relabel_endgame.py: a label set's 2-player endgame labels made exact, the rest copied unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from krypenv.agents.krypkasino import endgame as E

from krypenv import agents
from krypenv.training.labels import Labels, LabelSet
from tests.agents.krypkasino.test_heuristics import decisions_of

ROOT = Path(__file__).resolve().parents[2]


def labels_of_random_games(seed: int) -> tuple[Labels, np.ndarray]:
    """Labels of every decision with two or more legal actions of 3 random games (values: the legal actions' index
    order, teacher: the first legal action), and the endgame agent's exact values at each (NaN rows elsewhere)."""
    rows, exact = [], []
    solver = agents.load("endgame:random")
    for core, batch in decisions_of(2, seed, n=3):
        solvable = E.solvable_rows(core.deals.state, np.asarray(batch.envs, np.int64), 2)
        for k in range(len(batch)):
            mask = batch.mask[k] != 0
            if mask.sum() < 2:
                continue
            values = np.where(mask, np.arange(mask.size, dtype=np.float32), np.nan)
            rows.append((batch.obs[k], mask, values, int(np.flatnonzero(mask)[0]), int(batch.seats[k]),
                         core.state[int(batch.envs[k])].copy()))
            exact.append(solver.values(E._sub(batch, np.array([k])))[0][0] if solvable[k] else
                         np.full(mask.size, np.nan))
    obs, mask, values, teacher, seat, state = (np.array(x) for x in zip(*rows))
    n = len(rows)
    labels = Labels(obs=obs, mask=mask, values=values.astype(np.float32), teacher=teacher.astype(np.int16),
                    played=teacher.astype(np.int16), by_teacher=np.ones(n, bool), seat=seat.astype(np.int8),
                    seed=np.full(n, seed, np.int64), state=state)
    return labels, np.array(exact)


def test_endgame_labels_become_exact_and_the_rest_is_copied(tmp_path: Path) -> None:
    """Every solvable label gets the solver's values and action, every other array and label is byte-equal, and a
    second run over the same folder writes nothing new (resumable)."""
    labels, exact = labels_of_random_games(17)
    run = tmp_path / "run"
    run.mkdir()
    (run / "args.json").write_text(json.dumps({"game": "krypkasino", "players": 2, "preset": "standard"}))
    card = {"game": "krypkasino", "players": 2, "preset": "standard", "obs_size": labels.obs.shape[1],
            "n_actions": labels.mask.shape[1], "state_size": labels.state.shape[1]}
    LabelSet(run / "labels", card).write(0, 0, labels, {"teacher": "test"})
    out = tmp_path / "exact"
    cmd = [sys.executable, str(ROOT / "experiments" / "relabel_endgame.py"), str(run), "--out", str(out)]
    done = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    solved = ~np.isnan(exact).all(axis=1)
    assert done["labels"] == len(labels) and done["changed"] == int(solved.sum()) > 10 and (~solved).sum() > 50
    new, shard_card = LabelSet(out / "labels").read(out / "labels" / "it000-00000.npz")
    np.testing.assert_array_equal(new.values[solved], exact[solved].astype(np.float32))
    np.testing.assert_array_equal(new.values[~solved], labels.values[~solved])
    best = np.nanargmax(exact[solved], axis=1)
    np.testing.assert_array_equal(new.values[solved][np.arange(solved.sum()), new.teacher[solved]],
                                  exact[solved][np.arange(solved.sum()), best].astype(np.float32))
    np.testing.assert_array_equal(new.teacher[~solved], labels.teacher[~solved])
    for k in ("obs", "mask", "played", "by_teacher", "seat", "seed", "state"):
        np.testing.assert_array_equal(getattr(new, k), getattr(labels, k))
    assert shard_card["endgame"] == "exact" and shard_card["endgame_labels"] == int(solved.sum())
    again = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
    assert again["labels"] == 0


def test_other_games_and_player_counts_are_refused(tmp_path: Path) -> None:
    """Labels of 3 players (or of Kungsholmskille) are refused with the reason."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "args.json").write_text(json.dumps({"game": "krypkasino", "players": 3, "preset": "standard"}))
    res = subprocess.run([sys.executable, str(ROOT / "experiments" / "relabel_endgame.py"), str(run), "--out",
                          str(tmp_path / "o")], check=False, capture_output=True, text=True)
    assert res.returncode != 0 and "2-player Krypkasino only" in res.stderr
