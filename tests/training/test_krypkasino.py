"""train.py end to end on a tiny budget, its checkpoint as ``ppo:PATH``, and its one-line argument errors."""

from __future__ import annotations

import csv
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch
from krypenv.eval.krypkasino import EvalConfig, evaluate

from krypenv import agents

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--total-timesteps", "1024", "--num-envs", "16", "--n-steps", "32", "--batch-size", "128", "--n-epochs", "2",
        "--net-arch", "32,32", "--snapshot-every", "256", "--eval-every", "512", "--eval-deals", "3",
        "--final-deals", "2", "--torch-threads", "1"]


def train(*extra: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "train.py", "--out-dir", str(tmp / "runs"), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("train")
    out = train(*TINY, "--run-name", "tiny", "--seed", "5", "--save-to", str(tmp / "ckpt" / "p2.zip"), tmp=tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    return tmp, out


def test_outputs(run):
    tmp, out = run
    d = tmp / "runs" / "tiny"
    for name in ("args.json", "eval.csv", "learning_curve.png", "final.zip", "final_eval.txt", "summary.json",
                 "checkpoints/latest.zip", "checkpoints/best.zip"):
        assert (d / name).is_file(), name
    assert list((d / "tb").rglob("events.out.tfevents.*"))
    assert json.loads((d / "args.json").read_text())["seed"] == 5
    with open(d / "eval.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["env_steps"]) for r in rows] == sorted(int(r["env_steps"]) for r in rows) and len(rows) >= 2
    assert all(float(r["ci_low"]) <= float(r["diff"]) <= float(r["ci_high"]) for r in rows)
    # the final table: the learner against every baseline, with the harness's head-to-head lines
    report = (d / "final_eval.txt").read_text()
    for name in ("learner", "random", "greedy", "creeper", "expert"):
        assert name in report
    assert "learner - expert" in report or "expert - learner" in report
    assert report.splitlines()[0] in out.stdout
    note = "note: these figures vary with the training seed and the machine"
    assert out.stdout.index(note) < out.stdout.index(report.splitlines()[0])  # said before the table
    assert "docs/results/krypkasino-training.md, 'The quick start over seeds'" in out.stdout
    summary = json.loads((d / "summary.json").read_text())
    assert summary["env_steps"] >= 1024 and "final_vs_expert" in summary
    # the machine the figures are this run's on: the file, the summary and the printed line agree
    host = json.loads((d / "machine.json").read_text())
    assert summary["machine"] == host and host["cpus"] >= 1 and host["torch"] == torch.__version__
    assert f"machine: {host['cpu']}, {host['cpus']} cores, torch {host['torch']} at {host['cpu_capability']}" \
        in out.stdout
    # --save-to: the final policy without the optimizer state; the run's final.zip resumes training
    import zipfile

    from sb3_contrib import MaskablePPO

    slim = zipfile.ZipFile(tmp / "ckpt" / "p2.zip").namelist()
    assert "policy.pth" in slim and "krypenv.json" in slim and "policy.optimizer.pth" not in slim
    assert agents.load(f"ppo:{tmp / 'ckpt' / 'p2.zip'}").meta["optimizer"] is False
    MaskablePPO.load(d / "final.zip", device="cpu")


@pytest.mark.parametrize(("setting", "capability"), [("default", "DEFAULT"), ("avx2", "AVX2")])
def test_machine_names_the_simd_level_torch_runs_at(setting: str, capability: str) -> None:
    """The run's machine record says the SIMD level torch's kernels take, ATEN_CPU_CAPABILITY's when it is set,
    and every float-path setting of the environment (and only those)."""
    import os

    from krypenv.training.common import FLOAT_ENV

    if capability == "AVX2" and torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("this processor has no AVX2")
    code = "import json; from krypenv.training.common import machine; print(json.dumps(machine()))"
    env = {k: v for k, v in os.environ.items() if k not in FLOAT_ENV}
    env.update(ATEN_CPU_CAPABILITY=setting, MKL_ENABLE_INSTRUCTIONS="AVX2", KRYPENV_UNRELATED="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    host = json.loads(out.stdout)
    assert host["cpu_capability"] == capability and host["torch"] == torch.__version__
    assert host["float_env"] == {"ATEN_CPU_CAPABILITY": setting, "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
    import gymnasium
    import sb3_contrib
    import stable_baselines3

    assert (host["stable-baselines3"], host["sb3-contrib"], host["gymnasium"]) == \
        (stable_baselines3.__version__, sb3_contrib.__version__, gymnasium.__version__)


def test_checkpoint_plays_as_ppo_spec(run):
    tmp, _ = run
    path = tmp / "ckpt" / "p2.zip"
    agent = agents.load(f"ppo:{path}")
    assert agent.meta["players"] == 2 and agent.meta["env_steps"] >= 1024
    assert agent.meta["args"]["net_arch"] == "32,32"
    # the harness checks every action against the mask; scores of a 2-player deal sum to 42
    res = evaluate(EvalConfig(agents=(f"ppo:{path}", "greedy"), players=2, deals=3, seed=4, records=False))
    assert (res.played.scores.sum(axis=1) == 42).all() and len(res.played.scores) == 6


def assert_same_weights(a: Path, b: Path) -> None:
    """The policies saved at ``a`` and ``b`` have identical weights."""
    wa, wb = agents.load(f"ppo:{a}").policy.state_dict(), agents.load(f"ppo:{b}").policy.state_dict()
    assert list(wa) == list(wb)
    for k in wa:
        np.testing.assert_array_equal(wa[k].numpy(), wb[k].numpy())


@pytest.mark.slow
def test_same_seed_same_policy(run, tmp_path):
    """Explicit seeding: the same arguments give the same weights, also with 256 games (numba's parallel kernels,
    whose OpenMP threads once made torch sum the move scorer's gradients in thread order)."""
    tmp, _ = run
    out = train(*TINY, "--run-name", "again", "--seed", "5", "--eval-every", "0", "--final-deals", "0", tmp=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert_same_weights(tmp / "runs" / "tiny" / "final.zip", tmp_path / "runs" / "again" / "final.zip")
    wide = ("--num-envs", "256", "--n-steps", "32", "--batch-size", "2048", "--n-epochs", "4", "--net-arch", "128,128",
            "--total-timesteps", "24576", "--eval-every", "0", "--final-deals", "0")
    for name in ("wide1", "wide2"):
        out = train(*TINY, *wide, "--run-name", name, tmp=tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
    assert_same_weights(tmp_path / "runs" / "wide1" / "final.zip", tmp_path / "runs" / "wide2" / "final.zip")


def test_policies_say_which_action_features_they_read(run, tmp_path):
    """The default network reads the move features (recorded in the checkpoint); --policy mlp the observation only."""
    from krypenv.agents.krypkasino.move_features import VERSION

    tmp, _ = run
    assert agents.load(f"ppo:{tmp / 'runs' / 'tiny' / 'final.zip'}").features == VERSION
    out = train(*TINY, "--run-name", "mlp", "--policy", "mlp", "--eval-every", "0", "--final-deals", "0",
                tmp=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    mlp = agents.load(f"ppo:{tmp_path / 'runs' / 'mlp' / 'final.zip'}")
    assert mlp.features is None and mlp.meta["args"]["policy"] == "mlp"
    res = evaluate(EvalConfig(agents=(f"ppo:{tmp_path / 'runs' / 'mlp' / 'final.zip'}", "expert"), players=2, deals=2,
                              seed=1, records=False))
    assert (res.played.scores.sum(axis=1) == 42).all()


def test_behaviour_cloning_warm_start(tmp_path):
    """--bc-decisions: the policy's -log p of the teacher's actions falls while it imitates, then PPO goes on."""
    import re

    out = train(*TINY, "--run-name", "bc", "--bc-decisions", "10240", "--eval-every", "0", "--final-deals", "0",
                tmp=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    nll = [float(x) for x in re.findall(r"behaviour cloning of expert: [\d,]+ decisions, -log p ([\d.]+)", out.stdout)]
    assert len(nll) == 2 and nll[1] < nll[0]
    assert "behaviour cloning done" in out.stdout
    assert agents.load(f"ppo:{tmp_path / 'runs' / 'bc' / 'final.zip'}").meta["args"]["bc_decisions"] == 10240


def test_init_from_starts_at_the_checkpoints_weights(run, tmp_path):
    """--init-from: with a vanishing learning rate the final weights are the checkpoint's, not a fresh network's."""
    import torch as th

    tmp, _ = run
    ckpt = tmp / "ckpt" / "p2.zip"
    out = train(*TINY, "--run-name", "init", "--seed", "6", "--init-from", str(ckpt), "--learning-rate", "1e-12",
                "--eval-every", "0", "--final-deals", "0", tmp=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    start = agents.load(f"ppo:{ckpt}").policy.state_dict()
    final = agents.load(f"ppo:{tmp_path / 'runs' / 'init' / 'final.zip'}").policy.state_dict()
    assert start.keys() == final.keys()
    for key in start:
        assert th.allclose(start[key], final[key], atol=1e-6), key
    assert agents.load(f"ppo:{tmp_path / 'runs' / 'init' / 'final.zip'}").meta["args"]["init_from"] == str(ckpt)


def test_init_from_a_student_file_starts_at_its_logits(tmp_path):
    """--init-from STUDENT.npz: with a vanishing learning rate the final checkpoint converts back to the student
    (train.py took its critic's sizes and scorer width, and its weights with the input scaling folded in)."""
    import torch as th
    from krypenv.agents.krypkasino.move_features import N_FEATS, VERSION

    from krypenv.training.student import Student, from_ppo

    th.manual_seed(0)
    student = Student(344, 105, [32, 32], [16], VERSION, N_FEATS, 24, np.linspace(0.1, 1.0, 344, dtype=np.float32))
    path = student.export(tmp_path / "s.npz", {"game": "krypkasino", "players": 2, "preset": "standard",
                                               "trained": {"args": {"value_scale": 0.1}}})
    out = train(*TINY, "--run-name", "student", "--init-from", str(path), "--learning-rate", "1e-12",
                "--eval-every", "0", "--final-deals", "0", tmp=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    back, meta = from_ppo(tmp_path / "runs" / "student" / "final.zip")
    assert meta["args"]["init_from"] == str(path)
    assert (back.sizes, back.value_sizes, back.scorer_width) == ([32, 32], [16], 24)
    rng = np.random.default_rng(1)
    obs = th.as_tensor(rng.uniform(0, 3, (20, 344)).astype(np.float32))
    mask = th.as_tensor(rng.random((20, 105)) < 0.3)
    b, a = np.nonzero(mask.numpy())
    pairs, feats = th.as_tensor(np.stack([b, a], axis=1)), th.as_tensor(rng.random((b.size, N_FEATS), np.float32))
    with th.no_grad():
        (want, want_v), (got, got_v) = student(obs, mask, pairs, feats), back(obs, mask, pairs, feats)
    np.testing.assert_allclose(got[mask].numpy(), want[mask].numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_v.numpy(), want_v.numpy(), rtol=1e-4, atol=1e-5)


def load_train_module():
    """train.py imported as a module (it lives at the repo root, outside the packages)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("train_script", mod)
    spec.loader.exec_module(sys.modules["train_script"])
    mod = sys.modules["train_script"]
    return mod


@pytest.mark.parametrize("argv, message", [
    (["--players", "7"], "--players must be 2 to 6, got 7"),
    (["--teams", "2"], "teams"),
    (["--net-arch", "64,x"], "--net-arch must be layer sizes"),
    (["--batch-size", "99999"], "--batch-size 99999 is larger than a rollout"),
    (["--league", "expert=1,nobody=2"], "unknown agent 'nobody'"),
    (["--league", "self=1"], "at least one fixed member"),
    (["--league", "expert"], "expected name=weight"),
    (["--num-envs", "0"], "--num-envs must be at least 1"),
    (["--set-aside", "hearts"], "set_aside"),
    (["--eval-deals", "1"], "at least 2 decks"),
    (["--policy", "cnn"], "--policy must be moves or mlp, got 'cnn'"),
    (["--bc-decisions", "100", "--bc-teacher", "nobody"], "unknown agent 'nobody'"),
    (["--bc-decisions", "-1"], "--bc-decisions must be >= 0"),
    (["--init-from", "nowhere.zip"], "nowhere.zip"),
    (["--init-from", "checkpoints/ppo-2p.zip", "--players", "3"], "was trained for 2 players, this run has 3"),
    (["--init-from", "checkpoints/ppo-2p.zip", "--net-arch", "32,32"], "has hidden layers 128,128"),
    (["--init-from", "checkpoints/ppo-2p.zip", "--policy", "mlp"], "reads action features moves/2"),
    (["--init-from", "checkpoints/ppo-2p.zip", "--preset", "tiny"], "cannot play the tiny one"),
    (["--preset", "huge"], "preset must be one of"),
    (["--preset", "tiny", "--players", "3"], "preset 'tiny' is for players 2"),
])
def test_bad_arguments_raise_before_writing(argv, message, tmp_path):
    train_mod = load_train_module()
    args = train_mod.parse_args([*argv, "--out-dir", str(tmp_path / "runs")])
    with pytest.raises(ValueError) as err:
        train_mod.main(args)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "runs").exists()


def test_k22_preset_run_records_its_deck_in_the_checkpoint_metadata():
    """K22: ``--preset tiny`` trains on the tiny env; the metadata names its deck keys, which check_deck then holds."""
    from krypenv.agents.krypkasino.ppo import check_deck

    from krypenv.krypkasino.rules import Rules
    from krypenv.training import krypkasino as part

    train_mod = load_train_module()
    args = train_mod.parse_args(["--preset", "tiny", "--players", "2"])
    g = part.game_config(args)
    meta = part.metadata(args, None)
    assert {k: meta[k] for k in ("ranks", "suits", "copies", "hand", "table")} == {
        "ranks": ["A", "2", "3", "4"], "suits": ["H", "S"], "copies": 1, "hand": 3, "table": 2}
    check_deck("run", meta, Rules.from_preset("tiny", players=2))  # the deck it was trained on: no error
    with pytest.raises(ValueError, match="trained on the tiny deck"):
        check_deck("run", meta, Rules(players=2))
    standard = part.metadata(train_mod.parse_args(["--players", "2"]), None)
    assert not {"ranks", "suits", "copies", "hand", "table"} & set(standard)  # standard metadata as before
    env = part.make_env(dataclasses.replace(args, num_envs=2), "random")
    assert env.core.rules == part.rules_of(g) and env.core.rules.deck_size == 8


def test_bad_arguments_give_one_line_errors(tmp_path):
    out = train("--players", "7", tmp=tmp_path)
    assert out.returncode == 2 and out.stderr == "train.py: error: --players must be 2 to 6, got 7\n"
    out = train("--total-timesteps", "lots", tmp=tmp_path)
    assert out.returncode == 2 and "invalid int value: 'lots'" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    out = train("--no-such-option", tmp=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("train.py: error: unrecognized arguments: --no-such-option")
    assert not (tmp_path / "runs").exists()


# --------------------------------------------------------------------------- the league
class Counting:
    """A random agent that records every call: (league call number, envs, seats)."""

    def __init__(self, label: str, log: list) -> None:
        self.name, self.log = label, log
        self.inner = agents.load("random")

    def act(self, batch):
        self.log.append((self.name, batch.envs.copy(), batch.seats.copy(), batch.core.deals.n_moves[batch.envs].copy()))
        return self.inner.act(batch)


def league_run(seed: int, players: int = 3, steps: int = 150):
    from krypenv.agents.league import League

    from krypenv.krypkasino.vec import KrypkasinoVecEnv

    log: list = []
    members = {k: Counting(k, log) for k in ("a", "b", "c")}
    league = League(members, {"a": 1, "b": 1, "c": 2, "self": 1}, seed=seed)
    calls = []
    inner_act = league.act

    def act(batch):
        before = len(log)
        out = inner_act(batch)
        calls.append([entry[0] for entry in log[before:]])
        return out

    league.act = act
    env = KrypkasinoVecEnv(12, seat="random", opponents=league, players=players, seed=1)
    env.reset()
    rng = np.random.default_rng(0)
    deals = np.zeros(12, np.int64)
    for step in range(steps):
        if step == 60:
            league.add_snapshot(Counting("snap", log), "self@60")
        _, _, dones, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        deals += dones
    return league, log, calls, deals


def test_league_draws_per_deal_batches_per_member_and_is_seeded():
    league, log, calls, deals = league_run(seed=7)
    assert all(len(c) == len(set(c)) for c in calls)  # one act() call per member and league call
    assert any(len(c) > 1 for c in calls)  # several members act in one call
    # within a deal (the game's move counter never drops), a seat is always played by the same member
    per_game: dict = {}
    for label, envs, seats, moves in log:
        for i, s, m in zip(envs.tolist(), seats.tolist(), moves.tolist()):
            per_game.setdefault(i, []).append((m, s, label))
    for i, seq in per_game.items():
        deal: dict = {}
        last = -1
        for m, s, label in seq:
            if m < last:
                deal = {}
            assert deal.setdefault(s, label) == label, (i, m, s)
            last = m
    labels_per_seat = {}
    for label, envs, seats, _ in log:
        for i, s in zip(envs.tolist(), seats.tolist()):
            labels_per_seat.setdefault((i, s), set()).add(label)
    assert sum(len(v) > 1 for v in labels_per_seat.values()) > 0  # redrawn at new deals
    for i in range(12):
        for k in range(int(deals[i])):
            who = league.assignment(i, k)
            assert who is None or (len(who) == 2 and set(who) <= {"a", "b", "c", "self@60"})
    assert "self@60" in league.deals_drawn and set(league.deals_drawn) <= {"a", "b", "c", "self@60"}
    probs = league.probabilities()
    assert probs == pytest.approx({"a": 0.2, "b": 0.2, "c": 0.4, "self@60": 0.2})
    # the same seed draws the same opponents; another seed others
    _again, log2, _, _ = league_run(seed=7)
    assert [e[0] for e in log] == [e[0] for e in log2]
    _other, log3, _, _ = league_run(seed=8)
    assert [e[0] for e in log] != [e[0] for e in log3]


def test_league_first_draw_without_snapshots_skips_self():
    from krypenv.agents.league import League

    league = League({"x": agents.load("random")}, {"x": 1, "self": 5}, seed=0)
    assert league.probabilities() == {"x": 1.0}
    with pytest.raises(ValueError, match="unknown members"):
        League({"x": agents.load("random")}, {"y": 1}, seed=0)


def test_machine_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """machine(): this process's capability and libraries, the float-path settings only, and krypenv.bench's facts."""
    import sb3_contrib
    import stable_baselines3

    from krypenv.bench import machine as bench_machine
    from krypenv.training.common import FLOAT_ENV, machine

    for k in FLOAT_ENV:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    monkeypatch.setenv("KRYPENV_UNRELATED", "1")
    host = machine()
    assert host["float_env"] == {"MKL_CBWR": "COMPATIBLE"}
    assert host["cpu_capability"] == torch.backends.cpu.get_cpu_capability() and host["torch"] == torch.__version__
    assert host["sb3-contrib"] == sb3_contrib.__version__ and host["gymnasium"] is not None
    assert host["stable-baselines3"] == stable_baselines3.__version__
    assert {k: host[k] for k in bench_machine()} == bench_machine()


def test_machine_names_a_missing_library_as_none() -> None:
    """A library that is not installed is recorded as None, not an error."""
    from krypenv.training.common import _version

    assert _version("krypenv-no-such-package") is None and _version("numpy") == np.__version__
