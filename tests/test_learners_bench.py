"""The benchmark of learners (experiments/learners.py, docs/research/learners.md): the page's table is the CSV's, the
tuning picks by the last iterate, OpenSpiel's NFSP is handed every reward in the driver's loop, an exported policy
measured by ``krypenv exploit`` has the driver's NashConv, and bad arguments are refused by name."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import learners
import learners_results

PAGE = ROOT / "docs" / "research" / "learners.md"
CSV = ROOT / "docs" / "research" / "learners-tiny.csv"
MICRO = "ranks=A-2-3,hand=2,table=2"  # a cut of tiny: 882 information states, a measurement in a second
ROW = re.compile(r"^\| (?:ppo|mmd|nfsp|deepcfr|escher|cfr\+) \|.*\|$", re.MULTILINE)


# ---------------------------------------------------------------- the page and its CSV
def test_the_pages_table_is_the_csvs() -> None:
    """docs/research/learners.md's benchmark table is learners_results.table_rows of the CSV, row for row."""
    page = PAGE.read_text(encoding="utf-8")
    assert learners_results.HEADER in page
    assert ROW.findall(page) == learners_results.table_rows(CSV)


def test_the_csv_has_every_learner_and_seed() -> None:
    """Every configuration of every learner was tuned on seeds 1-3, and each learner's tuned-best configuration ran
    on seeds 11-13 (CFR+ has one configuration and no tuning): nothing left out."""
    done = set(learners_results.runs(CSV))
    for learner, configs in learners.CONFIGS.items():
        if learner != "cfr+":
            assert {(learner, c, "tune", s) for c in configs for s in (1, 2, 3)} <= done, learner
        best = learners.best_config(CSV, learner)
        assert {(learner, best, "final", s) for s in (11, 12, 13)} <= done, learner
    assert {run[2] for run in done} == {"tune", "final"}


def write_rows(path: Path, rows: list[tuple[str, str, str, int, float]]) -> None:
    """A driver CSV of (learner, config, phase, seed, nash_conv) rows."""
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=learners.FIELDS)
        w.writeheader()
        for i, (learner, config, phase, seed, nash) in enumerate(rows):
            w.writerow({"learner": learner, "config": config, "phase": phase, "seed": seed, "decisions": 100 * i,
                        "cpu_seconds": i, "seconds": i, "nash_conv": nash})


def test_tuning_picks_the_best_mean_last_iterate(tmp_path: Path) -> None:
    """best_config reads each run's last row (not its best one) and averages over the seeds; the table likewise."""
    path = tmp_path / "runs.csv"
    write_rows(path, [("nfsp", "a", "tune", 1, 0.1), ("nfsp", "a", "tune", 1, 3.0),  # a: best 0.1, last 3.0
                      ("nfsp", "a", "tune", 2, 2.0),
                      ("nfsp", "b", "tune", 1, 1.0), ("nfsp", "b", "tune", 1, 2.0), ("nfsp", "b", "tune", 2, 2.8),
                      ("nfsp", "a", "final", 11, 0.01), ("ppo", "c", "tune", 1, 0.5)])
    assert learners.best_config(path, "nfsp") == "b"  # b: 2.4 against a's 2.5
    assert learners.best_config(path, "cfr+") == "default"
    rows = learners_results.table_rows(path)
    assert rows[0] == "| ppo | c | tune | 1 | 7 | 700 | 0.5000 | 0.0000 | 0.5000 | 0.5000 |"
    assert rows[1] == "| nfsp | a | tune | 1, 2 | 2 | 150 | 2.5000 | 0.7071 | 2.0000 | 3.0000 |"
    assert rows[2] == "| nfsp | b | tune | 1, 2 | 4 | 450 | 2.4000 | 0.5657 | 2.0000 | 2.8000 |"
    assert rows[3].startswith("| nfsp | a | final | 11 |")


# ---------------------------------------------------------------- OpenSpiel's NFSP in the driver's loop
class Seen:
    """An agent in the loop and the rewards it learns from: those of the steps after its first action."""

    def __init__(self, agent: Any, player: int) -> None:
        self.agent, self.player, self.acted, self.seen = agent, player, False, 0.0

    def step(self, time_step: Any) -> Any:
        if self.acted and time_step.rewards is not None:
            self.seen += time_step.rewards[self.player]
        out = self.agent.step(time_step)
        self.acted = self.acted or not time_step.last()
        return out


@pytest.mark.parametrize(("name", "params"), [("python_krypkasino", {"players": 2, "preset": "tiny"}),
                                              ("python_kungsholmskille", {"players": 2, "preset": "small"})])
def test_nfsp_is_handed_every_reward(name: str, params: dict) -> None:
    """learners.nfsp_episode with OpenSpiel's NFSP agents in both seats: over each episode the rewards each agent
    learns from sum to its returns(), and the decisions counted are the episode's player actions."""
    pyspiel = pytest.importorskip("pyspiel")
    pytest.importorskip("tree", reason="open_spiel.python.pytorch needs dm-tree (the openspiel extra)")
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import nfsp

    import krypenv.openspiel  # noqa: F401  (registers the games)

    env = rl_environment.Environment(pyspiel.load_game(name, params), seed=3)
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    agents = [Seen(nfsp.NFSP(p, size, actions, [16], reservoir_buffer_capacity=1000, anticipatory_param=0.1,
                             replay_buffer_capacity=1000,
                             min_buffer_size_to_learn=10, batch_size=8, learn_every=4, seed=p), p) for p in range(2)]
    for _ in range(6):
        for a in agents:
            a.acted, a.seen = False, 0.0
        decisions = learners.nfsp_episode(env, agents)
        state = env.get_state
        assert [a.seen for a in agents] == pytest.approx(state.returns(), abs=1e-9)
        played = [h.action for h in state.full_history()]
        assert decisions == len(played) - sum(1 for _ in chance_actions(state))
    assert all(len(a.agent._rl_agent._replay_buffer) > 0 for a in agents)  # their DQNs stored the transitions


def chance_actions(state: Any) -> list[int]:
    """The actions of the chance player in ``state``'s history."""
    return [h.action for h in state.full_history() if h.player < 0]


# ---------------------------------------------------------------- exports read by krypenv exploit
@pytest.mark.parametrize("learner", ["cfr+", "mmd", "nfsp"])
def test_the_export_measures_as_the_drivers_row(learner: str, tmp_path: Path) -> None:
    """A run on a cut of tiny, --export: ``krypenv exploit`` on the exported policy (a tabular file for cfr+ and
    OpenSpiel's learners, an mlp checkpoint for ppo and mmd) gives the last row's NashConv."""
    import json

    pytest.importorskip("pyspiel")
    from krypenv.cli import main as cli

    out = tmp_path / "runs.csv"
    learners.main([learner, "--rules", MICRO, "--budget", "0.5", "--evals", "1", "--out", str(out), "--export",
                   str(tmp_path / "export"), "--log-dir", str(tmp_path / "logs"), "--no-progress", "--no-tensorboard"])
    last = learners.last_iterates(out)[-1]
    if learner == "nfsp":
        pytest.importorskip("tree", reason="open_spiel.python.pytorch needs dm-tree (the openspiel extra)")
    spec = {"mmd": "mlp:{}/mmd-default-s1.npz"}.get(learner, f"tabular:{{}}/{learner}-default-s1.json.gz")
    json_out = tmp_path / "exploit.json"
    with json_out.open("w") as f:
        sys_stdout, sys.stdout = sys.stdout, f
        try:
            cli(["exploit", "--preset", "tiny", "--rules", MICRO, "--agent", spec.format(tmp_path / "export"),
                 "--json"])
        finally:
            sys.stdout = sys_stdout
    measured = json.loads(json_out.read_text())["nash_conv"]
    # a tabular file keeps 6 decimals of each probability (krypenv.openspiel.policy): 3e-6 apart on cfr+'s table
    assert measured == pytest.approx(float(last["nash_conv"]), abs=1e-4)


# ---------------------------------------------------------------- argument checks
@pytest.mark.parametrize(("argv", "message"), [
    (["nfsp", "--config", "large"], "--config must be one of default, adam for nfsp, got 'large'"),
    (["ppo", "--budget", "0"], "--budget must be a positive number of CPU seconds, got 0.0"),
    (["ppo", "--budget", "nan"], "--budget must be a positive number of CPU seconds, got nan"),
    (["ppo", "--evals", "0"], "--evals must be at least 1, got 0"),
    (["ppo", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    (["ppo", "--rules", "ranks"], "--rules: expected key=value pieces"),
    (["ppo", "--game", "kungsholmskille"], "invalid choice: 'kungsholmskille'"),
    (["sarsa"], "invalid choice: 'sarsa'"),
])
def test_bad_arguments_are_refused_by_name(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    """Each bad value ends the driver with argparse's exit status 2 and a message naming it, before any run."""
    with pytest.raises(SystemExit) as e:
        learners.parse_args(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_an_out_file_of_other_columns_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Rows are never appended under another CSV's header."""
    other = tmp_path / "other.csv"
    other.write_text("run,learner\n")
    with pytest.raises(SystemExit):
        learners.parse_args(["ppo", "--out", str(other)])
    assert "header is not learner,config" in capsys.readouterr().err


def test_escher_runs_differ_by_seed() -> None:
    """learners.escher_agent: two seeds start ESCHER's networks and numpy's stream differently, one seed alike (its
    Agent seeds everything with 42 by itself)."""
    pytest.importorskip("pyspiel")
    pytest.importorskip("tree", reason="open_spiel.python.pytorch needs dm-tree (the openspiel extra)")
    import numpy as np

    from krypenv.openspiel.exploit import load_game

    game = load_game("krypkasino", "tiny", 2, ranks="A-2-3", hand=2, table=2)
    small = {f"{k}_memory_capacity": 16 for k in ("value", "regret", "avg_policy")}

    def start(seed: int) -> tuple[list[np.ndarray], float]:
        agent = learners.escher_agent(game, small, seed)
        weights = [p.detach().numpy().copy() for net in [agent.avg_policy_net, *agent.regret_nets, *agent.value_nets]
                   for p in net.parameters()]
        return weights, float(np.random.random())

    (w1, r1), (w1b, r1b), (w2, r2) = start(1), start(1), start(2)
    assert all(np.array_equal(a, b) for a, b in zip(w1, w1b)) and r1 == r1b
    assert not any(np.array_equal(a, b) for a, b in zip(w1, w2) if a.ndim == 2)  # every weight matrix differs
    assert r1 != r2
