"""mlp:PATH: checkpoints without pickle, the policy's exact distribution, sampling by the game's stream, refusals.

Oracles: the network's probabilities are recomputed here with numpy from the saved arrays; the sampled actions are
held to those probabilities by a chi-square test (power: a policy off by 0.05 in one action's probability is
rejected at these counts with probability > 0.99); every refusal names the file and what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from krypenv.agents import mlp
from krypenv.agents.mlp import FORMAT, MLPAgent, save
from scipy import stats

from krypenv import agents
from krypenv.games import GAMES, Game


@pytest.fixture(params=list(GAMES.values()), ids=list(GAMES))
def game(request: pytest.FixtureRequest) -> Game:
    """Each registered game."""
    return request.param


def env_of(game: Game, players: int = 2) -> Any:
    """A small VecEnv of the game (for decision batches)."""
    return game.part("entry").VecEnv(4, players=players, seed=3, opponents="random")


def checkpoint(tmp_path: Path, game: Game, players: int = 2, seed: int = 0, **card: Any) -> Path:
    """A random network's checkpoint for the game's observation and action sizes."""
    env = env_of(game, players)
    d, a = env.observation_space.shape[0], int(env.action_space.n)
    rng = np.random.default_rng(seed)
    hidden = [(rng.normal(0, 0.1, (16, d)), rng.normal(0, 0.1, 16)),
              (rng.normal(0, 0.3, (8, 16)), rng.normal(0, 0.1, 8))]
    policy = (rng.normal(0, 1.0, (a, 8)), rng.normal(0, 1.0, a))
    base = {"game": game.name, "players": players, "obs_size": d, "n_actions": a, "layers": 2, "activation": "relu"}
    return save(tmp_path / "net.npz", {**base, **card}, hidden, policy)


def batch_of(game: Game, players: int = 2) -> Any:
    """A decision batch of every game of a fresh env, for seat 0 (the learner)."""
    env = env_of(game, players)
    env.reset()
    return env.core.decisions(np.arange(4), env.core.seat.astype(np.int64))


def oracle(path: Path, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The policy recomputed from the saved arrays: ReLU layers, logits, softmax over the legal actions."""
    with np.load(path) as z:
        h = obs.astype(np.float64)
        for k in range(2):
            h = np.maximum(h @ z[f"w{k}"].T.astype(np.float64) + z[f"b{k}"], 0)
        logits = h @ z["pi_w"].T.astype(np.float64) + z["pi_b"]
    logits[mask == 0] = -np.inf
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def test_probabilities_are_the_network_s_softmax_over_legal_actions(game: Game, tmp_path: Path) -> None:
    """Exactly the oracle's distribution (float32 arithmetic), zero on illegal actions, summing to one."""
    path = checkpoint(tmp_path, game)
    agent = agents.load(f"mlp:{path}", game=game.name)
    batch = batch_of(game)
    p = agent.action_probabilities(batch)
    assert np.allclose(p, oracle(path, batch.obs, batch.mask), atol=1e-5)
    assert (p[batch.mask == 0] == 0).all() and np.allclose(p.sum(axis=1), 1)


def test_sampling_follows_the_probabilities_and_the_stream(game: Game, tmp_path: Path) -> None:
    """Actions drawn with the game's uniforms follow the policy (chi-square over 4,000 draws of one decision), are
    always legal, reproduce from the seed; greedy=true plays the mode."""
    path = checkpoint(tmp_path, game, seed=1)
    agent = agents.load(f"mlp:{path}", game=game.name)
    env = env_of(game)
    env.reset()
    core = env.core
    p = agent.action_probabilities(core.decisions(np.zeros(1, np.int64), core.seat[:1].astype(np.int64)))[0]
    picks = []
    for _ in range(4000):
        picks.append(int(agent.act(core.decisions(np.zeros(1, np.int64), core.seat[:1].astype(np.int64)))[0]))
    legal = np.flatnonzero(p > 0)
    assert set(picks) <= set(legal.tolist())
    counts = np.bincount(picks, minlength=p.size)[legal]
    assert stats.chisquare(counts, 4000 * p[legal]).pvalue > 1e-3
    draws = []
    for _ in range(2):  # the same seed, the same uniforms, the same draws
        again = env_of(game)
        again.reset()
        draws.append([int(agent.act(again.core.decisions(np.zeros(1, np.int64),
                                                         again.core.seat[:1].astype(np.int64)))[0]) for _ in range(50)])
    assert draws[0] == draws[1]
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(env_of(game).core.decisions(np.zeros(1, np.int64), np.zeros(1, np.int64)))  # no episode running
    greedy = agents.load(f"mlp:{path},greedy=true", game=game.name)
    batch = batch_of(game)
    assert greedy.act(batch).tolist() == greedy.action_probabilities(batch).argmax(axis=1).tolist()


def test_it_plays_in_the_envs_and_reproduces_by_seed(game: Game, tmp_path: Path) -> None:
    """As an opponent in the VecEnv two runs with one seed give the same games."""
    path = checkpoint(tmp_path, game, seed=2)
    runs = []
    for _ in range(2):
        env = game.part("entry").VecEnv(3, players=2, seed=9, opponents=agents.load(f"mlp:{path}", game=game.name))
        obs = [env.reset()]
        for _ in range(20):
            obs.append(env.step(env.action_masks().argmax(1).astype(np.int64))[0])
        runs.append(np.stack(obs))
    assert np.array_equal(runs[0], runs[1])


def test_refusals_name_the_file_and_what_is_wrong(game: Game, tmp_path: Path) -> None:
    """Another format, game, player count or layout, a missing array, a pickled member, not a file at all."""
    good = checkpoint(tmp_path, game)
    other = next(g for g in GAMES.values() if g.name != game.name)
    with pytest.raises(ValueError, match=f"trained on {game.name}, not {other.name}"):
        agents.load(f"mlp:{good}", game=other.name).act(batch_of(other))
    with pytest.raises(ValueError, match="trained for 2 players, not 3"):
        agents.load(f"mlp:{good}", game=game.name).act(batch_of(game, 3))
    with np.load(good) as z:
        arrays = {k: z[k] for k in z.files}
    for name, change, message in (
            ("bad.npz", {"card": np.array(json.dumps({"format": "other"}))}, "format 'other', expected"),
            ("noarr.npz", {"w1": None}, "missing array 'w1'"),
            ("chain.npz", {"pi_w": np.zeros((3, 5), np.float32)}, "do not chain|logits for"),
            ("nocard.npz", {"card": None}, "no card")):
        data = {k: v for k, v in {**arrays, **change}.items() if v is not None}
        np.savez(tmp_path / name, **data)
        with pytest.raises(ValueError, match=message):
            MLPAgent(tmp_path / name)
    np.savez(tmp_path / "pickled.npz", **{**arrays, "card": np.array([{"format": FORMAT}], dtype=object)})
    with pytest.raises(ValueError, match="not a readable .npz file|no card"):
        MLPAgent(tmp_path / "pickled.npz")  # an object array needs pickle: refused, nothing runs
    (tmp_path / "text.npz").write_text("not an npz")
    with pytest.raises(ValueError, match="not a readable .npz file"):
        MLPAgent(tmp_path / "text.npz")
    with pytest.raises(ValueError, match="no such file"):
        agents.load("mlp:does-not-exist", game=game.name)
    with pytest.raises(ValueError, match="the only option is greedy"):
        agents.load(f"mlp:{good},temperature=2", game=game.name)


def test_exact_exploitability_reads_the_distribution(tmp_path: Path) -> None:
    """krypenv exploit's policy of an mlp agent is its action_probabilities, with no sampling."""
    pytest.importorskip("pyspiel")
    from krypenv.openspiel.exploit import AgentPolicy, load_game

    os_game = load_game("krypkasino", "tiny", 2)
    env = GAMES["krypkasino"].part("entry").VecEnv(2, players=2, preset="tiny")
    d, a = env.observation_space.shape[0], int(env.action_space.n)
    rng = np.random.default_rng(4)
    path = save(tmp_path / "tiny.npz", {"game": "krypkasino", "players": 2, "obs_size": d, "n_actions": a,
                                        "layers": 1, "activation": "relu"},
                [(rng.normal(0, 0.1, (8, d)), rng.normal(0, 0.1, 8))], (rng.normal(0, 1, (a, 8)), rng.normal(0, 1, a)))
    agent = agents.load(f"mlp:{path}")
    policy = AgentPolicy(os_game, agent, samples=8)
    state = os_game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    got = policy.action_probabilities(state)
    expect = agent.action_probabilities(state.decisions(1, 0))[0]
    assert policy.samples == 1 and all(abs(got[k] - expect[k]) < 1e-12 for k in state.legal_actions())
    assert abs(sum(got.values()) - 1) < 1e-9


class _Uniforms:
    """A stand-in for DecisionBatch with given uniforms (and a record of how many it was asked for)."""

    def __init__(self, u: list[float], mask: np.ndarray) -> None:
        self.u, self.mask, self.asked = np.array(u), mask, []

    def uniforms(self, k: int = 1) -> np.ndarray:
        self.asked.append(k)
        return np.repeat(self.u[:, None], k, axis=1)


def test_draw_picks_by_the_cumulative_weights_and_never_an_illegal_action() -> None:
    """mlp.draw: action a when cdf[a-1] < u·total ≤ cdf[a] (weights need not sum to 1), one uniform a decision,
    int64; weight on an illegal action falls back to the last legal one."""
    from krypenv.agents.mlp import draw

    mask = np.ones((4, 3), np.int8)
    p = np.array([[0.0, 1.0, 1.0]] * 3 + [[2.0, 1.0, 1.0]])  # unnormalised: totals 2 and 4
    batch = _Uniforms([0.5, 0.5001, 0.999, 0.5], mask)
    out = draw(p, batch)  # type: ignore[arg-type]
    assert out.tolist() == [1, 2, 2, 0] and out.dtype == np.int64 and batch.asked == [1]
    illegal = np.array([[0, 1, 1], [0, 1, 0]], np.int8)
    out = draw(np.array([[1.0, 0.0, 0.0]] * 2), _Uniforms([0.3, 0.7], illegal))  # type: ignore[arg-type]
    assert out.tolist() == [2, 1]


def test_draw_follows_the_weights_statistically() -> None:
    """mlp.draw over 40,000 uniforms: each action's frequency within 4.5 standard errors of its normalised weight."""
    from krypenv.agents.mlp import draw

    n, w = 40_000, np.array([1.0, 0.0, 3.0, 2.0])
    rng = np.random.default_rng(5)
    out = draw(np.tile(w, (n, 1)), _Uniforms(list(rng.random(n)), np.ones((n, 4), np.int8)))  # type: ignore[arg-type]
    freq, want = np.bincount(out, minlength=4) / n, w / w.sum()
    assert np.all(np.abs(freq - want) <= 4.5 * np.sqrt(want * (1 - want) / n) + 1e-12)


def test_a_scorer_reads_the_legal_actions_features_in_either_layout() -> None:
    """Network.logits: (B, A, F) features or only the legal rows (L, F) give the same logits; a wrong count is
    refused."""
    from krypenv.agents.krypkasino.move_features import action_features, legal_features
    from krypenv.agents.mlp import Network, legal_rows

    spec = Path(__file__).resolve().parents[2] / "checkpoints" / "exit-2p.npz"
    net: Network = MLPAgent(spec).net
    env = GAMES["krypkasino"].part("entry").VecEnv(70, players=2, seed=5, opponents="random")
    env.reset()
    rng = np.random.default_rng(0)
    rules = env.core.rules
    for _ in range(12):
        rows = np.arange(70)
        masks = env.action_masks().astype(np.int8)
        full = action_features(env.core, rows)
        legal = legal_features(env.core.deals.state, env.core.choice, rows, masks, 2, rules.hand_size, False)
        obs = env.core.decisions(rows, env.core.seat.astype(np.int64)).obs
        np.testing.assert_array_equal(net.logits(obs, masks, legal), net.logits(obs, masks, full))
        b, a = np.nonzero(masks)
        assert legal_rows(full, b, a).shape == legal_rows(legal, b, a).shape == (b.shape[0], full.shape[2])
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    with pytest.raises(ValueError, match=rf"{b.shape[0] - 1} rows of legal-action features for {b.shape[0]} legal"):
        legal_rows(legal[1:], b, a)


# --------------------------------------------------------------------------- numpy's BLAS threads
def blas_pools() -> set[int]:
    """The thread counts of the process's BLAS pools, as threadpoolctl reads them."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return {p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}


@pytest.mark.parametrize("threads", [1, 3])
def test_blas_threads_sets_inside_and_restores(threads: int) -> None:
    """Inside the block numpy's BLAS runs ``threads`` threads; after it, the process's own setting again."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        with mlp.blas_threads(threads):
            assert blas_pools() == {threads}
        assert blas_pools() == {2}


def test_blas_threads_without_threadpoolctl(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without threadpoolctl the block runs unchanged, or, when required, an ImportError names what to install."""
    monkeypatch.setattr(mlp, "_blas_controller", lambda: None)
    ran = []
    with mlp.blas_threads(1):
        ran.append(1)
    assert ran == [1]
    with pytest.raises(ImportError, match=r"krypenv\[rl\].*threadpoolctl"), mlp.blas_threads(1, required=True):
        ran.append(2)
    assert ran == [1]


# --------------------------------------------------------------------------- the card's fields, as mutmut found them
def _tanh_oracle(path: Path, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:func:`oracle` with tanh layers."""
    with np.load(path) as z:
        h = obs.astype(np.float64)
        for k in range(2):
            h = np.tanh(h @ z[f"w{k}"].T.astype(np.float64) + z[f"b{k}"])
        logits = h @ z["pi_w"].T.astype(np.float64) + z["pi_b"]
    logits[mask == 0] = -np.inf
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def _resaved(tmp_path: Path, source: Path, name: str, arrays: dict[str, np.ndarray] | None = None,
             **card: Any) -> Path:
    """``source`` saved again as ``name``, with ``arrays`` replaced or added and card keys changed (None: removed)."""
    with np.load(source) as z:
        data = {k: z[k] for k in z.files} | (arrays or {})
    old = json.loads(str(data["card"]))
    data["card"] = np.array(json.dumps({k: v for k, v in {**old, **card}.items() if v is not None}))
    np.savez(tmp_path / name, **data)
    return tmp_path / name


def test_the_card_s_fields_are_read_as_documented(tmp_path: Path) -> None:
    """The activation from the card (tanh plays tanh; none means relu; another is refused by name); missing sizes
    and widths refused with their messages; format 1 ignores format 2's fields; format 2 without ``value_layers``
    has no value head."""
    game = GAMES["krypkasino"]
    batch = batch_of(game)
    tanh = checkpoint(tmp_path, game, activation="tanh")
    np.testing.assert_allclose(MLPAgent(tanh).action_probabilities(batch), _tanh_oracle(tanh, batch.obs, batch.mask),
                               atol=1e-5)
    relu = _resaved(tmp_path, tanh, "relu.npz", activation=None)
    np.testing.assert_allclose(MLPAgent(relu).action_probabilities(batch), oracle(relu, batch.obs, batch.mask),
                               atol=1e-5)
    for name, change, message in (
            ("sig.npz", {"activation": "sigmoid"}, r": activation 'sigmoid' is not one of \('relu', 'tanh'\)$"),
            ("noact.npz", {"n_actions": None}, r": 105 logits for -1 actions$"),
            ("noobs.npz", {"obs_size": None}, r": layer shapes do not chain \(\(16, 344\), \(16,\)\)$"),
            ("nolayers.npz", {"layers": None}, r": layer shapes do not chain \(\(105, 8\), \(105,\)\)$")):
        with pytest.raises(ValueError, match=rf"^mlp checkpoint {tmp_path / name}{message}"):
            MLPAgent(_resaved(tmp_path, tanh, name, **change))
    # format 1: the fields of format 2 in its card or arrays are ignored (it has none of its parts)
    agent = MLPAgent(_resaved(tmp_path, relu, "f1.npz", {"in_scale": np.zeros(344, np.float32)},
                              action_features="moves/2", value_layers=2))
    assert agent.net.features is None and agent.net.value is None and agent.net.in_scale is None
    np.testing.assert_allclose(agent.action_probabilities(batch), oracle(relu, batch.obs, batch.mask), atol=1e-5)


def test_format_2_s_parts_are_checked_with_their_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped student: without ``value_layers`` it has no value head; without its scorer width, an unknown feature
    id or a one-dimensional layer it is refused with the message naming the part; scoring without features says so.
    The known feature ids are listed, or "none"."""
    student = Path(__file__).resolve().parents[2] / "checkpoints" / "exit-2p-seed2.npz"
    assert MLPAgent(_resaved(tmp_path, student, "nov.npz", value_layers=None)).net.value is None
    with np.load(student) as z:
        out_w, w1 = z["out_w"], z["w1"]
    unknown = _resaved(tmp_path, student, "feat.npz", action_features="moves/9")
    for path, message in (
            (_resaved(tmp_path, student, "nowidth.npz", scorer_width=None), r": layers end 64 wide, not -1$"),
            (unknown, r": action features 'moves/9' are not known here \(known: moves/2\)$"),
            (_resaved(tmp_path, student, "wide.npz", {"out_w": np.tile(out_w, (2, 1)), "out_b": np.zeros(2)}),
             r": layers end 2 wide, not 1$"),  # the scorer gives one score an action
            (_resaved(tmp_path, student, "flat.npz", {"w1": w1[0]}),
             r": layer shapes do not chain \(\(128,\), \(128,\)\)$")):
        with pytest.raises(ValueError, match=rf"^mlp checkpoint {path}{message}"):
            MLPAgent(path)
    net = MLPAgent(student).net
    with pytest.raises(ValueError, match=rf"^mlp checkpoint {student} scores actions from features moves/2: none "
                                         r"given$"):
        net.logits(np.zeros((1, 344)), np.ones((1, 105)))
    monkeypatch.setitem(mlp.ACTION_FEATURES, "test/1", mlp.ACTION_FEATURES["moves/2"])
    with pytest.raises(ValueError, match=r"\(known: moves/2, test/1\)$"):
        MLPAgent(unknown)
    monkeypatch.setattr(mlp, "ACTION_FEATURES", {})
    with pytest.raises(ValueError, match=r"\(known: none\)$"):
        MLPAgent(unknown)


def test_a_scorer_on_a_network_without_hidden_layers(tmp_path: Path) -> None:
    """A format-2 network whose scorer reads the observation itself (no hidden layers) loads and scores."""
    import torch
    from krypenv.agents.krypkasino.move_features import N_FEATS

    from krypenv.training.student import Student

    torch.manual_seed(0)
    s = Student(344, 105, [], [4], "moves/2", N_FEATS, 8)
    path = s.export(tmp_path / "s.npz", {"game": "krypkasino", "players": 2})
    agent = MLPAgent(path)
    assert agent.net.hidden == [] and agent.net.scorer["ctx"][0].shape == (8, 344)
    p = agent.action_probabilities(batch_of(GAMES["krypkasino"]))
    assert np.allclose(p.sum(axis=1), 1)
