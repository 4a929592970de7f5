"""The student network and mlp format 2: torch and numpy agree, a train.py checkpoint converts without loss, the
policy-guided search runs over an mlp file, and the searches' values agree with the actions they play."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from krypenv.agents.krypkasino.policy_nets import PolicyNet, load_ppo
from krypenv.agents.mlp import MLPAgent

from krypenv import agents
from krypenv.training import student as S
from krypenv.training.student import Student, from_mlp, from_ppo
from tests.agents.krypkasino.test_heuristics import decisions_of

PPO = "checkpoints/ppo-2p.zip"


def batches(n: int = 12, seed: int = 3, steps: int = 25) -> Iterator:
    """Decision batches of random 2-player games (capture choices included), each valid until the next is drawn."""
    for k, (_, batch) in enumerate(decisions_of(2, seed, n=n)):
        if k >= steps:
            return
        yield batch


def sparse(mask: np.ndarray, feats: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """(pairs, feats) of the legal actions, as the trainer hands them over."""
    b, a = np.nonzero(mask)
    return torch.as_tensor(np.stack([b, a], axis=1)), torch.as_tensor(feats[b, a])


def test_a_ppo_checkpoint_converts_without_loss(tmp_path: Path) -> None:
    """The converted student's logits (torch), its mlp file's (numpy) and the PPO network's agree on every decision."""
    from krypenv.agents.krypkasino.move_features import action_features

    student, meta = from_ppo(PPO)
    path = student.export(tmp_path / "s.npz", {"game": "krypkasino", "players": 2, "preset": "standard"})
    net = PolicyNet(load_ppo(PPO))
    mlp = MLPAgent(path).net
    assert meta["players"] == 2 and mlp.features == "moves/2" and mlp.value_layers == 2
    seen = 0
    for batch in batches(n=8, steps=20):
        mask = batch.mask != 0
        feats = action_features(batch.core, np.asarray(batch.envs))
        want = net.logits(batch.obs, feats, batch.mask)
        got = mlp.logits(batch.obs, mask, feats)
        with torch.no_grad():
            t, _ = student(torch.as_tensor(batch.obs), torch.as_tensor(mask), *sparse(mask, feats))
        np.testing.assert_allclose(got[mask], want[mask], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(t.numpy()[mask], want[mask], rtol=1e-4, atol=1e-4)
        assert np.isneginf(got[~mask]).all()
        seen += len(batch)
    assert seen > 100


def test_numpy_and_torch_agree_and_round_trip(tmp_path: Path) -> None:
    """A random student with features: numpy forward = torch forward; from_mlp gives the same network back."""
    from krypenv.agents.krypkasino.move_features import N_FEATS, action_features

    torch.manual_seed(1)
    b0 = next(batches(steps=1))
    s = Student(b0.obs.shape[1], 105, [24, 12], [10], "moves/2", N_FEATS, 8, np.linspace(0.1, 1, b0.obs.shape[1]))
    for p in s.parameters():
        torch.nn.init.normal_(p, 0, 0.3)
    path = s.export(tmp_path / "r.npz", {"game": "krypkasino", "players": 2, "preset": "standard"})
    back, card = from_mlp(path)
    assert card["format"] == "krypenv-mlp/2" and card["scorer_width"] == 8
    net = MLPAgent(path).net
    for batch in batches(steps=6):
        mask = batch.mask != 0
        feats = action_features(batch.core, np.asarray(batch.envs))
        with torch.no_grad():
            logits, value = s(torch.as_tensor(batch.obs), torch.as_tensor(mask), *sparse(mask, feats))
            logits2, value2 = back(torch.as_tensor(batch.obs), torch.as_tensor(mask), *sparse(mask, feats))
        np.testing.assert_allclose(net.logits(batch.obs, mask, feats)[mask], logits.numpy()[mask], rtol=1e-4,
                                   atol=1e-4)
        np.testing.assert_allclose(net.values(batch.obs), value.numpy(), rtol=1e-4, atol=1e-5)
        assert torch.equal(logits, logits2) and torch.equal(value, value2)


def test_format_2_refusals(tmp_path: Path) -> None:
    from krypenv.agents.krypkasino.move_features import N_FEATS

    s = Student(10, 105, [8], [4], "moves/2", N_FEATS, 6)
    good = s.export(tmp_path / "g.npz", {"game": "krypkasino", "players": 2})
    with np.load(good) as z:
        arrays = {k: z[k] for k in z.files}

    def broken(name: str, **change: np.ndarray) -> Path:
        a = dict(arrays)
        for k, v in change.items():
            if v is None:
                del a[k]
            else:
                a[k] = v
        p = tmp_path / f"{name}.npz"
        np.savez(p, **a)
        return p

    cases = [(broken("noscorer", hid_w=None), "missing array 'hid_w'"),
             (broken("ctx", ctx_w=np.zeros((6, 7), np.float32)), "do not chain"),
             (broken("inp", inp_w=np.zeros((5, N_FEATS), np.float32)), "input layer is not 6 wide"),
             (broken("scale", in_scale=np.ones(9, np.float32)), "in_scale has shape"),
             (broken("value", v_w=np.zeros((2, 4), np.float32), v_b=np.zeros(2, np.float32)), "more than one output"),
             (broken("novalue", vw0=None), "missing array 'vw0'")]
    for path, match in cases:
        with pytest.raises(ValueError, match=match):
            MLPAgent(path)
    import json

    card = json.loads(str(arrays["card"]))
    bad = dict(arrays, card=np.array(json.dumps({**card, "action_features": "moves/9"})))
    np.savez(tmp_path / "feat.npz", **bad)
    with pytest.raises(ValueError, match="action features 'moves/9' are not known"):
        MLPAgent(tmp_path / "feat.npz")
    plain = Student(10, 105, [8], [4]).export(tmp_path / "p.npz", {"game": "krypkasino", "players": 2})
    with pytest.raises(ValueError, match="no value head"):
        from_mlp(broken("nohead", card=np.array(json.dumps({**card, "value_layers": 0}))))
    assert MLPAgent(plain).net.features is None
    with pytest.raises(ValueError, match="exactly when it names them"):
        Student(10, 105, [8], [4], "moves/2", 0)


def test_guided_search_over_an_mlp_file(tmp_path: Path) -> None:
    """pimc:policy=mlp:FILE of the converted blueprint values every action as pimc:policy=ppo:ZIP does."""
    student, _ = from_ppo(PPO)
    path = student.export(tmp_path / "s.npz", {"game": "krypkasino", "players": 2, "preset": "standard"})
    a = agents.load(f"pimc:policy=mlp:{path},samples=3")
    b = agents.load(f"pimc:policy=ppo:{PPO},samples=3")
    assert a.name.startswith("pimc:policy=mlp:")
    agree = total = 0
    for batch in batches(n=4, steps=8):
        core = batch.core
        saved = core.rng.copy()
        va, xa = a.values(batch)
        core.rng[:] = saved
        vb, xb = b.values(batch)
        core.rng[:] = saved
        assert np.array_equal(xa, a.act(batch))
        core.rng[:] = saved
        assert np.array_equal(xb, b.act(batch))
        legal = batch.mask != 0
        close = np.isclose(va, vb, atol=1e-9) | (np.isnan(va) & np.isnan(vb))
        agree += int(close[legal].sum())
        total += int(legal.sum())
    assert agree >= 0.97 * total  # float32 numpy vs torch: a rare argmax tie may roll out differently
    with pytest.raises(ValueError, match="critic needs a train.py checkpoint"):
        agents.load(f"pimc:policy=mlp:{path},critic=true")


@pytest.mark.parametrize("spec", ["pimc:samples=4,z=0", "pimc:policy=ppo:checkpoints/ppo-2p.zip,samples=3,z=0"])
def test_with_z_0_a_search_plays_its_best_valued_action(spec: str) -> None:
    """Without the z rule the searched action is the one with the best value (ties: one of the best)."""
    agent = agents.load(spec)
    searched = 0
    for batch in batches(n=8, steps=15):
        saved = batch.core.rng.copy()
        values, chosen = agent.values(batch)
        for k in range(len(batch)):
            if np.isnan(values[k]).all():
                continue
            searched += 1
            assert values[k, chosen[k]] >= np.nanmax(values[k]) - 1e-9
        batch.core.rng[:] = saved
    assert searched > 30


def test_a_kungsholmskille_ppo_checkpoint_converts_without_loss(tmp_path: Path) -> None:
    """A plain MLP policy (Kungsholmskille's) converts too: the mlp file plays the PPO agent's actions."""
    from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

    student, meta = from_ppo("checkpoints/kille-4p.zip", "kungsholmskille")
    assert student.features is None and meta["players"] == 4
    path = student.export(tmp_path / "k.npz", {"game": "kungsholmskille", "players": 4, "preset": "standard"})
    mlp = agents.load(f"mlp:{path}", game="kungsholmskille")
    ppo = agents.load("ppo:checkpoints/kille-4p.zip", game="kungsholmskille")
    env = KungsholmskilleVecEnv(16, players=4, seed=3, opponents="random")
    env.reset()
    seen = 0
    for _ in range(25):
        batch = env.core.decisions(np.arange(16), env.core.seat.astype(np.int64))
        if batch.mask.any(axis=1).all():
            np.testing.assert_array_equal(mlp.action_probabilities(batch).argmax(axis=1), ppo.act(batch))
            seen += 16
        env.step(np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in env.action_masks()]))
    assert seen >= 160


def _synthetic(n: int = 64, obs: int = 6, actions: int = 5, seed: int = 0) -> S.TrainingData:
    """Labels of a made-up game: random observations, 2-5 legal actions, targets the softmax of random values."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n, actions)) < 0.6
    mask[:, 0] = True
    values = np.where(mask, rng.normal(0, 2, (n, actions)), np.nan)
    return S.TrainingData(rng.random((n, obs)).astype(np.float32), mask, S.policy_targets(values, mask, 1.0),
                          rng.normal(0, 1, n).astype(np.float32))


def test_train_fits_the_targets_and_reports_the_floor() -> None:
    """train: the losses fall towards the targets' entropy (reported exactly), the same seed gives the same network,
    and every option is used (epochs, batch size, learning rate, the value's weight)."""
    from types import SimpleNamespace

    data = _synthetic()
    args = SimpleNamespace(epochs=40, batch_size=16, learning_rate=1e-2, value_coef=0.5)

    def fit(a: SimpleNamespace, seed: int = 0) -> tuple[dict[str, float], list[np.ndarray]]:
        torch.manual_seed(0)
        s = S.Student(6, 5, [16], [8])
        stats = S.train(s, data, a, np.random.default_rng(seed))
        return stats, [p.detach().numpy().copy() for p in s.parameters()]

    torch.manual_seed(0)
    before = S.Student(6, 5, [16], [8])
    obs, mask, _, _, target, tv = S.minibatch(data, np.arange(64))
    logits, value = before(obs, mask)
    first = float(S.distill_loss(logits, value, target, tv, 0.5)[1].detach())
    stats, w = fit(args)
    p = data.target
    assert stats["target_entropy"] == pytest.approx(float(-(p * np.log(np.where(p > 0, p, 1))).sum(1).mean()))
    assert stats["target_entropy"] - 1e-4 <= stats["policy_loss"] < first - 0.05  # learnt, never below the floor
    assert stats["loss"] == pytest.approx(stats["policy_loss"] + 0.5 * stats["value_loss"], rel=1e-4)
    same, w2 = fit(args)
    assert same == stats and all(np.array_equal(a, b) for a, b in zip(w, w2))
    for change in ({"epochs": 1}, {"batch_size": 64}, {"learning_rate": 1e-4}, {"value_coef": 0.0}):
        _, w3 = fit(SimpleNamespace(**{**vars(args), **change}))
        assert not all(np.array_equal(a, b) for a, b in zip(w, w3)), change
    assert fit(args, seed=1)[1][0].tolist() != w[0].tolist()  # the minibatches' order comes from rng


# --------------------------------------------------------------------------- what mutmut's run found untested
def _with_features(n: int = 70, obs: int = 6, actions: int = 5, f: int = 3, seed: int = 0) -> S.TrainingData:
    """:func:`_synthetic`'s labels with random move features for every legal action (CSR rows, as training_data)."""
    data = _synthetic(n, obs, actions, seed)
    rng = np.random.default_rng(seed + 1)
    b, a = np.nonzero(data.mask)
    data.starts = np.concatenate([[0], np.cumsum(data.mask.sum(axis=1))]).astype(np.int64)
    data.pairs, data.feats = a.astype(np.int16), rng.normal(0, 1, (b.size, f)).astype(np.float32)
    return data


def test_policy_targets_are_per_label_and_float32() -> None:
    """Each label's softmax is shifted by its own maximum: labels far apart in value do not underflow to NaN."""
    values = np.array([[1000.0, 999.0, np.nan], [-1000.0, -1001.0, -1002.0]])
    mask = ~np.isnan(values)
    p = S.policy_targets(values, mask, 1.0)
    e = np.exp([0.0, -1.0])
    np.testing.assert_allclose(p[0], [*(e / e.sum()), 0.0], rtol=1e-6)
    e = np.exp([0.0, -1.0, -2.0])
    np.testing.assert_allclose(p[1], e / e.sum(), rtol=1e-6)
    assert p.dtype == np.float32


def test_training_data_is_the_same_whatever_the_feature_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Features computed 5 labels at a time or all at once: the same rows; the CSR starts begin at 0; float32
    value targets."""
    from krypenv.training import distill as D
    from tests.training.test_distill import job

    lab, _ = D.label_shard(job(games=3))
    core = D.training_part("krypkasino").distill_core(2, "standard", 1)
    whole = S.training_data(D.Args(), lab, core, True)
    monkeypatch.setattr(S, "FEATURE_CHUNK", 5)
    small = S.training_data(D.Args(), lab, core, True)
    assert len(lab) > 10
    for k in ("starts", "pairs", "feats", "target", "target_value"):
        np.testing.assert_array_equal(getattr(small, k), getattr(whole, k), err_msg=k)
    assert whole.starts[0] == 0 and np.array_equal(np.diff(whole.starts), lab.mask.sum(axis=1))
    assert whole.target_value.dtype == np.float32


def test_a_student_without_hidden_layers_and_its_feature_checks(tmp_path: Path) -> None:
    """No hidden layers in the body: the policy and scorer read the scaled observation; the export plays the same. A
    feature student given pairs without features is refused with its message."""
    torch.manual_seed(0)
    s = S.Student(6, 5, [], [3], "moves/2", 3, 4)
    data = _with_features(8)
    obs, mask, pairs, feats, *_ = S.minibatch(data, np.arange(8))
    logits, value = s(obs, mask, pairs, feats)
    assert logits.shape == (8, 5) and value.shape == (8,)
    with pytest.raises(ValueError, match=r"^this student scores actions from features moves/2: none given$"):
        s(obs, mask, pairs, None)
    with pytest.raises(ValueError, match=r"^a student scores actions from features exactly when it names them"):
        S.Student(6, 5, [4], [4], "moves/2", 0)
    assert S.Student(6, 5, [4], [4], "moves/2", 3).scorer_width == 64  # the documented default
    plain = S.Student(6, 5, [], [2])
    path = plain.export(tmp_path / "p.npz", {"game": "krypkasino", "players": 2})
    net = MLPAgent(path).net
    o, m = obs.numpy(), mask.numpy()
    np.testing.assert_allclose(net.logits(o, m)[m], plain(obs, mask)[0].detach().numpy()[m], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net.values(o), plain(obs, mask)[1].detach().numpy(), rtol=1e-5, atol=1e-5)
    assert net.values(o).dtype == np.float64


def test_from_mlp_of_a_network_without_a_scorer(tmp_path: Path) -> None:
    """A format-2 file with a value head and no action scorer converts to a student without features, equal to it."""
    torch.manual_seed(1)
    plain = S.Student(6, 5, [7], [3])
    path = plain.export(tmp_path / "p.npz", {"game": "krypkasino", "players": 2})
    back, _ = from_mlp(path)
    assert back.features is None
    data = _synthetic(9)
    obs, mask, *_ = S.minibatch(data, np.arange(9))
    for a, b in zip(back(obs, mask), plain(obs, mask)):
        torch.testing.assert_close(a, b)


def test_a_value_head_is_required_and_named(tmp_path: Path) -> None:
    """A network without a value head: the numpy network's values() refuses with the file's name."""
    from krypenv.agents.mlp import save

    rng = np.random.default_rng(0)
    path = save(tmp_path / "f1.npz", {"game": "krypkasino", "players": 2, "obs_size": 6, "n_actions": 5, "layers": 1,
                                      "activation": "relu"}, [(rng.normal(0, 1, (4, 6)), np.zeros(4))],
                (rng.normal(0, 1, (5, 4)), np.zeros(5)))
    with pytest.raises(ValueError, match=rf"^mlp checkpoint {path} has no value head$"):
        MLPAgent(path).net.values(np.zeros((1, 6)))


def test_train_anneals_the_rate_to_0_clips_at_1_and_reports_the_data_s_means(monkeypatch: pytest.MonkeyPatch) -> None:
    """The learning rate falls linearly from its start to 0 over ceil(N / batch) × epochs steps; gradients are clipped
    at norm 1; with rate 0, the reported losses are the means over every label (feature students too)."""
    from types import SimpleNamespace

    rates: list[float] = []
    norms: list[float] = []
    real_step, real_clip = torch.optim.Adam.step, torch.nn.utils.clip_grad_norm_

    def step(self: torch.optim.Adam, *a: object, **k: object) -> object:
        rates.append(self.param_groups[0]["lr"])
        return real_step(self, *a, **k)

    def clip(params: object, max_norm: float, *a: object, **k: object) -> object:
        norms.append(max_norm)
        return real_clip(params, max_norm, *a, **k)

    monkeypatch.setattr(torch.optim.Adam, "step", step)
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", clip)
    data = _with_features(70)  # 70 labels in batches of 16: 5 steps an epoch, the last one of 6
    torch.manual_seed(0)
    s = S.Student(6, 5, [8], [4], "moves/2", 3, 4)
    S.train(s, data, SimpleNamespace(epochs=2, batch_size=16, learning_rate=0.01, value_coef=0.5),
            np.random.default_rng(0))
    np.testing.assert_allclose(rates, [0.01 * (1 - k / 10) for k in range(10)], rtol=1e-6)
    assert norms == [1.0] * 10
    torch.manual_seed(0)
    s = S.Student(6, 5, [8], [4], "moves/2", 3, 4)
    stats = S.train(s, data, SimpleNamespace(epochs=1, batch_size=16, learning_rate=0.0, value_coef=0.5),
                    np.random.default_rng(0))
    obs, mask, pairs, feats, target, tv = S.minibatch(data, np.arange(70))
    logits, value = s(obs, mask, pairs, feats)
    total, pol, val = (float(x.detach()) for x in S.distill_loss(logits, value, target, tv, 0.5))
    assert stats["loss"] == pytest.approx(total, rel=1e-5)
    assert stats["policy_loss"] == pytest.approx(pol, rel=1e-5)
    assert stats["value_loss"] == pytest.approx(val, rel=1e-5)
    assert S.minibatch(_synthetic(4), np.arange(4))[2:4] == (None, None)


def test_from_ppo_refuses_a_policy_with_other_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PPO policy with a layer other than Linear and ReLU (here Tanh): refused, naming the file."""
    real = agents.load

    def with_tanh(spec: str, **kw: object) -> object:
        agent = real(spec, **kw)
        net = agent.policy.mlp_extractor.policy_net
        net[1] = torch.nn.Tanh()
        return agent

    monkeypatch.setattr(agents, "load", with_tanh)
    with pytest.raises(ValueError, match=r"^checkpoints/kille-4p.zip: a policy with other layers than Linear and "
                                         r"ReLU; a student cannot hold it$"):
        from_ppo("checkpoints/kille-4p.zip", "kungsholmskille")
