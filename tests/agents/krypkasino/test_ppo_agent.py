"""The ``ppo:PATH`` agent: checkpoint checks with clear errors, deterministic batched acting."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from krypenv.agents.krypkasino.ppo import META_NAME, PPOAgent, add_metadata, metadata
from krypenv.eval.krypkasino import EvalConfig, evaluate

from krypenv import agents
from krypenv.agent_api import DecisionBatch
from krypenv.krypkasino.rules import Rules
from krypenv.krypkasino.vec import KrypkasinoVecEnv


def make_model(players: int = 2, seed: int = 0, policy: str = "mlp"):
    """An untrained MaskablePPO with random weights on a small net (as train.py builds it for --policy)."""
    import torch
    from krypenv.agents.krypkasino.ppo import ScaledInput
    from sb3_contrib import MaskablePPO

    env = KrypkasinoVecEnv(4, seat="random", players=players, seed=seed)
    if policy == "moves":
        from krypenv.agents.krypkasino.move_policy import MoveFeatureVecEnv, MovePolicy

        return MaskablePPO(MovePolicy, MoveFeatureVecEnv(env), n_steps=16, batch_size=32, seed=seed, device="cpu",
                           policy_kwargs={"obs_dim": env.observation_space.shape[0], "sizes": (32, 32)})
    return MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=32, seed=seed, device="cpu",
                       policy_kwargs={"net_arch": {"pi": [32, 32], "vf": [32, 32]}, "activation_fn": torch.nn.ReLU,
                                      "features_extractor_class": ScaledInput})


@pytest.fixture(scope="module", params=["mlp", "moves"])
def ckpt(request, tmp_path_factory) -> Path:
    """A 2-player checkpoint in train.py's format, of each policy kind (--policy mlp and moves)."""
    from krypenv.agents.krypkasino.move_features import VERSION

    path = tmp_path_factory.mktemp("ppo") / "p2.zip"
    model = make_model(2, policy=request.param)
    model.save(path)
    add_metadata(path, metadata(Rules(players=2), features=VERSION if request.param == "moves" else None, env_steps=0))
    return path


def network_input(agent: PPOAgent, batch: DecisionBatch) -> np.ndarray:
    """What the agent's network reads for a batch: the observations, with the action features if it uses them."""
    if agent.features is None:
        return batch.obs
    from krypenv.agents.krypkasino.move_features import action_features
    from krypenv.agents.krypkasino.move_policy import with_features

    return with_features(batch.obs, action_features(batch.core, batch.envs))


def rewrite_meta(src: Path, dst: Path, **changes) -> Path:
    with zipfile.ZipFile(src) as zf:
        meta = json.loads(zf.read(META_NAME))
    add = dict(meta, **changes)
    dst.write_bytes(src.read_bytes())
    add_metadata(dst, add)
    return dst


def decisions(players: int = 2, n: int = 32, steps: int = 7, seed: int = 3) -> DecisionBatch:
    """A batch of real learner decisions from n games a few random moves in."""
    env = KrypkasinoVecEnv(n, seat="random", players=players, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        masks = env.action_masks()
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    obs, mask = env._obs.copy(), env._masks.copy()
    core = env.core
    return DecisionBatch(obs, mask, core.seat.astype(np.int64).copy(), core, np.arange(n, dtype=np.int64))


# --------------------------------------------------------------------------- loading and its errors
def test_loads_through_the_spec(ckpt):
    agent = agents.load(f"ppo:{ckpt}")
    assert isinstance(agent, PPOAgent)
    assert agent.name == f"ppo:{ckpt}"
    assert agent.players == 2 and agent.meta["obs_dim"] == 344


def test_missing_file(tmp_path):
    path = tmp_path / "nope.zip"
    with pytest.raises(ValueError, match=r"ppo checkpoint .*nope\.zip: no such file"):
        agents.load(f"ppo:{path}")


def test_no_path():
    with pytest.raises(ValueError, match="needs a checkpoint path"):
        agents.load("ppo:")


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.1])
def test_truncated_file(ckpt, tmp_path, keep):
    data = ckpt.read_bytes()
    bad = tmp_path / "cut.zip"
    bad.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(ValueError, match=r"ppo checkpoint .*cut\.zip: not a readable zip file \(truncated"):
        PPOAgent.load(bad)


def test_not_a_zip(tmp_path):
    bad = tmp_path / "text.zip"
    bad.write_text("hello\n")
    with pytest.raises(ValueError, match=r"text\.zip: not a readable zip"):
        PPOAgent.load(bad)


def test_corrupt_member(ckpt, tmp_path):
    """Damaged bytes inside policy.pth: the CRC check names the member."""
    data = bytearray(ckpt.read_bytes())
    with zipfile.ZipFile(ckpt) as zf:
        info = zf.getinfo("policy.pth")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 40
    data[start:start + 16] = bytes(16 - k for k in range(16))
    bad = tmp_path / "flip.zip"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"flip\.zip: corrupt checkpoint"):
        PPOAgent.load(bad)


def test_plain_sb3_zip_without_metadata(tmp_path):
    path = tmp_path / "plain.zip"
    make_model(2).save(path)
    with pytest.raises(ValueError, match=r"plain\.zip: not a krypenv checkpoint \(no krypenv\.json"):
        PPOAgent.load(path)


def test_other_observation_layout(ckpt, tmp_path):
    bad = rewrite_meta(ckpt, tmp_path / "layout.zip", layout="obs-000000000000")
    with pytest.raises(ValueError, match=r"layout\.zip: incompatible observation layout"):
        PPOAgent.load(bad)


def test_metadata_says_other_player_count_than_the_network(ckpt, tmp_path):
    """Metadata for 3 players (a valid layout) on a 2-player network: the input size check catches it."""
    from krypenv.agents.krypkasino.move_policy import input_dim
    from krypenv.agents.krypkasino.ppo import layout_id

    bad = rewrite_meta(ckpt, tmp_path / "p3.zip", players=3, obs_dim=351, layout=layout_id(3))
    agent = PPOAgent.load(ckpt)
    width = agent.obs_dim if agent.features is None else input_dim(agent.obs_dim)
    with pytest.raises(ValueError, match=rf"p3\.zip: the network takes inputs of shape \({width},\)"):
        PPOAgent.load(bad)


def test_unknown_action_features(ckpt, tmp_path):
    bad = rewrite_meta(ckpt, tmp_path / "feat.zip", features="moves/0")
    with pytest.raises(ValueError, match=r"feat\.zip: unknown action features 'moves/0'"):
        PPOAgent.load(bad)


def test_features_claimed_but_not_in_the_network(ckpt, tmp_path):
    """Metadata and network disagree on the action features: the input size check names both."""
    from krypenv.agents.krypkasino.move_features import VERSION

    flipped = None if PPOAgent.load(ckpt).features else VERSION
    bad = rewrite_meta(ckpt, tmp_path / "flip.zip", features=flipped)
    with pytest.raises(ValueError, match=r"flip\.zip: the network takes inputs of shape .* action features"):
        PPOAgent.load(bad)


def test_unknown_format(ckpt, tmp_path):
    bad = rewrite_meta(ckpt, tmp_path / "fmt.zip", format="something-else/9")
    with pytest.raises(ValueError, match=r"fmt\.zip: unknown checkpoint format 'something-else/9'"):
        PPOAgent.load(bad)


def test_other_player_count_at_act_time(ckpt):
    agent = PPOAgent.load(ckpt)
    batch = decisions(players=3, n=4, steps=2)
    with pytest.raises(ValueError, match=r"trained for 2 players and cannot play a 3-player game"):
        agent.act(batch)


def test_other_player_count_in_eval(ckpt):
    with pytest.raises(ValueError, match=r"trained for 2 players and cannot play a 3-player game"):
        evaluate(EvalConfig(agents=(f"ppo:{ckpt}", "random"), players=3, deals=2, records=False))


# --------------------------------------------------------------------------- acting
def test_actions_are_legal_argmax_and_deterministic(ckpt):
    agent = PPOAgent.load(ckpt)
    batch = decisions()
    a1, a2 = agent.act(batch), agent.act(batch)
    assert a1.dtype == np.int64 and a1.shape == (len(batch),)
    np.testing.assert_array_equal(a1, a2)
    assert (batch.mask[np.arange(len(batch)), a1] != 0).all()
    # the same choice as SB3's own deterministic masked prediction
    want, _ = agent.policy.predict(network_input(agent, batch), deterministic=True,
                                   action_masks=batch.mask.astype(bool))
    np.testing.assert_array_equal(a1, want)
    # the same agent loaded again acts the same
    np.testing.assert_array_equal(PPOAgent.load(ckpt).act(batch), a1)


def test_batched_equals_one_at_a_time(ckpt):
    agent = PPOAgent.load(ckpt)
    batch = decisions(n=24, steps=11, seed=9)
    together = agent.act(batch)
    alone = [int(agent.act(DecisionBatch(batch.obs[k:k + 1], batch.mask[k:k + 1], batch.seats[k:k + 1],
                                         batch.core, batch.envs[k:k + 1]))[0]) for k in range(len(batch))]
    np.testing.assert_array_equal(together, alone)


def test_plays_legal_moves_in_eval(ckpt):
    res = evaluate(EvalConfig(agents=(f"ppo:{ckpt}", "expert"), players=2, deals=3, records=False))
    assert sum(r.games for r in res.rows) == 2 * 3 * 2
    assert res.played.scores.sum(axis=1).tolist() == [42] * 6


def test_import_agents_does_not_import_torch():
    code = "import sys, agents; agents.known(); print('torch' in sys.modules, 'stable_baselines3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


SHIPPED = sorted((Path(__file__).resolve().parents[3] / "checkpoints").glob("ppo-*.zip"))


def test_the_shipped_checkpoints_are_there():
    """The checkpoints of docs/results/checkpoints.md are shipped (the test below must not run on nothing)."""
    assert {p.name for p in SHIPPED} >= {"ppo-2p.zip", "ppo-3p.zip", "ppo-4p.zip", "ppo-6p.zip",
                                         "ppo-4p-teams02+13.zip"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_checkpoint_loads_and_plays(path: Path):
    """Each checkpoints/ppo-{P}p[-teams{seats}].zip (the checkpoint cards) is named for the table it was trained at
    (the name ``champion`` looks up), stays loadable and plays that table."""
    from krypenv.agents.krypkasino.champion import checkpoint_name

    agent = agents.load(f"ppo:{path}")
    players, teams = agent.meta["players"], agent.meta["teams"]
    assert path.name == checkpoint_name(players, teams)
    res = evaluate(EvalConfig(agents=(f"ppo:{path}", "expert"), players=players, teams=teams, deals=2, seed=3,
                              records=False))
    scores = res.played.scores  # one row per table played, one column per seat
    assert scores.shape[1] == players and (scores.sum(axis=1) == 42).all()  # every deal's points are 42 in all


def test_checkpoint_pickled_before_the_agents_moved_loads(tmp_path, monkeypatch):
    """An MLP checkpoint whose pickles name ``agents.ppo.ScaledInput`` (the path before agents/krypkasino/) loads.

    The shipped checkpoint covers the move-scoring policy (it pickles ``krypenv.agents.move_policy``);
    here an MLP one is saved while ScaledInput claims its old module, which then disappears.
    """
    import types

    from krypenv.agents.krypkasino.ppo import ScaledInput

    old = types.ModuleType("agents.ppo")
    old.ScaledInput = ScaledInput
    monkeypatch.setitem(sys.modules, "agents.ppo", old)
    monkeypatch.setattr(ScaledInput, "__module__", "agents.ppo")
    model = make_model(2)
    path = tmp_path / "old.zip"
    model.save(path)
    add_metadata(path, metadata(Rules(players=2), env_steps=0))
    monkeypatch.undo()
    with zipfile.ZipFile(path) as zf:
        pickled = json.loads(zf.read("data"))["policy_kwargs"][":serialized:"]
    assert b"agents.ppo" in base64.b64decode(pickled) and "agents.ppo" not in sys.modules
    agent = PPOAgent.load(path)
    batch = decisions()
    expected = model.policy.predict(batch.obs, deterministic=True, action_masks=batch.mask)[0]
    np.testing.assert_array_equal(agent.act(batch), expected)
