"""The policy-guided search ``pimc:policy=ppo:PATH``.

It is krypenv.agents.krypkasino.guided on krypenv.agents.krypkasino.lockstep.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from krypenv.agents.krypkasino import lockstep as L
from krypenv.agents.krypkasino.guided import GuidedPIMC
from krypenv.agents.krypkasino.pimc import PIMCAgent, game_vector
from krypenv.agents.krypkasino.policy_nets import PolicyNet, load_ppo
from krypenv.agents.krypkasino.ppo import add_metadata

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import C_E0, EXTERNAL, EnvConfig
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.env_kernels import k_act_external
from tests.agents.krypkasino.test_heuristics import decisions_of, play

CKPT = Path(__file__).resolve().parents[3] / "checkpoints" / "ppo-2p.zip"
SPEC = f"pimc:policy=ppo:{CKPT}"
TINY = SPEC + ",samples=3"


def guided(options: str = "") -> GuidedPIMC:
    agent = agents.load(SPEC + ("," + options if options else ""))
    assert isinstance(agent, GuidedPIMC)
    return agent


def test_spec_builds_the_guided_search_and_leaves_pimc_alone() -> None:
    assert type(agents.load("pimc")) is PIMCAgent
    assert type(agents.load("pimc:policy=greedy,samples=2")) is PIMCAgent
    a = guided()
    assert (a.samples, a.rounds, a.horizon, a.z, a.voids, a.value, a.critic, a.weights, a.sample) == (
        32, 1, 0, 2.0, True, "own", False, 0.0, False)
    b = agents.load(f"pimc:samples=5,policy=ppo:{CKPT},rounds=0,z=1,critic=true,weights=0.5,sample=true,value=relative")
    assert isinstance(b, GuidedPIMC)
    assert (b.samples, b.rounds, b.z, b.critic, b.weights, b.sample, b.scale, b.value) == (
        5, 0, 1.0, True, 0.5, True, 0.1, "relative")
    assert b.ppo is a.ppo  # the checkpoint is loaded once per process


@pytest.mark.parametrize("options, match", [
    ("samples=0", "pimc option samples must be an integer"), ("rounds=13", "pimc option rounds"),
    ("horizon=-1", "pimc option horizon"), ("z=-1", "pimc option z must be a number"),
    ("weights=much", "pimc option weights must be a number"), ("critic=1", "pimc option critic must be true or false"),
    ("sample=yes", "pimc option sample must be true"), ("voids=0", "pimc option voids"), ("rows=0", "pimc option rows"),
    ("threads=0", "pimc option threads"), ("value=mine", "pimc option value must be one of own, relative"),
    ("rollouts=2", r"unknown pimc option\(s\) \['rollouts'\]"),
    ("rollout=pimc", "pimc option rollout must be one of policy, expert, both"),
])
def test_option_errors_name_the_option(options: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        agents.load(SPEC + "," + options)


def test_bad_policies_and_checkpoints(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="ppo checkpoint nowhere.zip"):
        agents.load("pimc:policy=ppo:nowhere.zip")
    with pytest.raises(ValueError, match="option policy must be one of .* or a learned policy ppo:PATH"):
        agents.load("pimc:policy=ppo:")
    meta = load_ppo(str(CKPT)).meta
    other = tmp_path / "gamma.zip"
    add_metadata(CKPT, {**meta, "args": {**meta["args"], "gamma": 0.99}}, to=other)
    assert isinstance(agents.load(f"pimc:policy=ppo:{other}"), GuidedPIMC)  # the critic is not asked
    with pytest.raises(ValueError, match="option critic needs a checkpoint trained with gamma 1"):
        agents.load(f"pimc:policy=ppo:{other},critic=true")


def test_acts_legally_everywhere_and_refuses_other_tables() -> None:
    agent = guided("samples=2,critic=true,weights=1")
    choices = 0
    for core, batch in decisions_of(2, 40, n=6):
        choices += int((core.choice[batch.envs, 0] >= 0).sum())
        check_actions(agent.name, batch, agent.act(batch))
    assert choices > 0
    _, batch = next(decisions_of(3, 1, n=2))
    with pytest.raises(ValueError, match="trained for 2 players and cannot play a 3-player game"):
        agent.act(batch)


def test_network_pieces_match_the_checkpoint() -> None:
    """The search's compact forward pass gives the ppo agent's logits; its critic SB3's predict_values."""
    import torch as th
    from krypenv.agents.krypkasino.move_features import action_features
    from krypenv.agents.krypkasino.move_policy import with_features

    ppo = load_ppo(str(CKPT))
    net = PolicyNet(ppo)
    for _, (core, batch) in zip(range(9), decisions_of(2, 7, n=16)):
        pass
    feats = action_features(core, batch.envs)
    x = with_features(batch.obs, feats)
    ours = net.logits(batch.obs, feats, batch.mask)
    np.testing.assert_allclose(np.where(batch.mask != 0, ours, 0),
                               np.where(batch.mask != 0, ppo.logits(x, batch.mask), 0), rtol=1e-5, atol=1e-4)
    with th.no_grad():
        want = ppo.policy.predict_values(th.as_tensor(x)).numpy().reshape(-1)
    np.testing.assert_allclose(net.values(batch.obs), want, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- what makes the search
def last_round_decisions(n: int = 6):
    """(core, env) of 2-player games at card decisions of the last round (deck empty: every world is the real one)."""
    core = KrypkasinoBatch(EnvConfig(players=2), n, seat=0, kinds=[EXTERNAL] * 2)
    core.seed(list(range(500, 500 + n)))
    core.reset()
    expert = agents.load("expert")
    status = np.empty(n, np.int64)
    while True:
        waiting = core.waiting()
        envs = np.flatnonzero(waiting >= 0)
        if envs.size == 0:
            return
        batch = core.decisions(envs, waiting[envs])
        for k, i in enumerate(envs):
            if core.state[i, kernels.POS] == 104 and core.choice[i, 0] < 0 and batch.mask[k].sum() > 1:
                yield core, int(i)
        k_act_external(core.state, core.rng, core.ints, core.packed, envs, expert.act(batch), status[:envs.size],
                       core.scratch)


def policy_rollout(src: KrypkasinoBatch, i: int, action: int) -> int:
    """The mover's deal score after ``action`` and the rest of the deal played by the ppo agent, one game at a time."""
    ppo = load_ppo(str(CKPT))
    core = KrypkasinoBatch(EnvConfig(players=2), 1, seat=0, kinds=[EXTERNAL] * 2)
    core.state[0], core.ints[0] = src.state[i], src.ints[i]
    mover = int(core.state[0, kernels.TURN])
    status = np.empty(1, np.int64)
    acts = np.array([action])
    while True:
        k_act_external(core.state, core.rng, core.ints, core.packed, np.array([0]), acts, status, core.scratch)
        assert status[0] >= 0
        if core.state[0, kernels.DONE]:
            return int(core.deals.scores()[0, mover])
        acts = ppo.act(core.decisions(np.array([0]), np.array([int(core.state[0, kernels.TURN])])))


def test_exact_last_round_world_picks_the_move_the_rollouts_say_is_best() -> None:
    agent = guided("samples=1,z=0")
    left = 0
    for core, i in last_round_decisions():
        batch = core.decisions(np.array([i]), np.array([int(core.state[i, kernels.TURN])]))
        legal = np.flatnonzero(batch.mask[0])
        values = np.array([policy_rollout(core, i, int(a)) for a in legal])
        base = int(load_ppo(str(CKPT)).act(batch)[0])
        e = int(np.flatnonzero(legal == base)[0])
        want = base if values.min() >= values[e] else int(legal[np.argmin(values)])
        rng = core.rng.copy()
        assert int(agent.act(batch)[0]) == want
        core.rng[:] = rng  # the games go on as the expert plays them
        left += want != base
    assert left > 0  # some decisions leave the policy's own move


def test_one_network_call_per_lockstep_ply() -> None:
    """All worlds × moves × decisions of a batch step together: one logits call per ply, not per game; a row with
    one legal action plays it without the network, and rows of one view share one row's logits."""
    for core, batch in decisions_of(2, 3, n=8):
        if len(batch) == 8 and (batch.mask.sum(1) > 1).all():
            break
    agent = guided("samples=6")
    calls, observed = [], []
    logits, observe = agent.net.logits, agent._observe

    def counting(obs, feats, mask):  # type: ignore[no-untyped-def]
        calls.append(obs.shape[0])
        if calls[1:]:  # every rollout row sent to the network has a choice to make
            assert (np.count_nonzero(mask, axis=1) > 1).all()
        return logits(obs, feats, mask)

    def watching(*args):  # type: ignore[no-untyped-def]
        obs, masks = observe(*args)
        observed.append(obs.shape[0])
        return obs, masks

    agent.net.logits = counting  # type: ignore[method-assign]
    agent._observe = watching  # type: ignore[method-assign]
    agent.act(batch)
    stats = agent.stats
    assert len(observed) == 1 + stats["steps"]  # the root decisions, then one observation per lockstep ply
    assert len(calls) <= len(observed) and calls[0] == observed[0] == 8
    assert observed[1] == stats["rows"] == 6 * int(batch.mask.sum())
    # a row asks the network, or is forced, or shares the logits of an earlier row with its view
    assert sum(calls[1:]) + stats["forced"] + stats["shared"] == sum(observed[1:])
    assert stats["forced"] > 0 and stats["shared"] > 0
    assert stats["steps"] <= 13  # the rest of the first round (12 plies) and a capture choice or so
    assert stats["rows"] > 10 * len(calls)  # rollouts (8 games x 6 worlds x their moves) far outnumber calls


def test_rollout_draws_follow_the_softmax_row_by_row() -> None:
    """_pick: argmax without uniforms; with them, action j when cdf[j-1] < u * total <= cdf[j] of each row's own
    softmax (rows of very different scales, draws on the boundaries, the last action legal)."""
    agent = guided()
    inf = -np.inf
    logits = np.array([[0.0, 0.0, inf, 0.0],            # three equal: cdf 1, 2, 2, 3
                       [-2000.0, inf, -2000.0, inf],      # far below the other rows: cdf 1, 1, 2, 2
                       [inf, 700.0, inf, 700.0 + np.log(3.0)]])  # cdf 0, 1/3, 1/3, 4/3 (the last action 3/4)
    assert agent._pick(logits, None).tolist() == [0, 0, 3]
    cases = [(0.2, 0.2, 0.2, [0, 0, 1]), (1 / 3, 0.5, 0.3, [0, 0, 3]), (0.5, 0.7, 0.24, [1, 2, 1]),
             (2 / 3, 0.49, 0.26, [1, 0, 3]), (0.99, 0.99, 0.99, [3, 2, 3])]
    for u0, u1, u2, want in cases:
        assert agent._pick(logits, np.array([u0, u1, u2])).tolist() == want, (u0, u1, u2)


def test_expert_rollouts_never_ask_the_network() -> None:
    """rollout=expert: every rollout row is the expert's, from the first (only the root decisions are the policy's)."""
    for core, batch in decisions_of(2, 3, n=8):
        if len(batch) == 8 and (batch.mask.sum(1) > 1).all():
            break
    agent = guided("samples=6,rollout=expert")
    calls = []
    logits = agent.net.logits

    def counting(obs, feats, mask):  # type: ignore[no-untyped-def]
        calls.append(obs.shape[0])
        return logits(obs, feats, mask)

    agent.net.logits = counting  # type: ignore[method-assign]
    agent.act(batch)
    assert calls == [8] and agent.stats["steps"] > 5


class EveryRowAsksTheNetwork(GuidedPIMC):
    """The rollouts' plain definition: every row through the network with every action's features."""

    def _rollout_actions(self, rs, ri, cfg, rules, rows, rng, expert_from):  # type: ignore[no-untyped-def]
        from krypenv.agents.krypkasino.move_features import row_features

        assert expert_from == rs.shape[0]
        obs, masks = self._observe(rs, ri, cfg, rows, rs[rows, kernels.TURN].astype(np.int64))
        feats = None
        if self.net.moves:
            feats = row_features(rs[rows], int(cfg[C_E0]), rules.players, rules.hand_size, rules.set_aside == "spades")
        u = None
        if self.sample:
            u = np.empty(rows.shape[0], np.float64)
            L.draw(rng, rows, u)
        return self._pick(self.net.logits(obs, feats, masks), u)


MLP = Path(__file__).resolve().parents[3] / "checkpoints" / "exit-2p.npz"
MLP3 = MLP.with_name("exit-3p.npz")


@pytest.mark.parametrize("policy, sample, set_aside, players", [
    ("ppo", "false", "court", 2), ("ppo", "true", "court", 2), ("mlp", "false", "court", 2),
    ("mlp", "true", "spades", 2), ("mlp", "true", "court", 3)])
def test_forced_rows_shared_views_and_legal_features_change_no_value(policy: str, sample: str, set_aside: str,
                                                                     players: int) -> None:
    """The search's action values and actions are those of the plain rollouts (every row asks the network, with
    every action's features), argmax or sampled: skipping forced rows changes nothing, not even a row's stream, and
    neither does scoring each distinct view of the worlds once."""
    path = CKPT if policy == "ppo" else MLP if players == 2 else MLP3
    spec = f"pimc:policy={policy}:{path},samples=4,sample={sample}"
    fast, plain = agents.load(spec), agents.load(spec)
    plain.__class__ = EveryRowAsksTheNetwork
    checked = 0
    for k, (core, batch) in enumerate(decisions_of(players, 40, n=6, set_aside=set_aside)):
        if k % 5:
            continue
        rng = core.rng.copy()
        v_fast, a_fast = fast.values(batch)
        core.rng[:] = rng
        v_plain, a_plain = plain.values(batch)
        core.rng[:] = rng
        np.testing.assert_array_equal(v_fast, v_plain)
        np.testing.assert_array_equal(a_fast, a_plain)
        checked += int(np.isfinite(v_fast).sum())
    assert checked > 100 and fast.stats["forced"] > 0 and fast.stats["shared"] > 0


def test_both_rollouts_average_the_policys_and_the_experts_values() -> None:
    """``rollout=both``: every world × move valued by the mean of its policy rollout and its expert rollout."""
    for core, batch in decisions_of(2, 3, n=8):
        if len(batch) == 8 and (batch.mask.sum(1) > 1).all():
            break
    seen: dict[str, list[np.ndarray]] = {}
    for mode in ("policy", "expert", "both"):
        agent = guided(f"samples=5,rollout={mode}")
        seen[mode] = []
        choose = agent._choose

        def keep(v, e, w, mode=mode, choose=choose):  # type: ignore[no-untyped-def]
            seen[mode].append(v.copy())
            return choose(v, e, w)

        agent._choose = keep  # type: ignore[method-assign]
        rng = core.rng.copy()
        agent.act(batch)
        core.rng[:] = rng
    assert len(seen["both"]) == len(seen["policy"]) == len(seen["expert"]) == 8
    for pol, exp, both in zip(seen["policy"], seen["expert"], seen["both"]):
        np.testing.assert_allclose(both, (pol + exp) / 2)
    assert any(not np.array_equal(p, e) for p, e in zip(seen["policy"], seen["expert"]))  # two evaluators


def test_reproducible_and_independent_of_batching() -> None:
    spec = TINY + ",critic=true,weights=1,sample=true,value=relative"
    seeds = list(range(20, 24))
    whole = play([spec, "expert"], 2, seeds)
    assert np.array_equal(whole, play([spec, "expert"], 2, seeds))
    assert np.array_equal(whole, play([spec, "expert"], 2, seeds, batch_size=1))
    assert np.array_equal(whole, play([spec + ",rows=1", "expert"], 2, seeds))
    assert np.array_equal(whole[1], play([spec, "expert"], 2, [seeds[1]])[0])
    both = TINY + ",rollout=both"
    whole = play([both, "expert"], 2, seeds)
    assert np.array_equal(whole, play([both, "expert"], 2, seeds, batch_size=1))
    assert np.array_equal(whole, play([both + ",rows=1", "expert"], 2, seeds))


def test_world_weights_follow_the_likelier_worlds() -> None:
    agent = guided("z=0,weights=1")
    v = np.array([[0.0, -10.0], [0.0, 1.0], [0.0, 1.0]])  # world 0 says move 1 is far better, the others worse
    assert agent._choose(v, 0, None) == 1
    assert agent._choose(v, 0, np.array([0.0, 0.0, 0.0])) == 1
    assert agent._choose(v, 0, np.log([0.01, 1.0, 1.0])) == 0
    assert agent._choose(v, 0, np.array([-np.inf, 0.0, 0.0])) == 0
    agent.z = 2.0
    assert agent._choose(v, 0, None) == 0  # the mean is not 2 standard errors below the baseline


def test_replay_rebuilds_the_rounds_decisions() -> None:
    """Replayed in the true world, the round's opponent decisions are exactly the states they were taken in."""
    core = KrypkasinoBatch(EnvConfig(players=2), 1, seat=0, kinds=[EXTERNAL] * 2)
    core.seed([9])
    core.reset()
    expert = agents.load("expert")
    status = np.empty(1, np.int64)
    seen: list[np.ndarray] = []
    checked = 0
    cfg = core.packed
    W = kernels.tabbes_at(2) + 2
    cap = np.empty(52, np.int8)
    while (w := core.waiting())[0] >= 0:
        st = core.state
        if core.choice[0, 0] < 0:
            if st[0, kernels.TURN] == 0 and st[0, kernels.N_MOVES] > 0:
                start = np.zeros((1, st.shape[1]), np.int8)
                first = L.round_start(st, 0, cfg, start, 0, cap)
                out = np.zeros((8, st.shape[1]), np.int8)
                acts = np.zeros(8, np.int64)
                q = L.replay_round(st, 0, cfg, 0, start, first, st, 0, out, acts, 0, cap)
                want = [s for s in seen if s[kernels.ROUND] == st[0, kernels.ROUND] and s[kernels.TURN] == 1]
                assert q == len(want)
                for k in range(q):
                    assert np.array_equal(out[k, :W], want[k][:W])
                    assert acts[k] == st[0, kernels.HIST_CARD + int(want[k][kernels.N_MOVES])]
                checked += q
            seen.append(st[0].copy())
        batch = core.decisions(np.array([0]), w[:1])
        k_act_external(core.state, core.rng, core.ints, core.packed, np.array([0]), expert.act(batch), status,
                       core.scratch)
    assert checked > 20


def test_row_values_own_and_relative() -> None:
    """Own side score; relative: minus the mean of the other sides; and the points nobody has taken yet."""
    from krypenv.krypkasino.cards import POINTS, counts_from_names
    from krypenv.krypkasino.engine import DealBatch
    from krypenv.krypkasino.rules import Rules

    piles = [["10D", "AH"], ["2S", "AC", "AD", "10D"], ["AS"], ["2S"]]  # 3 + 1, 2 + 1 + 1 + 3, 2, 2 points
    pts = [int(sum(POINTS[counts_from_names([c]).argmax()] for c in p)) for p in piles]
    for rules in (Rules(2), Rules(4, teams=((0, 2), (1, 3))), Rules(3)):
        P = rules.players
        d = DealBatch.position(rules, hands=[["2C"]] * P, table=[])
        for s in range(P):
            d.piles[0, s] = counts_from_names(piles[s])
        side = [sum(pts[t] for t in range(P) if rules.team_of(t) == rules.team_of(s)) for s in range(P)]
        others = [side[s] for s in range(1, P) if rules.team_of(s) not in [rules.team_of(t) for t in range(s)]
                  and rules.team_of(s) != rules.team_of(0)]
        vals, left = np.empty(1), np.empty(1)
        L.row_values(d.state, game_vector(rules), np.array([0]), False, vals, left)
        assert vals[0] == side[0] and left[0] == 42 - sum(pts[:P])
        L.row_values(d.state, game_vector(rules), np.array([0]), True, vals, left)
        assert vals[0] == pytest.approx(side[0] - sum(others) / len(others))


@pytest.mark.parametrize("threads", [1, 2])
def test_mlp_network_calls_run_with_the_threads_option(threads: int) -> None:
    """``threads`` sets numpy's BLAS threads for each call of an ``mlp`` network (restored after it), as it sets
    torch's for a ``ppo`` one."""
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas() -> set[int]:
        return {p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}

    before = blas()
    assert before, "numpy's BLAS is not visible to threadpoolctl"
    agent = agents.load(f"pimc:policy=mlp:{MLP},samples=3,threads={threads}")
    inside: list[set[int]] = []
    logits = agent.net.net.logits

    def watching(*args):  # type: ignore[no-untyped-def]
        inside.append(blas())
        return logits(*args)

    agent.net.net.logits = watching  # type: ignore[method-assign]
    with threadpoolctl.threadpool_limits(limits=3, user_api="blas"):  # the process's own setting, to restore
        for _core, batch in decisions_of(2, 3, n=2):
            agent.act(batch)
            break
        assert blas() == {3}
    assert inside and all(seen == {threads} for seen in inside)
    assert blas() == before


class ExpertToldTheVariant(GuidedPIMC):
    """``rollout=expert``'s rollouts by their definition: every row the expert's, its tie-breaks from the row's own
    stream, the expert told the set-aside variant ``told_spades`` (K8: which cards leave the table at a round's end)."""

    told_spades = True

    def _rollout_actions(self, rs, ri, cfg, rules, rows, rng, expert_from):  # type: ignore[no-untyped-def]
        from krypenv.agents.krypkasino import tactics as T
        from krypenv.agents.krypkasino.heuristics import act_batch

        assert expert_from == 0
        u = np.empty(rows.shape[0], np.float64)
        L.draw(rng, rows, u)
        out = np.empty(rows.shape[0], np.int64)
        act_batch(rs, rs[:, cfg[C_E0]:cfg[C_E0] + 53], rows, rules.players, rules.hand_size, self.told_spades,
                  T.EXPERT, self.expert_w, u, out)
        return out


def test_expert_rollouts_play_the_expert_of_the_tables_variant() -> None:
    """``rollout=expert`` under the spades set-aside: the values of rollouts by the expert told the variant, and not
    those of an expert told the court variant (the variant changes some values)."""
    spec = f"pimc:policy=mlp:{MLP},samples=4,rollout=expert,rounds=0"  # to the deal's end: every round end
    fast, spades, court = agents.load(spec), agents.load(spec), agents.load(spec)
    spades.__class__ = court.__class__ = ExpertToldTheVariant
    court.told_spades = False
    differ = checked = 0
    for k, (core, batch) in enumerate(decisions_of(2, 70, n=6, set_aside="spades")):
        if k % 4:
            continue
        rng = core.rng.copy()
        got = []
        for agent in (fast, spades, court):
            core.rng[:] = rng
            got.append(agent.values(batch))
        core.rng[:] = rng
        np.testing.assert_array_equal(got[0][0], got[1][0])
        np.testing.assert_array_equal(got[0][1], got[1][1])
        differ += int(np.sum(np.nan_to_num(got[0][0], nan=0.0) != np.nan_to_num(got[2][0], nan=0.0)))
        checked += int(np.isfinite(got[0][0]).sum())
    assert checked > 100 and differ > 0
