"""krypenv.training.distill: targets and losses against numpy oracles, DAgger's mixing held statistically, the
teacher schedule, every option, and a tiny end-to-end run that resumes without losing or repeating anything."""

from __future__ import annotations

import dataclasses
import filecmp
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from krypenv.agents.mlp import MLPAgent, policy_draw
from scipy import stats

from krypenv import agents
from krypenv.training import distill as D
from krypenv.training import student as S
from krypenv.training.labels import LabelSet
from krypenv.training.student import Student

FAST = {"teacher": "pimc:samples=2", "guided": "samples=1,horizon=2", "shards": 1, "games_per_shard": 4,
        "eval_decks": 2, "epochs": 1, "batch_size": 256, "iterations": 2, "torch_threads": 1}


# --------------------------------------------------------------------------- targets and losses
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.floats(0.05, 20))
def test_policy_targets_are_the_softmax_of_the_legal_values(seed: int, temperature: float) -> None:
    rng = np.random.default_rng(seed)
    n, a = 5, 7
    mask = rng.random((n, a)) < 0.5
    mask[np.arange(n), rng.integers(0, a, n)] = True
    values = np.where(mask, rng.normal(0, 5, (n, a)), np.nan)
    got = S.policy_targets(values, mask, temperature)
    for i in range(n):
        legal = np.flatnonzero(mask[i])
        e = [np.exp(values[i, j] / temperature - values[i, legal].max() / temperature) for j in legal]
        want = np.zeros(a)
        want[legal] = np.array(e) / sum(e)
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(S.policy_targets(values + 100.0, mask, temperature), got, atol=1e-6)  # shift-free


def test_a_cold_target_is_the_best_action() -> None:
    values = np.array([[1.0, 3.0, np.nan, 2.0]])
    mask = ~np.isnan(values)
    np.testing.assert_allclose(S.policy_targets(values, mask, 1e-3), [[0, 1, 0, 0]], atol=1e-6)
    hot = S.policy_targets(values, mask, 1e6)
    np.testing.assert_allclose(hot, [[1 / 3, 1 / 3, 0, 1 / 3]], atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.floats(0, 3))
def test_the_loss_against_numpy(seed: int, value_coef: float) -> None:
    """Cross-entropy towards the target over the legal actions plus value_coef × half the squared value error."""
    rng = np.random.default_rng(seed)
    n, a = 6, 9
    mask = rng.random((n, a)) < 0.6
    mask[:, 0] = True
    logits = np.where(mask, rng.normal(0, 2, (n, a)), -1e9)
    target = S.policy_targets(np.where(mask, rng.normal(0, 3, (n, a)), np.nan), mask, 1.0)
    v, tv = rng.normal(0, 1, n), rng.normal(0, 1, n)
    total, pol, val = S.distill_loss(torch.tensor(logits), torch.tensor(v), torch.tensor(target, dtype=torch.float64),
                                     torch.tensor(tv), value_coef)
    want_pol = 0.0
    for i in range(n):
        legal = np.flatnonzero(mask[i])
        z = logits[i, legal] - logits[i, legal].max()
        logp = z - np.log(np.exp(z).sum())
        want_pol -= (target[i, legal] * logp).sum() / n
    want_val = 0.5 * ((v - tv) ** 2).mean()
    assert abs(float(pol) - want_pol) < 1e-6 and abs(float(val) - want_val) < 1e-9
    assert abs(float(total) - (want_pol + value_coef * want_val)) < 1e-6


# --------------------------------------------------------------------------- labelling
def plain_student(tmp_path: Path, seed: int = 0) -> Path:
    """A random plain-MLP Krypkasino student's mlp file (2 players)."""
    from krypenv.krypkasino.batch import KrypkasinoBatch
    from krypenv.krypkasino.config import EXTERNAL, EnvConfig

    core = KrypkasinoBatch(EnvConfig(players=2), 1, seat=0, kinds=[EXTERNAL] * 2)
    torch.manual_seed(seed)
    s = Student(core.dim, core.n_actions, [32], [16], in_scale=1.0 / np.maximum(core.high, 1.0))
    with torch.no_grad():
        s.pi.weight.mul_(30.0)  # a decided policy: its greedy action differs from the teacher's often
    return s.export(tmp_path / f"student{seed}.npz", {"game": "krypkasino", "players": 2, "preset": "standard"})


def job(**kw: object) -> D.LabelJob:
    base = {"game": "krypkasino", "players": 2, "preset": "standard", "seed": 5, "iteration": 0, "index": 0,
            "games": 12, "teacher": "pimc:samples=1", "student": "", "beta": 1.0}
    return D.LabelJob(**(base | kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("beta", [0.3, 0.8])
def test_dagger_mixing_holds_statistically(tmp_path: Path, beta: float) -> None:
    """The teacher's action is played with probability beta (exact binomial test), the student's greedy one else."""
    student = plain_student(tmp_path)
    labels, card = D.label_shard(job(student=str(student), beta=beta))
    n, k = len(labels), int(labels.by_teacher.sum())
    assert n > 600 and card["beta"] == beta and card["student_play"] == "greedy"
    assert stats.binomtest(k, n, beta).pvalue > 1e-4  # power: beta off by 0.1 gives p < 1e-6 at n > 600
    assert (labels.played[labels.by_teacher] == labels.teacher[labels.by_teacher]).all()
    net = MLPAgent(student).net
    own = net.logits(labels.obs, labels.mask).argmax(axis=1)
    assert (labels.played[~labels.by_teacher] == own[~labels.by_teacher]).all()
    assert (labels.played != labels.teacher).sum() > 20  # the student's own moves are in the data


def test_no_student_the_teacher_plays_and_sampling_draws(tmp_path: Path) -> None:
    labels, card = D.label_shard(job(beta=0.0))
    assert card["beta"] == 1.0 and labels.by_teacher.all() and (labels.played == labels.teacher).all()
    student = plain_student(tmp_path, 1)
    greedy, _ = D.label_shard(job(student=str(student), beta=0.0))
    sampled, card = D.label_shard(job(student=str(student), beta=0.0, sample=True))
    assert card["student_play"] == "sample" and not greedy.by_teacher.any()
    own = MLPAgent(student).net.logits(sampled.obs, sampled.mask).argmax(axis=1)
    assert (sampled.played != own).sum() > 10  # draws, not the mode


def test_a_shard_is_a_function_of_its_job() -> None:
    a, ca = D.label_shard(job())
    b, _ = D.label_shard(job())
    assert all(np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True) for f in ("obs", "values", "played"))
    c, _ = D.label_shard(job(index=1))
    d, _ = D.label_shard(job(seed=6))
    assert not np.array_equal(a.seed, c.seed) and not np.array_equal(a.seed, d.seed)
    assert set(np.unique(a.seed)) == set(D.shard_seeds(5, 0, 0, 12)) and ca["games"] == 12
    assert (a.mask.sum(axis=1) >= 2).all() and not np.isnan(a.values[a.mask]).any()
    taught = a.values[np.arange(len(a)), a.teacher]
    assert (taught <= np.nanmax(a.values, axis=1)).all()


def test_a_shard_is_labelled_with_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """label_shard runs its work with numpy's BLAS at one thread and restores the process's setting after it."""
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas() -> set[int]:
        return {p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}

    seen: list[set[int]] = []
    monkeypatch.setattr(D, "_label_shard", lambda j: seen.append(blas()) or j)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        assert D.label_shard("the job") == "the job"  # type: ignore[arg-type]
        assert blas() == {2}
    assert seen == [{1}]


def test_labelling_without_threadpoolctl_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Labels need the one BLAS thread (the student's sums, so its greedy actions, on every thread count): without
    threadpoolctl a shard is refused with an ImportError naming the extra, before any work."""
    from krypenv.agents import mlp

    monkeypatch.setattr(mlp, "_blas_controller", lambda: None)
    monkeypatch.setattr(D, "_label_shard", lambda j: pytest.fail("labelled without the BLAS setting"))
    with pytest.raises(ImportError, match=r"krypenv\[rl\]"):
        D.label_shard("the job")  # type: ignore[arg-type]


def test_kungsholmskille_labels() -> None:
    lab, _ = D.label_shard(job(game="kungsholmskille", players=4, games=3, teacher="pimc:worlds=2"))
    assert len(lab) > 10 and lab.state.shape[1] > 0
    np.testing.assert_array_equal(lab.teacher, np.nanargmax(lab.values, axis=1))  # pimc plays the best mean money


# --------------------------------------------------------------------------- the schedule and the options
def test_teacher_schedule_and_jobs() -> None:
    args = D.Args(guided="samples=8", guide_from=2, beta=0.4, beta_decay=0.5, shards=3, student_play="sample")
    assert D.teacher_of(args, 0, "s.npz") == "pimc"
    assert D.teacher_of(args, 1, "s.npz") == "pimc"
    assert D.teacher_of(args, 2, "s.npz") == "pimc:policy=mlp:s.npz,samples=8"
    assert D.teacher_of(args, 2, "") == "pimc"
    assert D.teacher_of(dataclasses.replace(args, guided=""), 3, "s.npz") == "pimc:policy=mlp:s.npz"
    assert D.teacher_of(dataclasses.replace(args, guide_from=0), 5, "s.npz") == "pimc"
    assert D.teacher_of(dataclasses.replace(args, teacher="expert"), 0, "") == "expert"
    assert D.teacher_of(dataclasses.replace(args, game="kungsholmskille"), 4, "s.npz") == \
        "pimc:policy=mlp:s.npz,samples=8"
    jobs = D.jobs_of(args, 2, "s.npz")
    assert [j.index for j in jobs] == [0, 1, 2] and all(j.sample for j in jobs)
    assert jobs[0].beta == pytest.approx(0.1) and jobs[0].teacher.endswith("samples=8")
    assert jobs[0].games == args.games_per_shard and jobs[0].seed == args.seed
    other = dataclasses.replace(args, game="kungsholmskille", players=4, preset="tiny", seed=9, games_per_shard=5,
                                student_play="greedy")
    for j in D.jobs_of(other, 3, "t.npz"):  # every field of a job from its own option, none from a default
        assert (j.game, j.players, j.preset, j.seed, j.iteration, j.games, j.student, j.sample) == \
            ("kungsholmskille", 4, "tiny", 9, 3, 5, "t.npz", False)
        assert j.beta == pytest.approx(0.4 * 0.5 ** 3) and j.teacher == D.teacher_of(other, 3, "t.npz")


def test_every_option_parses() -> None:
    for f in dataclasses.fields(D.Args):
        value = {int: 7, float: 0.25, str: "x"}[type(f.default)]
        got = getattr(D.parse([f"--{f.name.replace('_', '-')}", str(value)]), f.name)
        assert got == value, f.name


BAD = [("players", 7), ("players", 1), ("iterations", 0), ("shards", 0), ("games_per_shard", 0), ("epochs", 0),
       ("batch_size", 0), ("window", -1), ("eval_decks", -1), ("eval_decks", 1), ("torch_threads", -1),
       ("guide_from", -1), ("seed", -1), ("eval_seed", -1), ("iterations", 1000), ("shards", 100_000),
       ("games_per_shard", 4097), ("beta", -0.1), ("beta", 1.1), ("beta_decay", 1.5), ("temperature", 0.0),
       ("value_scale", 0.0), ("learning_rate", 0.0), ("value_coef", -1.0), ("hidden", "0"), ("hidden", "a,b"),
       ("value_hidden", ""), ("init", "model.zip"), ("student_play", "best"), ("game", "poker"),
       ("beta_decay", -0.1), ("temperature", float("inf")), ("value_scale", float("inf")),
       ("learning_rate", float("inf")), ("temperature", float("nan")), ("value_coef", float("inf"))]
GOOD = [("players", 6), ("players", 2), ("iterations", 1), ("shards", 1), ("games_per_shard", 1), ("epochs", 1),
        ("batch_size", 1), ("window", 0), ("eval_decks", 0), ("eval_decks", 2), ("torch_threads", 0),
        ("guide_from", 0), ("seed", 0), ("eval_seed", 0), ("iterations", 999), ("shards", 99_999),
        ("games_per_shard", 4096), ("beta", 0.0), ("beta", 1.0), ("beta_decay", 1.0), ("temperature", 1e-3),
        ("value_scale", 1e-3), ("learning_rate", 1e-6), ("value_coef", 0.0), ("hidden", "4096"),
        ("hidden", "8,8"), ("value_hidden", "1"), ("init", "mlp:x.npz"), ("student_play", "sample"),
        ("beta_decay", 0.0), ("temperature", 1e6)]


@pytest.mark.parametrize("name, value", BAD)
def test_bad_arguments_are_refused(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name.replace("_", "-") if name not in ("game",) else "--game"):
        D.check_args(dataclasses.replace(D.Args(), **{name: value}))


@pytest.mark.parametrize("name, value", GOOD)
def test_edge_arguments_are_accepted(name: str, value: object) -> None:
    D.check_args(dataclasses.replace(D.Args(), **{name: value}))


def test_training_data_follows_temperature_scale_and_window(tmp_path: Path) -> None:
    lab, _ = D.label_shard(job(games=4))
    core = D.training_part("krypkasino").distill_core(2, "standard", 1)
    a = S.training_data(D.Args(temperature=1.0, value_scale=0.1), lab, core, True)
    b = S.training_data(D.Args(temperature=4.0, value_scale=0.5), lab, core, True)
    np.testing.assert_allclose(a.target, S.policy_targets(lab.values, lab.mask, 1.0), atol=1e-7)
    np.testing.assert_allclose(b.target, S.policy_targets(lab.values, lab.mask, 4.0), atol=1e-7)
    taught = lab.values[np.arange(len(lab)), lab.teacher]
    np.testing.assert_allclose(a.target_value, 0.1 * taught, rtol=1e-6)
    np.testing.assert_allclose(b.target_value, 0.5 * taught, rtol=1e-6)
    assert a.starts is not None and a.starts[-1] == lab.mask.sum()
    feats = D.training_part("krypkasino").label_features(core, lab.state)
    b_, a_ = np.nonzero(lab.mask)
    np.testing.assert_array_equal(a.feats, feats[b_, a_])


# --------------------------------------------------------------------------- the whole loop
def test_a_tiny_run_end_to_end_and_its_resumption(tmp_path: Path) -> None:
    """Two iterations (the second taught by the search over the first student) in well under a minute; run again:
    nothing relabelled or retrained; a lost shard and student come back the same."""
    out = tmp_path / "run"
    args = D.Args(out=str(out), **FAST)
    rows = D.main(args)
    assert [r["iteration"] for r in rows] == [0, 1]
    s0, s1 = out / "students" / "it000.npz", out / "students" / "it001.npz"
    card = MLPAgent(s1).card
    assert card["trained"]["teacher"] == f"pimc:policy=mlp:{s0},samples=1,horizon=2"
    assert card["trained"]["iterations"] == 2
    assert card["trained"]["labels"] == rows[1]["labels_trained"] > rows[0]["labels_trained"]
    assert card["action_features"] == "moves/2" and card["value_layers"] == 2 and "date" in card["trained"]
    assert filecmp.cmp(s1, out / "final.npz", shallow=False)
    assert rows[0]["opponent"] == "pimc" and rows[0]["ci_low"] <= rows[0]["vs_opponent"] <= rows[0]["ci_high"]
    assert (out / "log.csv").read_text().count("\n") == 3 and any((out / "tb").iterdir())
    agents.load(f"mlp:{s1}").act  # noqa: B018  (loads: the format is the agents')
    labels = LabelSet(out / "labels")
    shard = labels.shards()[1]
    before = {p: p.stat().st_mtime_ns for p in [*labels.shards(), s0, s1]}
    again = D.main(args)
    assert [r["iteration"] for r in again] == [0, 1]
    assert {p: p.stat().st_mtime_ns for p in before} == before  # nothing relabelled, nothing retrained
    old = labels.read(shard)[0]
    old_student = s1.read_bytes()
    shard.unlink()
    s1.unlink()
    (out / "log.csv").write_text("".join((out / "log.csv").read_text().splitlines(keepends=True)[:2]))
    D.main(args)
    new = labels.read(shard)[0]
    assert all(np.array_equal(getattr(old, k), getattr(new, k), equal_nan=True) for k in ("obs", "values", "state"))
    assert s1.read_bytes() == old_student  # the same labels train the same network


def test_init_from_ppo_plays_the_blueprint_first(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = D.Args(out=str(out), init="ppo:checkpoints/ppo-2p.zip", **{**FAST, "iterations": 1, "eval_decks": 0,
                                                                       "beta": 0.0})
    D.main(args)
    init = out / "students" / "init.npz"
    lab = LabelSet(out / "labels").load()[0]
    own = MLPAgent(init).net.logits(lab.obs, lab.mask, D.training_part("krypkasino").label_features(
        D.training_part("krypkasino").distill_core(2, "standard", 1), lab.state)).argmax(axis=1)
    assert (lab.played == own).all()  # beta 0: the ppo blueprint (as an mlp file) played every decision
    with pytest.raises(ValueError, match="trained for 2 players, not 3"):
        D.main(dataclasses.replace(args, out=str(tmp_path / "r3"), players=3))


def test_minibatches_carry_each_labels_own_features() -> None:
    """The sparse rows of any subset of labels are exactly the dense features of their legal actions."""
    lab, _ = D.label_shard(job(games=3))
    part = D.training_part("krypkasino")
    core = part.distill_core(2, "standard", 1)
    data = S.training_data(D.Args(), lab, core, True)
    dense = part.label_features(core, lab.state)
    rng = np.random.default_rng(0)
    for _ in range(5):
        idx = rng.choice(len(lab), size=17, replace=False)
        obs, mask, pairs, feats, target, value = S.minibatch(data, idx)
        b, a = pairs[:, 0].numpy(), pairs[:, 1].numpy()
        np.testing.assert_array_equal(feats.numpy(), dense[idx[b], a])
        assert sorted(zip(b, a)) == sorted(zip(*np.nonzero(lab.mask[idx])))
        np.testing.assert_array_equal(obs.numpy(), lab.obs[idx])
        np.testing.assert_array_equal(target.numpy(), data.target[idx])
        np.testing.assert_array_equal(value.numpy(), data.target_value[idx])
        assert mask.numpy().sum() == len(b)


def test_kungsholmskille_guided_search_over_a_student(tmp_path: Path) -> None:
    """pimc:policy=mlp:FILE plays Kungsholmskille: its values' best action is the one it plays; labels come from it."""
    from krypenv.kungsholmskille.batch import KungsholmskilleBatch
    from krypenv.kungsholmskille.config import EXTERNAL, EnvConfig

    core = KungsholmskilleBatch(EnvConfig(players=4), 1, seat=0, kinds=[EXTERNAL] * 4)
    torch.manual_seed(0)
    s = Student(core.dim, core.n_actions, [16], [8], in_scale=1.0 / np.maximum(core.high, 1.0))
    path = s.export(tmp_path / "k.npz", {"game": "kungsholmskille", "players": 4, "preset": "standard"})
    teacher = f"pimc:policy=mlp:{path},worlds=2"
    lab, card = D.label_shard(job(game="kungsholmskille", players=4, games=2, teacher=teacher, student=str(path),
                                  beta=0.5))
    assert len(lab) > 10 and card["teacher"].startswith("pimc:policy=mlp:")
    np.testing.assert_array_equal(lab.teacher, np.nanargmax(lab.values, axis=1))
    with pytest.raises(ValueError, match="policy must be mlp:PATH"):
        agents.load("pimc:policy=ppo:x.zip", game="kungsholmskille")
    with pytest.raises(ValueError, match="worlds must be an integer from 1"):
        agents.load(f"pimc:policy=mlp:{path},worlds=0", game="kungsholmskille")
    with pytest.raises(ValueError, match="trained on kungsholmskille, not krypkasino"):
        agents.load(f"pimc:policy=mlp:{path}").act(None)


def test_kungsholmskille_guided_values_against_row_by_row_rollouts(tmp_path: Path) -> None:
    """Each action's value is the mean over pimc's worlds of the deal played on row by row by the network's argmax."""
    from krypenv.agents.kungsholmskille.pimc import row_value, sample_world

    from krypenv.kungsholmskille.config import C_MAX_DEALS, E_DEAL, E_MONEY
    from krypenv.kungsholmskille.engine import kernels
    from krypenv.kungsholmskille.observation import encode_into, mask_into
    from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

    env = KungsholmskilleVecEnv(6, players=4, seed=2, opponents="random")
    env.reset()
    core = env.core
    torch.manual_seed(3)
    s = Student(core.dim, core.n_actions, [16], [8], in_scale=1.0 / np.maximum(core.high, 1.0))
    path = s.export(tmp_path / "k.npz", {"game": "kungsholmskille", "players": 4, "preset": "standard"})
    agent = agents.load(f"pimc:policy=mlp:{path},worlds=3", game="kungsholmskille")
    net = MLPAgent(path).net
    batch = core.decisions(np.arange(6), core.seat.astype(np.int64))
    saved = core.rng.copy()
    values, chosen = agent.values(batch)
    core.rng[:] = saved
    seeds = (batch.uniforms(1)[:, 0] * 2**53).astype(np.int64)
    checked = 0
    for k in range(6):
        legal = np.flatnonzero(batch.mask[k])
        if legal.size < 2:
            continue
        i, seat = int(batch.envs[k]), int(batch.seats[k])
        rng = np.random.default_rng(int(seeds[k]))
        worlds = [sample_world(core.state[i], 4, seat, rng, np.asarray(core.rules.deck_counts)) for _ in range(3)]
        money, deal = core.episode[i, E_MONEY:E_MONEY + 4], core.episode[i, E_DEAL]
        left = int(core.packed[C_MAX_DEALS]) - 1 - deal
        for a in legal:
            total = 0.0
            for w in worlds:
                row, cr = w.copy(), core.cash[i].copy()
                kernels.apply(row, cr, 4, a)
                obs, mask = np.empty(core.dim, core.obs_dtype), np.empty(core.n_actions, np.int8)
                while not row[kernels.DONE]:
                    to = row[kernels.TO_ACT]
                    encode_into(row, cr, money, deal, left, False, 4, to, obs)
                    mask_into(row, to, False, mask, np.empty(64, np.int64))
                    kernels.apply(row, cr, 4, int(net.logits(obs[None], mask[None]).argmax()))
                total += row_value(row, cr, 4, seat, True)
            assert values[k, a] == pytest.approx(total / 3, abs=1e-9)
            checked += 1
        assert chosen[k] == legal[np.argmax(values[k, legal])]
    assert checked >= 4


def test_policy_draw_follows_the_probabilities() -> None:
    """policy_draw picks action k for the uniforms in (cdf[k − 1], cdf[k]]: over 40,000 uniforms per row each
    action's count is within 4.5 standard deviations of its binomial mean, an action of probability 0 is never drawn,
    and the boundaries themselves go to the lower action."""
    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(6), size=5)
    probs[:, [1, 4]] = 0.0  # illegal actions
    probs /= probs.sum(axis=1, keepdims=True)
    n = 40_000
    rows = np.repeat(np.arange(5), n)
    drawn = policy_draw(probs[rows], rng.random(5 * n))
    counts = np.stack([np.bincount(drawn[rows == r], minlength=6) for r in range(5)])
    assert (counts[:, [1, 4]] == 0).all()
    assert (np.abs(counts - n * probs) <= 4.5 * np.sqrt(n * probs * (1 - probs)) + 1e-9).all(), counts / n - probs
    edge = np.array([[0.25, 0.0, 0.75]] * 4)
    assert policy_draw(edge, np.array([0.0, 0.25, 0.2500001, 1.0])).tolist() == [0, 0, 2, 2]
    weights = 2.0 * edge  # rows summing to 2 (a float32 softmax sums near 1, not to it): drawn as the normalised row
    assert policy_draw(weights, np.array([0.0, 0.25, 0.2500001, 1.0])).tolist() == [0, 0, 2, 2]
    assert policy_draw(np.array([[0.0, 0.0, 1.0]]), np.array([1.0])).tolist() == [2]  # u = 1: the last action


# --------------------------------------------------------------------------- what mutmut's run found untested
@pytest.mark.parametrize("name, value, message", [
    ("hidden", "4097", "--hidden must be comma-separated sizes from 1 to 4096, got '4097'"),
    ("value_hidden", "8,0", "--value-hidden must be comma-separated sizes from 1 to 4096, got '8,0'"),
    ("eval_decks", 1, "--eval-decks needs at least 2 decks (for a confidence interval), or 0"),
    ("init", "mlpx:a.npz", "--init must be ppo:PATH or mlp:PATH, got 'mlpx:a.npz'"),
])
def test_refusals_say_exactly_what_is_wrong(name: str, value: object, message: str) -> None:
    """The whole message of each refusal, not only the option's name."""
    with pytest.raises(ValueError) as e:
        D.check_args(dataclasses.replace(D.Args(), **{name: value}))
    assert str(e.value) == message


@pytest.mark.parametrize("init", ["ppo:checkpoints/x.zip", "mlp:C:/runs/a.npz", "mlp:a:b:c.npz"])
def test_init_is_read_by_its_first_colon(init: str) -> None:
    """``--init`` names its kind before the first colon: a path with colons of its own is accepted."""
    D.check_args(dataclasses.replace(D.Args(), init=init))


def test_shard_seeds_are_pinned() -> None:
    """The games' seeds of two shards, pinned: the published runs' labels depend on them (63-bit, uint64 streams of
    SeedSequence([seed, 4, iteration, index]))."""
    assert D.shard_seeds(1, 0, 0, 3) == [839276039212745596, 923553668074899365, 4396609011358410917]
    assert D.shard_seeds(7, 2, 5, 2) == [6526708999647265688, 471291403880329787]
    assert all(0 <= s < 2**63 for s in D.shard_seeds(3, 1, 1, 64))


def test_a_log_cell_is_read_back_as_it_was_written() -> None:
    """The training log's cells: ints, floats and text as they were written."""
    assert [D._number(x) for x in ("3", "-2", "2.5", "1e-3", "x", "")] == [3, -2, 2.5, 1e-3, "x", ""]
    assert isinstance(D._number("3"), int) and isinstance(D._number("2.5"), float)
