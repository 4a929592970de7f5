"""``--init-from`` a student (an ``mlp`` checkpoint with a value head): the run's network starts with the student's
logits and values, takes its critic and scorer shapes, and refuses a student of another table or network."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("sb3_contrib")

from krypenv.agents.krypkasino.move_features import N_FEATS
from krypenv.agents.krypkasino.move_features import VERSION as MOVES

from krypenv import agents
from krypenv.training import krypkasino as KP
from krypenv.training import kungsholmskille as LP
from krypenv.training.student import Student, to_policy
from krypenv.training.warm import WarmStart, init_checkpoint, load_weights

CARD = {"game": "krypkasino", "players": 2, "preset": "standard"}


def args_of(**kw: Any) -> SimpleNamespace:
    """The options init_checkpoint and the network hooks read, at train.py's defaults unless given."""
    base = {"game": "krypkasino", "players": 2, "preset": "standard", "policy": "moves", "net_arch": "32,24",
            "reward_scale": 0.1, "init_from": "", "teams": "none", "two_player_deal": "6+4", "set_aside": "court",
            "last_capture_point": False, "max_deals": 50}
    return SimpleNamespace(**(base | kw))


def random_student(game: str, players: int, features: bool, seed: int, sizes: list[int], value_sizes: list[int],
                   width: int = 48) -> Student:
    """A student of the game's observation with random weights, biases and input scaling."""
    from krypenv.games import GAMES

    env = env_of(game, players)
    obs, actions = int(env.observation_space.shape[0]), int(env.action_space.n)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    s = Student(obs, actions, sizes, value_sizes, MOVES if features else None, N_FEATS if features else 0, width,
                rng.uniform(0.05, 2.0, obs).astype(np.float32))
    with torch.no_grad():
        for p in s.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    assert game in GAMES
    return s


def env_of(game: str, players: int, n: int = 6, seed: int = 2) -> Any:
    """A VecEnv of the game with the learner in a random seat, a few random moves in."""
    if game == "krypkasino":
        from krypenv.krypkasino.vec import KrypkasinoVecEnv

        return KrypkasinoVecEnv(n, seat="random", players=players, seed=seed)
    from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

    return KungsholmskilleVecEnv(n, players=players, seed=seed, opponents="random")


def model_of(game: str, players: int, policy: str, sizes: list[int], **shapes: Any) -> tuple[Any, Any, Any]:
    """(MaskablePPO as train.py builds it, the VecEnv it sees, the bare VecEnv) for the network hook's shapes."""
    from sb3_contrib import MaskablePPO

    part = KP if game == "krypkasino" else LP
    env = env_of(game, players)
    inner, pol, kwargs, _ = part.network(args_of(game=game, players=players, policy=policy), env, sizes, **shapes)
    return MaskablePPO(pol, inner, n_steps=8, batch_size=16, device="cpu", policy_kwargs=kwargs), inner, env


def compare(model: Any, inner: Any, env: Any, student: Student, factor: float, steps: int = 6) -> int:
    """Assert the model's log-probabilities and values equal the student's over random play; decisions seen."""
    rng = np.random.default_rng(0)
    obs, seen = inner.reset(), 0
    d = student.obs_size
    for _ in range(steps):
        mask = np.asarray(env.action_masks(), bool)
        t = torch.as_tensor(np.asarray(obs, np.float32))
        with torch.no_grad():
            got = model.policy.get_distribution(t, action_masks=mask).distribution.logits.numpy()
            value = model.policy.predict_values(t).numpy().ravel()
            pairs = feats = None
            if student.features is not None:
                f = np.asarray(obs, np.float32)[:, d:].reshape(len(obs), -1, N_FEATS)
                b, a = np.nonzero(mask)
                pairs, feats = torch.as_tensor(np.stack([b, a], axis=1)), torch.as_tensor(f[b, a])
            want, want_v = student(t[:, :d], torch.as_tensor(mask), pairs, feats)
        want = torch.log_softmax(want, dim=-1).numpy()
        np.testing.assert_allclose(got[mask], want[mask], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(value, factor * want_v.numpy(), rtol=1e-4, atol=1e-5)
        seen += int(mask.any(axis=1).sum())
        obs, *_ = inner.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    return seen


@pytest.mark.parametrize("game, players, policy, features", [
    ("krypkasino", 2, "moves", True), ("krypkasino", 3, "mlp", False), ("kungsholmskille", 4, "mlp", False)])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_network_starts_with_the_students_logits_and_values(game: str, players: int, policy: str, features: bool,
                                                                 seed: int) -> None:
    """Over random shapes, weights and input scalings: log-probabilities and values (times the factor) equal."""
    rng = np.random.default_rng(seed)
    sizes = [int(x) for x in rng.integers(8, 40, rng.integers(1, 3))]
    value_sizes = [int(x) for x in rng.integers(8, 40, rng.integers(1, 3))]
    student = random_student(game, players, features, seed, sizes, value_sizes, width=int(rng.integers(8, 40)))
    start = WarmStart("s.npz", student=student, value_factor=float(rng.uniform(0.5, 3.0)))
    shapes = start.shapes()
    assert shapes == {"critic_sizes": value_sizes, "score_width": student.scorer_width if features else None}
    model, inner, env = model_of(game, players, policy, sizes, **shapes)
    load_weights(model, start)
    assert compare(model, inner, env, student, start.value_factor) > 20


def test_a_critic_without_hidden_layers_reads_the_scaled_input() -> None:
    """A student whose critic has no hidden layers: the value head itself reads the input, scaled as the student."""
    student = random_student("krypkasino", 2, True, 4, [16], [])
    model, inner, env = model_of("krypkasino", 2, "moves", [16], **WarmStart("s", student=student).shapes())
    to_policy(student, model.policy, 0.7)
    assert compare(model, inner, env, student, 0.7) > 10


def test_the_network_hooks_default_to_the_run_s_sizes_and_64() -> None:
    """Without a warm start's shapes, the critic has --net-arch's sizes and the move scorer is 64 wide."""
    for policy in ("moves", "mlp"):
        model, _, _ = model_of("krypkasino", 2, policy, [20, 12])
        names = {k: tuple(v.shape) for k, v in model.policy.state_dict().items()}
        critic = "mlp_extractor.critic" if policy == "moves" else "mlp_extractor.value_net"
        assert names[f"{critic}.0.weight"][0] == 20 and names[f"{critic}.2.weight"][0] == 12
        if policy == "moves":
            assert names["mlp_extractor.out.weight"] == (1, 64)
    model, _, _ = model_of("kungsholmskille", 4, "mlp", [20, 12])
    assert model.policy.state_dict()["mlp_extractor.value_net.2.weight"].shape[0] == 12


@pytest.mark.parametrize("make, message", [
    (lambda: (random_student("krypkasino", 2, False, 0, [16], [8]), "moves"),
     "the network scores actions from features; the student reads the observation only"),
    (lambda: (random_student("krypkasino", 2, True, 0, [16], [8]), "mlp"),
     "the student scores actions from features moves/2; the network does not"),
    (lambda: (random_student("krypkasino", 2, True, 0, [16, 16], [8]), "moves"),
     "the student has hidden layers [16, 16] and critic [8]; the network [16] and [8]"),
    (lambda: (random_student("krypkasino", 2, True, 0, [16], [8, 8]), "moves"),
     "the student has hidden layers [16] and critic [8, 8]; the network [16] and [8]"),
    (lambda: (random_student("krypkasino", 2, True, 0, [16], [9]), "moves"),
     "the student's layer for mlp_extractor.critic.0 is (9, 344), the network's (8, 344)"),
    (lambda: (random_student("krypkasino", 2, True, 0, [16], [8], width=30), "moves"),
     "the student's layer for mlp_extractor.ctx is (30, 16), the network's (48, 16)"),
    (lambda: (random_student("krypkasino", 2, True, 0, [], [8]), "moves"),
     "a student without hidden layers cannot start a train.py network (it has at least one)"),
])
def test_to_policy_refuses_a_network_of_other_shapes(make: Any, message: str) -> None:
    """Each mismatch is one ValueError naming what differs, and nothing is copied before the check."""
    student, policy = make()
    model, _, _ = model_of("krypkasino", 2, policy, [16], critic_sizes=[8], score_width=48)
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    with pytest.raises(ValueError) as err:
        to_policy(student, model.policy)
    assert str(err.value) == message
    assert all(torch.equal(before[k], v) for k, v in model.policy.state_dict().items())


def export(student: Student, tmp_path: Path, value_scale: Any = 0.1, **card: Any) -> str:
    """The student as an mlp file whose card names its table and the distillation's value_scale (``...``: none)."""
    trained = {} if value_scale is ... else {"trained": {"args": {"value_scale": value_scale}}}
    return str(student.export(tmp_path / "s.npz", CARD | trained | card))


def test_init_checkpoint_reads_a_student_and_its_value_units(tmp_path: Path) -> None:
    """A .npz start: the student, and the value factor --reward-scale / value_scale (1 without a stated scale)."""
    student = random_student("krypkasino", 2, True, 0, [32, 24], [8])
    path = export(student, tmp_path, value_scale=0.25)
    start = init_checkpoint(args_of(init_from=path, reward_scale=0.5))
    assert start.agent is None and start.path == path and start.value_factor == pytest.approx(2.0)
    assert start.student.sizes == [32, 24] and start.student.value_sizes == [8]
    for p, q in zip(start.student.parameters(), student.parameters()):
        assert torch.equal(p, q)
    assert init_checkpoint(args_of(init_from=export(student, tmp_path, value_scale=...))).value_factor == 1.0
    for trained in (5, {"args": 5}, {"args": {}}):  # no unit stated: the head as it is
        path = str(student.export(tmp_path / "t.npz", CARD | {"trained": trained}))
        assert init_checkpoint(args_of(init_from=path)).value_factor == 1.0


@pytest.mark.parametrize("scale", [0, -0.1, float("inf"), float("nan"), "0.1", True, None])
def test_a_value_scale_that_is_not_a_positive_number_is_refused(tmp_path: Path, scale: Any) -> None:
    path = export(random_student("krypkasino", 2, True, 0, [32, 24], [8]), tmp_path, value_scale=scale)
    with pytest.raises(ValueError) as err:
        init_checkpoint(args_of(init_from=path))
    assert str(err.value) == f"--init-from {path}: the card's value_scale must be a positive number, got {scale!r}"


@pytest.mark.parametrize("change, card, message", [
    ({"players": 3}, {}, "is a network of players 2, this run's is 3"),
    ({}, {"game": "kungsholmskille"}, "is a network of game 'kungsholmskille', this run's is 'krypkasino'"),
    ({"preset": "small"}, {}, "is a network of preset 'standard', this run's is 'small'"),
    ({"policy": "mlp"}, {}, "reads action features moves/2, this run's --policy mlp reads None"),
    ({"net_arch": "32,25"}, {}, "has hidden layers 32,24, this run's --net-arch is 32,25"),
])
def test_init_checkpoint_refuses_a_student_of_another_table_or_network(tmp_path: Path, change: dict, card: dict,
                                                                        message: str) -> None:
    path = export(random_student("krypkasino", 2, True, 0, [32, 24], [8]), tmp_path, **card)
    with pytest.raises(ValueError) as err:
        init_checkpoint(args_of(init_from=path, **change))
    assert str(err.value) == f"--init-from {path} {message}"


def test_init_checkpoint_of_a_student_without_value_head(tmp_path: Path) -> None:
    """An mlp file without a value head is refused, naming the file (the student's own check)."""
    import json

    full = np.load(export(random_student("krypkasino", 2, True, 0, [8], [4]), tmp_path))
    card = {k: v for k, v in json.loads(str(full["card"])).items() if k != "value_layers"}
    path = tmp_path / "p.npz"
    np.savez(path, card=np.array(json.dumps(card)), **{k: full[k] for k in full.files if k[0] != "v" and k != "card"})
    with pytest.raises(ValueError) as err:
        init_checkpoint(args_of(init_from=str(path), net_arch="8"))
    assert str(err.value) == f"mlp checkpoint {path} has no value head: not a student to go on training"


def test_a_checkpoint_start_keeps_its_own_shapes(tmp_path: Path) -> None:
    """A train.py checkpoint's start fixes the shapes it has: the shipped move scorer's (critic 128,128, width 64)
    and a saved one of other widths, which loads and plays with them."""
    start = init_checkpoint(args_of(init_from="checkpoints/ppo-2p.zip", net_arch="128,128"))
    assert start.shapes() == {"critic_sizes": [128, 128], "score_width": 64}
    model, _, _ = model_of("krypkasino", 2, "moves", [16], critic_sizes=[8, 6], score_width=20)
    from krypenv.agents.krypkasino.ppo import add_metadata, metadata

    from krypenv.krypkasino.rules import Rules

    path = tmp_path / "w.zip"
    model.save(path)
    add_metadata(path, metadata(Rules(players=2), features=MOVES, env_steps=0, args={"net_arch": "16"}))
    again = init_checkpoint(args_of(init_from=str(path), net_arch="16"))
    assert again.shapes() == {"critic_sizes": [8, 6], "score_width": 20}
    loaded = agents.load(f"ppo:{path}")
    for k, v in model.policy.state_dict().items():
        assert torch.equal(loaded.policy.state_dict()[k], v), k


def test_a_kungsholmskille_checkpoint_with_its_own_critic_loads(tmp_path: Path) -> None:
    """A Kungsholmskille checkpoint whose critic differs from its policy's layers loads with both (read off the
    weights) and keeps them as a warm start."""
    from krypenv.agents.checkpoint import add_metadata
    from krypenv.agents.kungsholmskille.ppo import metadata

    model, _, _ = model_of("kungsholmskille", 4, "mlp", [16], critic_sizes=[8, 6])
    path = tmp_path / "k.zip"
    model.save(path)
    add_metadata(path, metadata(4, 50, env_steps=0))
    loaded = agents.load(f"ppo:{path}", game="kungsholmskille")
    for k, v in model.policy.state_dict().items():
        assert torch.equal(loaded.policy.state_dict()[k], v), k
    start = init_checkpoint(args_of(game="kungsholmskille", players=4, policy="mlp", init_from=str(path),
                                    net_arch="16"))
    assert start.shapes() == {"critic_sizes": [8, 6], "score_width": None}
    # the layer widths come from the weights, not from the pickled keywords: a checkpoint whose pickle of them is
    # unreadable loads the same
    import json
    import zipfile

    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    data = json.loads(members["data"])
    data["policy_kwargs"][":serialized:"] = "bm90IGEgcGlja2xl"  # base64 of "not a pickle"
    members["data"] = json.dumps(data).encode()
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    again = agents.load(f"ppo:{broken}", game="kungsholmskille")
    for k, v in model.policy.state_dict().items():
        assert torch.equal(again.policy.state_dict()[k], v), k


def test_an_approximate_best_response_starts_from_a_student(tmp_path: Path) -> None:
    """``krypenv exploit --init-from STUDENT.npz``: the learner's network takes the student's shapes and weights."""
    from krypenv.training import exploit

    student = random_student("krypkasino", 2, True, 3, [128, 128], [16], width=24)
    config = exploit.ApproxConfig(agent="random", init_from=export(student, tmp_path), budget_steps=8, num_envs=2,
                                  n_steps=4, batch_size=8, n_epochs=1, learning_rate=1e-12)
    agent, _ = exploit.train_learner(config)
    model = SimpleNamespace(policy=agent.policy)
    inner, env = model_of("krypkasino", 2, "moves", [128, 128], critic_sizes=[16], score_width=24)[1:]
    assert compare(model, inner, env, student, 1.0) > 10


def test_a_move_policy_saved_alone_keeps_its_shapes(tmp_path: Path) -> None:
    """SB3's own save and load of the policy (its constructor parameters) keep the scorer's width and the critic."""
    from krypenv.agents.krypkasino.move_policy import MovePolicy

    model, _, _ = model_of("krypkasino", 2, "moves", [16], critic_sizes=[8, 6], score_width=20)
    model.policy.save(tmp_path / "policy.pt")
    loaded = MovePolicy.load(tmp_path / "policy.pt")
    assert (loaded.score_width, loaded.critic_sizes) == (20, [8, 6])
    for k, v in model.policy.state_dict().items():
        assert torch.equal(loaded.state_dict()[k], v), k
    from krypenv.agents.krypkasino.move_policy import MoveFeatureVecEnv
    from sb3_contrib import MaskablePPO

    env = MoveFeatureVecEnv(env_of("krypkasino", 2))  # no critic sizes given: kept as None (the body's)
    plain = MaskablePPO(MovePolicy, env, n_steps=8, batch_size=16, device="cpu",
                        policy_kwargs={"obs_dim": 344, "sizes": (16,)})
    plain.policy.save(tmp_path / "plain.pt")
    assert MovePolicy.load(tmp_path / "plain.pt").critic_sizes is None


def test_to_policy_keeps_the_value_s_units_by_default() -> None:
    """Without a factor the value head is copied as it is."""
    student = random_student("krypkasino", 2, True, 5, [16], [8])
    model, inner, env = model_of("krypkasino", 2, "moves", [16], critic_sizes=[8], score_width=48)
    to_policy(student, model.policy)
    assert compare(model, inner, env, student, 1.0, steps=2) > 4


@pytest.mark.parametrize("change, message", [
    ({"players": 3}, "was trained for 2 players, this run has 3"),
    ({"net_arch": "64,64"}, "has hidden layers 128,128, this run's --net-arch is 64,64"),
    ({"policy": "mlp"}, "reads action features moves/2, this run's --policy mlp reads None"),
    ({"preset": "small"}, "was trained on the standard deck and deal (no variant keys) and cannot play the small one"),
])
def test_init_checkpoint_refuses_a_train_py_checkpoint_of_another_table_or_network(change: dict, message: str) -> None:
    """The checkpoint path: each refusal one line naming the file; an accepted one keeps its path."""
    path = "checkpoints/ppo-2p.zip"
    assert init_checkpoint(args_of(init_from=path, net_arch="128,128")).path == path
    with pytest.raises(ValueError) as err:
        init_checkpoint(args_of(init_from=path, **({"net_arch": "128,128"} | change)))
    assert str(err.value).startswith(f"--init-from {path} {message}")
    assert "\n" not in str(err.value)


def test_load_weights_names_the_file_when_the_network_does_not_fit() -> None:
    """Both kinds of start: the student's mismatch and the checkpoint's, each one line after the file's name."""
    student = random_student("krypkasino", 2, True, 0, [16], [9])
    model, _, _ = model_of("krypkasino", 2, "moves", [16], critic_sizes=[8], score_width=48)
    with pytest.raises(ValueError) as err:
        load_weights(model, WarmStart("s.npz", student=student))
    assert str(err.value) == ("--init-from s.npz: the student's layer for mlp_extractor.critic.0 is (9, 344), the "
                              "network's (8, 344)")
    start = init_checkpoint(args_of(init_from="checkpoints/ppo-2p.zip", net_arch="128,128"))
    with pytest.raises(ValueError) as err:
        load_weights(model, start)
    assert str(err.value) == ("--init-from checkpoints/ppo-2p.zip: its network does not fit this run's: Unexpected "
                              'key(s) in state_dict: "mlp_extractor.body.2.weight", "mlp_extractor.body.2.bias", '
                              '"mlp_extractor.critic.2.weight", "mlp_extractor.critic.2.bias".')  # torch's first line
