"""The benchmark of learners (experiments/learners.py, docs/research/learners.md): the page's tables are the CSVs',
the tuning picks by the last iterate, OpenSpiel's NFSP is handed every reward in the driver's loop, an exported policy
measured by ``krypenv exploit`` has the driver's NashConv, Kungsholmskille's measurement (expert's margin,
experiments/learners_duel.py) plays each seat's policy in its seat, and bad arguments are refused by name."""

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
import learners_duel
import learners_results

PAGE = ROOT / "docs" / "research" / "learners.md"
CSV = ROOT / "docs" / "research" / "learners-tiny.csv"
KILLE_CSV = ROOT / "docs" / "research" / "learners-kille.csv"
MICRO = "ranks=A-2-3,hand=2,table=2"  # a cut of tiny: 882 information states, a measurement in a second
ROW = re.compile(r"^\| (?:ppo|mmd|nfsp|deepcfr|escher|cfr\+) \|.*\|$", re.MULTILINE)
GAMES = [("krypkasino", CSV, learners_results.HEADER), ("kungsholmskille", KILLE_CSV, learners_results.HEADER_KILLE)]


# ---------------------------------------------------------------- the page and its CSVs
@pytest.mark.parametrize(("game", "path", "header"), GAMES)
def test_the_pages_tables_are_the_csvs(game: str, path: Path, header: str) -> None:
    """docs/research/learners.md's benchmark table of each game (the rows under its header) is
    learners_results.table_rows of its CSV, row for row, under the header the CSV's measure names."""
    page = PAGE.read_text(encoding="utf-8")
    assert page.count(header) == 1, game
    rows = page.split(header, 1)[1].strip("\n").split("\n\n", 1)[0]
    assert ROW.findall(rows) == learners_results.table_rows(path)
    assert learners_results.table(path).split("\n")[0] == header.split("\n")[0]


@pytest.mark.parametrize(("game", "path", "header"), GAMES)
def test_the_csv_has_every_learner_and_seed(game: str, path: Path, header: str) -> None:
    """Every configuration of every learner was tuned on seeds 1-3, and each learner's tuned-best configuration ran
    on seeds 11-13 (CFR+ has one configuration and no tuning, and needs Krypkasino's tree): nothing left out."""
    done = set(learners_results.runs(path))
    for learner in learners.CONFIGS:
        if learner == "cfr+" and game != "krypkasino":
            assert not any(run[0] == learner for run in done)
            continue
        if learner != "cfr+":
            configs = learners.configs(game, learner)
            assert {(learner, c, "tune", s) for c in configs for s in (1, 2, 3)} <= done, learner
        best = learners.best_config(path, learner)
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


def test_a_kungsholmskille_csv_is_tabled_by_expert_margin(tmp_path: Path) -> None:
    """learners_results reads the measure the CSV's header names (expert's margin, which may be negative, under its
    own table header); best_config ranks by it; a CSV of neither measure is refused naming the file."""
    path = tmp_path / "kille.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=learners.GAME_FIELDS["kungsholmskille"])
        w.writeheader()
        for i, (config, seed, gain) in enumerate([("a", 1, 2.0), ("a", 1, -0.5), ("b", 1, 0.25)]):
            w.writerow({"learner": "ppo", "config": config, "phase": "tune", "seed": seed, "decisions": 10 * i,
                        "cpu_seconds": i, "seconds": i, "expert_margin": gain, "margin_half": 0.1})
    assert learners_results.table(path).split("\n") == [
        *learners_results.HEADER_KILLE.split("\n"),
        "| ppo | a | tune | 1 | 1 | 10 | -0.5000 | 0.0000 | -0.5000 | -0.5000 |",
        "| ppo | b | tune | 1 | 2 | 20 | 0.2500 | 0.0000 | 0.2500 | 0.2500 |"]
    assert learners.best_config(path, "ppo") == "a"
    other = tmp_path / "other.csv"
    other.write_text("learner,config\n")
    with pytest.raises(ValueError, match="other.csv: no column nash_conv or expert_margin"):
        learners_results.table(other)


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
    (["nfsp", "--config", "large"], "--config must be one of default, adam for nfsp on krypkasino, got 'large'"),
    (["ppo", "--budget", "0"], "--budget must be a positive number of CPU seconds, got 0.0"),
    (["ppo", "--budget", "nan"], "--budget must be a positive number of CPU seconds, got nan"),
    (["ppo", "--evals", "0"], "--evals must be at least 1, got 0"),
    (["ppo", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    (["ppo", "--rules", "ranks"], "--rules: expected key=value pieces"),
    (["ppo", "--game", "hearts"], "invalid choice: 'hearts'"),
    (["cfr+", "--game", "kungsholmskille"], "cfr+ needs the whole tree, which kungsholmskille has none of"),
    (["deepcfr", "--game", "kungsholmskille"],
     "--config must be one of small, tiny for deepcfr on kungsholmskille, got 'default'"),
    (["deepcfr", "--config", "tiny"], "--config must be one of default, small for deepcfr on krypkasino, got 'tiny'"),
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
    with pytest.raises(SystemExit):  # a Krypkasino CSV takes no Kungsholmskille rows
        learners.parse_args(["ppo", "--game", "kungsholmskille", "--out", str(CSV)])
    assert "expert_margin,margin_half" in capsys.readouterr().err


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


# ---------------------------------------------------------------- Kungsholmskille: expert's margin
def test_seat_policies_play_each_seat_its_own_policy() -> None:
    """learners_duel.SeatPolicies: a row of seat s takes seats[s]'s probabilities (one function: every seat's),
    renormalised over the legal actions; a policy that leaves the legal actions nothing is refused."""
    import numpy as np

    from krypenv.agent_api import DecisionBatch

    mask = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]], np.int8)
    batch = DecisionBatch(np.zeros((3, 2), np.int8), mask, np.array([0, 1, 0]), None, np.arange(3))  # type: ignore

    def first(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        return np.array([[1.0, 0.0, 0.0]] * len(obs)) + 0.5 * legal  # weight off the legal actions too

    def last(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        return np.array([[0.0, 0.0, 1.0]] * len(obs)) + 0.5 * legal

    p = learners_duel.SeatPolicies([first, last]).action_probabilities(batch)
    assert p == pytest.approx(np.array([[0.75, 0.25, 0], [0.2, 0.2, 0.6], [0, 0.5, 0.5]]))
    one = learners_duel.SeatPolicies([last]).action_probabilities(batch)
    assert one == pytest.approx(np.array([[0.5, 0.5, 0], [0.2, 0.2, 0.6], [0, 0.25, 0.75]]))
    with pytest.raises(ValueError, match="no probability"):
        learners_duel.SeatPolicies([lambda o, legal: 1.0 - legal]).action_probabilities(batch)


def test_the_margin_of_the_uniform_policy_is_random_agents() -> None:
    """expert's margin against the uniform policy is the head to head of expert over the registered ``random``
    agent on the same deck sets, sign and all (both draw one uniform of the game's stream a decision)."""
    from krypenv.eval.kungsholmskille import EvalConfig, evaluate

    from krypenv import agents

    gain, half = learners_duel.margin([learners_duel.uniform], decks=60)
    config = EvalConfig(agents=("random", "expert"), players=2, deals=60, seed=learners_duel.SEED, preset="small",
                        pot_deals=1, workers=1)
    (pair,) = evaluate(config, [agents.load(a, game="kungsholmskille") for a in config.agents]).pairs
    assert gain == pytest.approx(-pair.diff.mean) and half == pytest.approx(pair.diff.half)
    assert gain > 0


def test_counted_counts_the_players_actions_of_both_games() -> None:
    """learners.Counted: the actions applied at player nodes of our OpenSpiel games while it is open, not chance's."""
    pytest.importorskip("pyspiel")
    import numpy as np

    from krypenv.openspiel.exploit import load_game

    rng = np.random.default_rng(0)
    for game in (load_game("krypkasino", "tiny", 2), load_game("kungsholmskille", "small", 2, pot_deals=1)):
        with learners.Counted(game) as count:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probs = zip(*state.chance_outcomes())
                    state.apply_action(int(rng.choice(actions, p=probs)))
                else:
                    state.apply_action(int(rng.choice(state.legal_actions())))
        assert count.n == sum(1 for h in state.full_history() if h.player >= 0) > 0
        assert type(state)._apply_action is count.original  # restored


@pytest.mark.parametrize("learner", ["mmd", "nfsp"])
def test_a_kungsholmskille_run_writes_expert_margins(learner: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with --game kungsholmskille measures expert's margin (learners_duel.margin of the run's own policy) into
    Kungsholmskille's columns; its export is an mlp checkpoint of that game."""
    pytest.importorskip("pyspiel")
    if learner == "nfsp":
        pytest.importorskip("tree", reason="open_spiel.python.pytorch needs dm-tree (the openspiel extra)")
    seen: list[int] = []

    def margin(seats: list[Any], decks: int = 0, seed: int = 0) -> tuple[float, float]:
        seen.append(len(seats))
        return 1.25, 0.5

    monkeypatch.setattr(learners_duel, "margin", margin)
    out = tmp_path / "runs.csv"
    learners.main([learner, "--game", "kungsholmskille", "--budget", "0.5", "--evals", "1", "--out", str(out),
                   "--export", str(tmp_path / "export"), "--log-dir", str(tmp_path / "logs"), "--no-progress",
                   "--no-tensorboard"])
    (row,) = learners.last_iterates(out)
    assert out.read_text().split("\n", 1)[0] == ",".join(learners.GAME_FIELDS["kungsholmskille"])
    assert (row["expert_margin"], row["margin_half"]) == ("1.25", "0.5") and int(row["decisions"]) > 0
    assert seen == [1 if learner == "mmd" else 2]  # NFSP: a network per OpenSpiel player, each in its seat
    assert learners.best_config(out, learner) == "default"
    if learner == "mmd":
        from krypenv.agents.mlp import MLPAgent

        agent = MLPAgent(tmp_path / "export" / "mmd-default-s1.npz")
        assert (agent.trained_game, agent.card["preset"], agent.card["rules"]) == ("kungsholmskille", "small",
                                                                                   "pot_deals=1")


def test_deep_cfr_stops_its_traversals_when_the_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_deepcfr checks the budget after every traversal: once spent, each seat's traversals of the iteration stop
    (one more for the next seat, which checks after its first) and the advantage networks train on those done."""
    pytest.importorskip("pyspiel")
    pytest.importorskip("tree", reason="open_spiel.python.pytorch needs dm-tree (the openspiel extra)")
    from open_spiel.python.pytorch import deep_cfr

    calls: list[int] = []
    traverse = deep_cfr.DeepCFRSolver._traverse_game_tree

    def counted(self: Any, state: Any, player: int) -> Any:
        if state is self._root_node:
            calls.append(player)
        return traverse(self, state, player)

    class Budget:
        def done(self) -> bool:
            return bool(calls)  # one iteration

        def due(self) -> bool:
            return False

        def spent(self) -> bool:
            return len(calls) >= 3

    monkeypatch.setattr(deep_cfr.DeepCFRSolver, "_traverse_game_tree", counted)
    args = learners.parse_args(["deepcfr", "--rules", MICRO])
    cfg = {**learners.CONFIGS["deepcfr"]["small"], "num_traversals": 10, "advantage_network_train_steps": 2}
    learners.run_deepcfr(args, Budget(), cfg)  # type: ignore[arg-type]
    assert calls == [0, 0, 0, 1]


@pytest.mark.parametrize("shown", [True, False])
def test_the_driver_shows_progress_and_logs_to_tensorboard(shown: bool, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    """--progress draws a bar of CPU seconds on stderr and --tensorboard writes event files under the run's log
    folder, as train.py does; --no-progress and --no-tensorboard leave both out."""
    pytest.importorskip("pyspiel")
    flags = ["--progress", "--tensorboard"] if shown else ["--no-progress", "--no-tensorboard"]
    learners.main(["cfr+", "--rules", MICRO, "--budget", "0.2", "--evals", "1", "--out", str(tmp_path / "r.csv"),
                   "--log-dir", str(tmp_path / "logs"), *flags])
    err = capsys.readouterr().err
    run = tmp_path / "logs" / "cfr+-default-s1"
    assert ("cpu/s" in err) == shown, err
    assert bool(list(run.glob("tb/events.out.tfevents.*"))) == shown
    assert (run / "log.csv").is_file()
