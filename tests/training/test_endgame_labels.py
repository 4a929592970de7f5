"""experiments/endgame_labels.py: exact last-round labels of a student's own games, checked against re-solving the
stored states (experiments/relabel_endgame.py) and a plain replay of the student."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import endgame_labels as EL
import relabel_endgame as R
from krypenv.agents.krypkasino.endgame import solvable_rows
from krypenv.agents.krypkasino.pimc import game_vector

from krypenv import agents
from krypenv.krypkasino.config import C_E0
from krypenv.training import distill as D
from krypenv.training.labels import LabelSet

STUDENT = str(ROOT / "checkpoints" / "exit-2p-endgame.npz")


@pytest.fixture(scope="module")
def shard() -> tuple:
    """One shard of 24 games, the student greedy (no exploration)."""
    return EL.label_shard(STUDENT, "standard", 5, 0, 0, 24, 0.0)


def test_every_label_is_a_solved_last_round_decision_with_the_solvers_values(shard) -> None:
    """Each label is a 2-player deal with an empty deck and two or more legal actions, and its values and action are
    what re-solving its stored state row gives (relabel_endgame's independent path from the saved state)."""
    labels, card = shard
    core = D.training_part("krypkasino").distill_core(2, "standard", 1)
    st = np.ascontiguousarray(labels.state)
    assert len(labels) > 24 and solvable_rows(st, np.arange(len(labels), dtype=np.int64), 2).all()
    assert (labels.mask.sum(axis=1) >= 2).all() and not labels.by_teacher.any()
    again, changed = R.relabel(labels, game_vector(core.rules), int(core.packed[C_E0]))
    assert changed == len(labels)
    assert np.array_equal(np.isnan(again.values), np.isnan(labels.values))
    assert np.array_equal(np.nan_to_num(again.values), np.nan_to_num(labels.values))
    assert np.array_equal(again.teacher, labels.teacher)
    assert card["teacher"].startswith("endgame") and card["games"] == 24


def test_the_student_plays_every_decision_and_the_last_round_is_all_labelled(shard) -> None:
    """Replaying the same seeds with the student greedy reaches the same labelled decisions, in order, and every
    last-round decision with two or more legal actions is among them; the played action is the student's."""
    labels, _ = shard
    core = D.training_part("krypkasino").distill_core(2, "standard", 24)
    core.seed(D.shard_seeds(5, 0, 0, 24))
    core.reset()
    net = agents.load(f"mlp:{STUDENT}", game="krypkasino")
    status = np.empty(24, np.int64)
    seen, played = [], []
    while True:
        envs, seats = core.pending()
        if envs.size == 0:
            break
        batch = core.decisions(envs, seats)
        act = net.action_probabilities(batch).argmax(axis=1)
        for k, e in enumerate(envs):
            if solvable_rows(core.deals.state, np.array([e], np.int64), 2)[0] and batch.mask[k].sum() >= 2:
                seen.append(core.state[e].copy())
                played.append(act[k])
        core._act_external(envs, act, status[:envs.size])
    assert len(seen) == len(labels)
    order = np.lexsort(np.asarray(seen).T[::-1])
    mine = np.lexsort(labels.state.T[::-1])
    assert np.array_equal(np.asarray(seen)[order], labels.state[mine])
    assert np.array_equal(np.asarray(played)[order], labels.played[mine])


def greedy_share(labels) -> tuple[int, np.ndarray]:
    """(how many played actions are not the student's most probable, (N,) 1 − the most probable action's
    probability: the chance that a draw from the policy leaves it), the probabilities recomputed in torch."""
    import torch

    from krypenv.training.student import from_mlp, minibatch, training_data

    student, _ = from_mlp(STUDENT)
    student.eval()
    core = D.training_part("krypkasino").distill_core(2, "standard", 1)
    data = training_data(D.Args(), labels, core, True)
    with torch.no_grad():
        obs, mask, pairs, feats, _, _ = minibatch(data, np.arange(len(labels)))
        p = torch.softmax(student(obs, mask, pairs, feats)[0], dim=-1).numpy().astype(np.float64)
    return int((labels.played != p.argmax(axis=1)).sum()), 1 - p.max(axis=1)


@pytest.mark.parametrize("explore", [0.5, 1.0])
def test_exploration_draws_from_the_policy_at_its_rate(explore: float) -> None:
    """With --explore e a decision is drawn from the student's policy with probability e, so the played action leaves
    its most probable one in e · (1 − p_max) of the decisions in expectation: the count is within 4.5 standard
    deviations of that (the labelled decisions are independent draws given their states)."""
    labels, _ = EL.label_shard(STUDENT, "standard", 6, 0, 0, 256, explore)
    off, leave = greedy_share(labels)
    q = explore * leave  # each decision leaves the most probable action with probability q
    assert abs(off - q.sum()) < 4.5 * np.sqrt((q * (1 - q)).sum()) + 1, (off, q.sum(), np.sqrt((q * (1 - q)).sum()))


def test_the_command_resumes(tmp_path: Path) -> None:
    """A shard already written is kept (the run resumes with the same command)."""
    cmd = [sys.executable, str(ROOT / "experiments" / "endgame_labels.py"), STUDENT, "--out", str(tmp_path / "r"),
           "--shards", "1", "--games-per-shard", "8"]
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
    path = LabelSet(tmp_path / "r" / "labels").shard_path(0, 0)
    stamp = path.stat().st_mtime_ns
    again = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    assert path.stat().st_mtime_ns == stamp and "shard 0" not in again.stdout
    bad = subprocess.run([*cmd, "--preset", "nosuch"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert bad.returncode != 0 and bad.stderr.startswith("endgame_labels: error:") and "Traceback" not in bad.stderr


@pytest.mark.parametrize(("option", "bad", "good"), [
    ("--shards", ["0", "100000"], ["1", "99999"]), ("--games-per-shard", ["0", "4097"], ["1", "4096"]),
    ("--iteration", ["-1", "1000"], ["0", "999"]), ("--explore", ["-0.1", "1.01"], ["0", "1"]),
    ("--seed", ["-1"], ["0"])])
def test_each_option_is_checked_at_both_edges(option: str, bad: list[str], good: list[str]) -> None:
    """Each bounded option refuses the values just outside its range with a message naming it, and takes its
    edges."""
    for value in bad:
        with pytest.raises(SystemExit, match=f"^{option} must"):
            EL.parse([STUDENT, "--out", "x", f"{option}={value}"])
    for value in good:
        got = EL.parse([STUDENT, "--out", "x", f"{option}={value}"])
        assert float(getattr(got, option[2:].replace("-", "_"))) == float(value)
