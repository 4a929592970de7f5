"""krypenv.training.ensemble: several students written as one network whose logits are their weighted mean."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from krypenv.agents.mlp import SCORER, MLPAgent, save

from krypenv.training import common
from krypenv.training.ensemble import MAX_MEMBERS, main, merge, parse_weights

D, A, F = 12, 7, 5  # observation entries, actions and move features of the random networks
UNIT = "points"


def member(path: Path, rng: np.random.Generator, widths: tuple[int, ...] = (6, 5), scorer: int = 4,
           value: tuple[int, ...] | None = (3, 4), scale: np.ndarray | None = None, **card: Any) -> Path:
    """A random format-2 network with move features and, unless ``value`` is None, a value head."""
    def layers(sizes: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
        dims = (D, *sizes)
        return [(rng.normal(0, 0.5, (o, i)), rng.normal(0, 0.3, o)) for i, o in itertools.pairwise(dims)]

    hidden = layers(widths)
    extra = {"in_scale": rng.uniform(0.5, 2.0, D) if scale is None else scale,
             "ctx_w": rng.normal(0, 0.5, (scorer, widths[-1])), "ctx_b": rng.normal(0, 0.3, scorer),
             "inp_w": rng.normal(0, 0.5, (scorer, F)), "inp_b": rng.normal(0, 0.3, scorer),
             "hid_w": rng.normal(0, 0.5, (scorer, scorer)), "hid_b": rng.normal(0, 0.3, scorer),
             "out_w": rng.normal(0, 0.5, (1, scorer)), "out_b": rng.normal(0, 0.3, 1)}
    base = {"game": "krypkasino", "players": 2, "preset": "standard", "obs_size": D, "n_actions": A,
            "layers": len(widths), "activation": "relu", "action_features": "moves/2", "scorer_width": scorer,
            "trained": {"name": path.stem}}
    if value is not None:
        for k, (w, b) in enumerate(layers(value)):
            extra[f"vw{k}"], extra[f"vb{k}"] = w, b
        extra["v_w"], extra["v_b"] = rng.normal(0, 0.5, (1, value[-1])), rng.normal(0, 0.3, 1)
        base |= {"value_layers": len(value), "value_unit": UNIT}
    return save(path, {**base, **card}, hidden, (rng.normal(0, 0.5, (A, widths[-1])), rng.normal(0, 0.3, A)), extra)


def inputs(rng: np.random.Generator, b: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations, masks (at least one legal action each) and (B, A, F) move features."""
    mask = rng.random((b, A)) < 0.6
    mask[np.arange(b), rng.integers(0, A, b)] = True
    return rng.normal(0, 1, (b, D)) * rng.integers(0, 3, (b, D)), mask.astype(np.int8), rng.normal(0, 1, (b, A, F))


def merged(tmp_path: Path, paths: list[Path], weights: np.ndarray) -> MLPAgent:
    """The members merged with ``weights``, saved and loaded as the ``mlp`` agent loads it."""
    card, hidden, policy, extra = merge(paths, weights)
    return MLPAgent(save(tmp_path / "ens.npz", card, hidden, policy, extra))


@pytest.mark.parametrize("shared", [True, False], ids=["shared-scale", "folded-scale"])
@pytest.mark.parametrize("seed", range(4))
def test_logits_and_values_are_the_members_weighted_means(tmp_path: Path, seed: int, shared: bool) -> None:
    """Over random members of other widths, depths of scorer and weights: the merged logits and values equal the
    weighted means of the members' own (float64 oracle: each member's Network), both input-scaling paths."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    scale = rng.uniform(0.5, 2.0, D) if shared else None
    paths = [member(tmp_path / f"m{i}.npz", rng, widths=(int(rng.integers(3, 9)), int(rng.integers(2, 7))),
                    scorer=int(rng.integers(2, 6)), scale=scale) for i in range(k)]
    w = rng.dirichlet(np.ones(k))
    ens = merged(tmp_path, paths, w)
    obs, mask, feats = inputs(rng)
    legal = mask != 0
    want = sum(wi * MLPAgent(p).net.logits(obs, mask, feats) for p, wi in zip(paths, w))
    got = ens.net.logits(obs, mask, feats)
    np.testing.assert_array_equal(np.isinf(got), ~legal)
    np.testing.assert_allclose(got[legal], want[legal], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ens.net.values(obs), sum(wi * MLPAgent(p).net.values(obs) for p, wi in zip(paths, w)),
                               rtol=1e-5, atol=1e-5)
    assert np.array_equal(ens.net.in_scale, scale.astype(np.float32)) if shared else np.all(ens.net.in_scale == 1)


def test_a_member_merged_with_itself_is_itself(tmp_path: Path) -> None:
    """Two copies of one member give that member's logits (to float32 rounding), whatever the weights."""
    rng = np.random.default_rng(9)
    p = member(tmp_path / "m.npz", rng)
    obs, mask, feats = inputs(rng)
    for w in ([0.5, 0.5], [0.9, 0.1]):
        got = merged(tmp_path, [p, p], np.array(w)).net.logits(obs, mask, feats)
        np.testing.assert_allclose(got, MLPAgent(p).net.logits(obs, mask, feats), rtol=1e-5, atol=1e-5)


def test_the_value_head_is_left_out_unless_every_member_has_one_in_one_unit(tmp_path: Path) -> None:
    """A member without a value head, one in another unit, of another depth, or whose card names no unit: no value
    head, the card says why (two cards naming no unit are not known to agree)."""
    rng = np.random.default_rng(3)
    a = member(tmp_path / "a.npz", rng)
    cases = {"none": member(tmp_path / "b.npz", rng, value=None),
             "unit": member(tmp_path / "c.npz", rng, value_unit="other"),
             "depth": member(tmp_path / "d.npz", rng, value=(3, 4, 2)),
             "unnamed": member(tmp_path / "u.npz", rng, value_unit=None)}
    for name, b in cases.items():
        card, *_, extra = merge([a, b], np.array([0.5, 0.5]))
        assert "no_value_head" in card and "value_layers" not in card and "v_w" not in extra, name
    card, *_, extra = merge([cases["unnamed"], cases["unnamed"]], np.array([0.5, 0.5]))
    assert "no_value_head" in card and "v_w" not in extra
    card, *_, extra = merge([a, member(tmp_path / "e.npz", rng)], np.array([0.5, 0.5]))
    assert card["value_layers"] == 2 and card["value_unit"] == UNIT and "v_w" in extra


def test_the_card_records_the_members(tmp_path: Path) -> None:
    """The card's ``trained`` lists each member's file, SHA-256, weight and its own ``trained``; the scorer width is
    the members' sum; the matched keys are the members'."""
    import hashlib

    rng = np.random.default_rng(4)
    paths = [member(tmp_path / "a.npz", rng, scorer=3), member(tmp_path / "b.npz", rng, scorer=5)]
    card, *_ = merge(paths, np.array([0.25, 0.75]))
    assert card["scorer_width"] == 8 and card["layers"] == 2 and card["obs_size"] == D
    assert [m["weight"] for m in card["trained"]["members"]] == [0.25, 0.75]
    assert [m["sha256"] for m in card["trained"]["members"]] == [hashlib.sha256(p.read_bytes()).hexdigest()
                                                                 for p in paths]
    assert [m["trained"]["name"] for m in card["trained"]["members"]] == ["a", "b"]
    assert [m["file"] for m in card["trained"]["members"]] == [str(p) for p in paths]


@pytest.mark.parametrize("key,value", [("game", "kungsholmskille"), ("players", 3), ("preset", "tiny"),
                                       ("activation", "tanh"), ("action_features", "test/1")])
def test_members_that_differ_are_refused_naming_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str,
                                                        value: Any) -> None:
    """Members of another game, player count, preset, activation or move features: ValueError naming the key."""
    from krypenv.agents import mlp

    monkeypatch.setitem(mlp.ACTION_FEATURES, "test/1", mlp.ACTION_FEATURES["moves/2"])  # a second registered id
    rng = np.random.default_rng(5)
    a = member(tmp_path / "a.npz", rng)
    b = member(tmp_path / "b.npz", rng, **{key: value})
    with pytest.raises(ValueError, match=rf"differ in '{key}'"):
        merge([a, b], np.array([0.5, 0.5]))


def test_members_of_other_depths_or_sizes_are_refused(tmp_path: Path) -> None:
    """Another hidden depth: refused naming ``layers``; a format-1 member: refused naming the format."""
    rng = np.random.default_rng(6)
    a = member(tmp_path / "a.npz", rng)
    with pytest.raises(ValueError, match="differ in 'layers'"):
        merge([a, member(tmp_path / "b.npz", rng, widths=(6, 5, 4))], np.array([0.5, 0.5]))
    h = [(rng.normal(0, 1, (4, D)), np.zeros(4))]
    one = save(tmp_path / "f1.npz", {"game": "krypkasino", "players": 2, "obs_size": D, "n_actions": A, "layers": 1,
                                     "activation": "relu"}, h, (rng.normal(0, 1, (A, 4)), np.zeros(A)))
    with pytest.raises(ValueError, match=r"f1.npz: not a format-2 network with action features \('krypenv-mlp/1'"):
        merge([a, one], np.array([0.5, 0.5]))


def test_the_member_count_is_bounded_at_both_edges(tmp_path: Path) -> None:
    """One member or more than MAX_MEMBERS: refused; two and MAX_MEMBERS: merged."""
    rng = np.random.default_rng(7)
    p = member(tmp_path / "a.npz", rng, widths=(2, 2), scorer=2, value=None)
    for n in (1, MAX_MEMBERS + 1):
        with pytest.raises(ValueError, match=rf"2 to {MAX_MEMBERS} members, not {n}"):
            merge([p] * n, np.full(n, 1 / n))
    for n in (2, MAX_MEMBERS):
        card, hidden, *_ = merge([p] * n, np.full(n, 1 / n))
        assert hidden[0][0].shape == (2 * n, D) and card["scorer_width"] == 2 * n


@pytest.mark.parametrize("text,count,want", [("", 3, [1 / 3] * 3), ("2,1,1", 3, [0.5, 0.25, 0.25]),
                                             ("1e-3,1e-3", 2, [0.5, 0.5]), ("3", 1, [1.0])])
def test_weights_are_parsed_and_normalised(text: str, count: int, want: list[float]) -> None:
    """Empty: equal weights; otherwise the numbers divided by their sum."""
    np.testing.assert_allclose(parse_weights(text, count), want)


@pytest.mark.parametrize("text,count,message", [("1,2", 3, "2 weights for 3 members"),
                                                ("1,2,3", 2, "3 weights for 2 members"),
                                                ("1,0", 2, "above 0"), ("1,-1", 2, "above 0"),
                                                ("1,inf", 2, "finite"), ("1,nan", 2, "finite"),
                                                ("1,x", 2, "not a comma-separated list")])
def test_bad_weights_are_refused_naming_them(text: str, count: int, message: str) -> None:
    """A wrong count, a weight of 0 or below, a non-finite one or a word: ValueError quoting the text."""
    with pytest.raises(ValueError, match=message) as e:
        parse_weights(text, count)
    assert repr(text) in str(e.value)


def test_the_command_writes_a_network_the_mlp_agent_plays(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI: the file written, with the command, machine and date on its card; ``--weights`` taken."""
    monkeypatch.setattr(common, "machine", lambda: {"cpu": "test"})
    rng = np.random.default_rng(8)
    a, b = member(tmp_path / "a.npz", rng), member(tmp_path / "b.npz", rng)
    out = tmp_path / "ens.npz"
    assert main([str(out), str(a), str(b), "--weights", "3,1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"out": str(out), "members": 2, "weights": [0.75, 0.25], "value_head": True}
    agent = MLPAgent(out)
    trained = agent.card["trained"]
    assert trained["command"] == f"python -m krypenv.training.ensemble {out} {a} {b} --weights 3,1"
    assert trained["machine"] == {"cpu": "test"} and len(trained["date"]) == 10
    assert [m["weight"] for m in trained["members"]] == [0.75, 0.25]
    obs, mask, feats = inputs(rng)
    want = 0.75 * MLPAgent(a).net.logits(obs, mask, feats) + 0.25 * MLPAgent(b).net.logits(obs, mask, feats)
    np.testing.assert_allclose(agent.net.logits(obs, mask, feats)[mask != 0], want[mask != 0], rtol=1e-5, atol=1e-5)
    assert set(SCORER) <= {k.split("_")[0] for k in np.load(out).files}


@pytest.mark.parametrize("argv,message", [(["x.pt", "a.npz", "b.npz"], "must end in .npz"),
                                          (["x.npz", "a.npz", "b.npz", "--weights", "1"], "1 weights for 2 members"),
                                          (["x.npz", "a.npz"], "2 to 16 members, not 1"),
                                          (["x.npz", "a.npz", "missing.npz"], "missing.npz")])
def test_the_command_refuses_bad_input_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                      message: str) -> None:
    """A bad output name, weights, member count or file: exit 2, a message naming it, no file written."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(10)
    member(tmp_path / "a.npz", rng), member(tmp_path / "b.npz", rng)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ensemble: ") and message in err
    assert not (tmp_path / argv[0]).exists()


def test_a_shipped_student_merged_with_itself_plays_as_it_does() -> None:
    """On real Krypkasino decisions (the move features the agent computes): an ensemble of a shipped student with
    itself picks the same greedy actions and gives the same probabilities."""
    from krypenv.agents.checkpoint import SHIPPED

    from krypenv.games import GAMES

    student = SHIPPED / "exit-2p-seed2.npz"
    card, hidden, policy, extra = merge([student, student], np.array([0.5, 0.5]))
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        ens = MLPAgent(save(Path(d) / "ens.npz", card, hidden, policy, extra), greedy=True)
        one = MLPAgent(student, greedy=True)
        env = GAMES["krypkasino"].part("entry").VecEnv(32, players=2, seed=11, opponents="random")
        env.reset()
        for _ in range(20):
            batch = env.core.decisions(np.arange(32), env.core.seat.astype(np.int64))
            np.testing.assert_allclose(ens.action_probabilities(batch), one.action_probabilities(batch), atol=1e-5)
            act = one.act(batch)
            np.testing.assert_array_equal(ens.act(batch), act)
            env.step(act)


def test_the_messages_and_card_texts_are_pinned(tmp_path: Path) -> None:
    """A refusal names both members' values; the card's method and the reason for a missing value head are stated; a
    member without a ``trained`` card is listed with an empty one."""
    rng = np.random.default_rng(12)
    a = member(tmp_path / "a.npz", rng)
    with pytest.raises(ValueError, match=r"differ in 'preset': 'standard' against 'tiny'$"):
        merge([a, member(tmp_path / "b.npz", rng, preset="tiny")], np.array([0.5, 0.5]))
    card, *_ = merge([a, member(tmp_path / "c.npz", rng, value=None, trained=None)], np.array([0.5, 0.5]))
    assert card["no_value_head"] == ("the members' value heads are missing, of other depths or in other or unnamed "
                                     "units")
    assert card["trained"]["method"] == "ensemble (krypenv.training.ensemble): the weighted mean of the members' logits"
    bare = save(tmp_path / "bare.npz", {k: v for k, v in MLPAgent(a).card.items() if k not in ("trained", "format")},
                MLPAgent(a).net.hidden, MLPAgent(a).net.policy,
                {k: v for k, v in np.load(a).items() if k not in ("card", "pi_w", "pi_b") and not k[1:].isdigit()})
    card, *_ = merge([a, bare], np.array([0.5, 0.5]))
    assert card["trained"]["members"][1]["trained"] == {}


def test_a_member_without_features_is_refused(tmp_path: Path) -> None:
    """A format-2 network that scores no actions: refused, naming the file (the merged scorer needs every member's)."""
    rng = np.random.default_rng(13)
    a = member(tmp_path / "a.npz", rng)
    arrays = {k: v for k, v in np.load(a).items() if k in ("in_scale",)}
    dropped = ("action_features", "scorer_width", "format", "value_layers", "value_unit")
    card = {k: v for k, v in MLPAgent(a).card.items() if k not in dropped}
    plain = save(tmp_path / "plain.npz", card, MLPAgent(a).net.hidden, MLPAgent(a).net.policy, arrays)
    with pytest.raises(ValueError, match=r"plain.npz: not a format-2 network with action features \('krypenv-mlp/2', "
                                         r"features None\)"):
        merge([a, plain], np.array([0.5, 0.5]))


def test_a_member_without_input_scaling_reads_the_raw_observation(tmp_path: Path) -> None:
    """A member with no ``in_scale`` counts as scaling by ones: the merged logits are still the weighted mean."""
    rng = np.random.default_rng(14)
    a = member(tmp_path / "a.npz", rng)
    b = member(tmp_path / "b.npz", rng)
    arrays = {k: v for k, v in np.load(b).items() if k not in ("card", "in_scale")}
    hidden = [(arrays.pop(f"w{k}"), arrays.pop(f"b{k}")) for k in range(2)]
    policy = (arrays.pop("pi_w"), arrays.pop("pi_b"))
    raw = save(tmp_path / "raw.npz", {k: v for k, v in MLPAgent(b).card.items() if k != "format"}, hidden, policy,
               arrays)
    assert MLPAgent(raw).net.in_scale is None
    for pair in ([a, raw], [raw, a]):
        ens = merged(tmp_path, pair, np.array([0.3, 0.7]))
        obs, mask, feats = inputs(rng)
        want = sum(w * MLPAgent(p).net.logits(obs, mask, feats) for p, w in zip(pair, (0.3, 0.7)))
        np.testing.assert_allclose(ens.net.logits(obs, mask, feats)[mask != 0], want[mask != 0], rtol=1e-5,
                                   atol=1e-5)


def test_the_command_s_help_and_its_record_of_sys_argv(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``--help`` names the command, says what it does and each argument; run from the shell (``argv`` None) the card
    records ``sys.argv``; a merge without a value head prints so."""
    with pytest.raises(SystemExit):
        main(["--help"])
    text = f" {' '.join(capsys.readouterr().out.split())} "
    for words in ("usage: python -m krypenv.training.ensemble", "An ensemble of ``mlp`` students written as one",
                  "the merged .npz to write", "the members' .npz files (format 2)",
                  "comma-separated weights, one a member (default: equal)"):
        assert f" {words} " in text, words  # whole words: a help text with more around it is not this one
    monkeypatch.setattr(common, "machine", dict)
    rng = np.random.default_rng(15)
    a, b = member(tmp_path / "a.npz", rng), member(tmp_path / "b.npz", rng, value=None)
    out = tmp_path / "ens.npz"
    monkeypatch.setattr("sys.argv", ["ensemble.py", str(out), str(a), str(b)])
    assert main() == 0
    assert json.loads(capsys.readouterr().out)["value_head"] is False
    assert MLPAgent(out).card["trained"]["command"] == f"python -m krypenv.training.ensemble {out} {a} {b}"
