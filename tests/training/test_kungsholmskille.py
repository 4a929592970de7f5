"""train.py --game kungsholmskille end to end on a tiny budget, its checkpoint as ``ppo:PATH``, the league per
episode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from krypenv import agents
from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--game", "kungsholmskille", "--total-timesteps", "1024", "--num-envs", "16", "--n-steps", "32",
        "--batch-size", "128", "--n-epochs", "2", "--net-arch", "32,32", "--snapshot-every", "256",
        "--eval-every", "512", "--eval-deals", "4", "--final-deals", "4", "--torch-threads", "1"]


def train(*extra: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "train.py", "--out-dir", str(tmp / "runs"), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("kille")
    out = train(*TINY, "--run-name", "tiny", "--seed", "3", "--save-to", str(tmp / "k4.zip"), tmp=tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "learner's money among experts" in out.stdout and "timid" in out.stdout
    assert "note: these figures vary with the training seed and the machine" in out.stdout
    return tmp


def test_outputs_and_metadata(run):
    d = run / "runs" / "tiny"
    for name in ("args.json", "eval.csv", "learning_curve.png", "final.zip", "final_eval.txt", "summary.json"):
        assert (d / name).is_file(), name
    args = json.loads((d / "args.json").read_text())
    assert args["game"] == "kungsholmskille" and args["players"] == 4 and args["policy"] == "mlp"
    assert args["league"] == "expert=6,timid=2,random=1,self=1"
    agent = agents.load(f"ppo:{run / 'k4.zip'}", game="kungsholmskille")
    from krypenv.agents.kungsholmskille.ppo import layout_id

    assert agent.meta["game"] == "kungsholmskille" and agent.meta["players"] == 4
    assert agent.meta["obs_dim"] == 167 and agent.meta["layout"] == layout_id(4) and agent.meta["optimizer"] is False
    report = (d / "final_eval.txt").read_text()
    assert all(b in report for b in ("random", "timid", "expert"))


def test_checkpoint_plays_in_the_vec_env(run):
    agent = agents.load(f"ppo:{run / 'k4.zip'}", game="kungsholmskille")
    expert = agents.load("expert", game="kungsholmskille")
    env = KungsholmskilleVecEnv(8, seat="random", opponents=[agent, agent, expert], seed=2)
    env.reset()
    done = 0
    for _ in range(200):
        batch = env.core.decisions(np.arange(8), env.core.seat)
        acts = agent.act(batch)
        assert env.action_masks()[np.arange(8), acts].all()
        again = agent.act(batch)  # deterministic: same decisions, same actions
        np.testing.assert_array_equal(acts, again)
        _, _, dones, _ = env.step(acts)
        done += int(dones.sum())
    assert done > 0


def test_wrong_game_or_players_is_a_one_line_error(run):
    path = run / "k4.zip"
    with pytest.raises(ValueError) as err:
        agents.load(f"ppo:{path}")  # a Krypkasino table
    assert str(path) in str(err.value) and "trained for kungsholmskille, not krypkasino" in str(err.value)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="trained for krypkasino, not kungsholmskille") as err:
        agents.load(f"ppo:{ROOT / 'checkpoints' / 'ppo-2p.zip'}", game="kungsholmskille")
    assert "ppo-2p.zip" in str(err.value) and "\n" not in str(err.value)
    agent = agents.load(f"ppo:{path}", game="kungsholmskille")
    env = KungsholmskilleVecEnv(2, players=3, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="trained for 4 players and cannot play a 3-player game") as err:
        agent.act(env.core.decisions(np.arange(2), env.core.seat))
    assert str(path) in str(err.value)


@pytest.mark.slow
def test_same_seed_same_weights(run, tmp_path):
    out = train(*TINY, "--run-name", "again", "--seed", "3", "--eval-every", "0", "--final-deals", "0", tmp=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    a = agents.load(f"ppo:{run / 'runs' / 'tiny' / 'final.zip'}", game="kungsholmskille").policy.state_dict()
    b = agents.load(f"ppo:{tmp_path / 'runs' / 'again' / 'final.zip'}", game="kungsholmskille").policy.state_dict()
    assert list(a) == list(b)
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_krypkasino_options_are_refused_for_kungsholmskille(tmp_path):
    out = train("--game", "kungsholmskille", "--teams", "2", tmp=tmp_path)
    assert out.returncode == 2 and out.stderr == ("train.py: error: --teams: Krypkasino options, not for "
                                                  "--game kungsholmskille\n")
    out = train("--game", "kille", tmp=tmp_path)
    assert out.returncode == 2 and "--game must be one of krypkasino, kungsholmskille, got 'kille'" in out.stderr
    assert not (tmp_path / "runs").exists()


class Recorder:
    """A first-legal agent that logs (its label, env, seat, the env's episode counter) at every decision."""

    def __init__(self, label: str, log: list) -> None:
        self.name, self.log = label, log

    def act(self, batch):
        for i, s in zip(batch.envs.tolist(), batch.seats.tolist()):
            self.log.append((self.name, i, s, int(batch.core.episodes[i])))
        return batch.mask.argmax(axis=1)


def test_league_draws_once_per_episode_over_deals():
    """Opponents are redrawn for every pot, never between the deals (budrundor) of one pot."""
    from krypenv.agents.league import League

    log: list = []
    league = League({k: Recorder(k, log) for k in "abc"}, {"a": 1, "b": 1, "c": 1}, seed=4)
    env = KungsholmskilleVecEnv(6, seat="random", opponents=league, seed=1)
    env.reset()
    rng = np.random.default_rng(0)
    episodes = np.zeros(6, np.int64)
    deals_seen = set()
    for _ in range(400):
        deals_seen |= {(i, int(d)) for i, d in enumerate(env.core.deal_no)}
        _, _, dones, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        episodes += dones
    assert any(d > 0 for _, d in deals_seen)  # some pots went over several deals
    who: dict = {}
    for label, i, s, ep in log:
        assert who.setdefault((i, s, ep), label) == label, (i, s, ep)
    per_seat: dict = {}
    for (i, s, ep), label in who.items():
        per_seat.setdefault((i, s), set()).add(label)
    assert any(len(v) > 1 for v in per_seat.values())  # redrawn at new episodes
    for i in range(6):
        for k in range(int(episodes[i])):
            got = league.assignment(i, k)
            assert got is None or (len(got) == 3 and set(got) <= set("abc"))
