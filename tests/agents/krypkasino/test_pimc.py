"""The pimc agent: determinized search over the baselines' compiled rollouts (tiny budgets here)."""

from __future__ import annotations

import re
from importlib import import_module

import numpy as np
import pytest
from krypenv.agents.krypkasino import pimc as PM
from krypenv.agents.krypkasino import worlds as worlds_of
from krypenv.agents.krypkasino.pimc import PIMCAgent

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.krypkasino.cards import card_code, names_from_counts
from krypenv.krypkasino.engine import DealBatch, kernels
from krypenv.krypkasino.env_kernels import k_act_external
from krypenv.krypkasino.rules import Rules
from tests.agents.krypkasino.test_heuristics import act_on, core_at, decisions_of, play

TINY = "pimc:samples=3,rounds=1"


def test_options_and_errors() -> None:
    a = agents.load("pimc")
    assert isinstance(a, PIMCAgent) and a.name == "pimc"
    assert (a.samples, a.rollouts, a.policy, a.rounds, a.horizon, a.z, a.voids) == (64, 1, "expert", 1, 0, 2.0, True)
    b = agents.load("pimc:samples=5,rollouts=2,policy=greedy,horizon=4,rounds=0,z=0,voids=false")
    assert (b.samples, b.rollouts, b.policy, b.horizon, b.rounds, b.z, b.voids) == (5, 2, "greedy", 4, 0, 0.0, False)
    assert "pimc" in agents.known()
    for spec, match in [("pimc:samples=0", "option samples must be an integer"),
                        ("pimc:samples=2.5", "option samples"), ("pimc:rollouts=-1", "option rollouts"),
                        ("pimc:policy=smart", "option policy must be one of"), ("pimc:horizon=x", "option horizon"),
                        ("pimc:rounds=99", "option rounds"), ("pimc:z=-1", "option z must be a number"),
                        ("pimc:voids=2", "option voids must be true or false"),
                        ("pimc:sample=3", r"unknown pimc option\(s\) \['sample'\]")]:
        with pytest.raises(ValueError, match=match):
            agents.load(spec)


def test_option_edges() -> None:
    """Both edges of every bounded option: the last value allowed is taken, the next one refused naming the option;
    the errors list what is allowed."""
    for name, lo, hi in (("samples", 1, PM.MAX_SAMPLES), ("rollouts", 1, PM.MAX_SAMPLES), ("horizon", 0, 1000),
                         ("rounds", 0, 12)):
        assert getattr(PIMCAgent(**{name: lo}), name) == lo and getattr(PIMCAgent(**{name: hi}), name) == hi
        for bad in (lo - 1, hi + 1, True, 2.0):
            with pytest.raises(ValueError, match=re.escape(f"pimc option {name} must be an integer from {lo} to "
                                                           f"{hi}, got {bad!r}")):
                PIMCAgent(**{name: bad})
    assert PIMCAgent(z=0).z == 0.0 and PIMCAgent(z=1e300).z == 1e300
    for bad in (float("inf"), -1e-9, True, "1"):
        with pytest.raises(ValueError, match=re.escape(f"pimc option z must be a number >= 0, got {bad!r}")):
            PIMCAgent(z=bad)
    with pytest.raises(ValueError, match=re.escape("unknown pimc option(s) ['x']; options are samples, rollouts, "
                                                   "policy, horizon, rounds, z, voids, device")):
        PIMCAgent(x=1)
    import_module("krypenv.agents.krypkasino.guided")  # registers the learned rollout policies (ppo, mlp)
    with pytest.raises(ValueError, match=re.escape("pimc option policy must be one of random, greedy, creeper, expert "
                                                   "or a learned policy ppo:PATH|mlp:PATH, got 'smart'")):
        PIMCAgent(policy="smart")
    a = PIMCAgent(samples=3, rollouts=2, policy="creeper", horizon=5, rounds=2, voids=False)
    assert a.opts.dtype == np.int64 and a.opts.tolist() == [3, 2, PM.POLICIES["creeper"], 5, 2, 0]
    assert np.array_equal(a.weights, PM.expert_weights())


def test_device_option() -> None:
    """``device``: ``cpu`` unless asked; another value is refused naming it; ``cuda`` where CUDA cannot run says what
    is missing; ``cuda`` with a learned rollout policy is refused (its network runs on the host).  That the device's
    search equals the CPU's is tests/cuda/sim_check.py's (in the simulator)."""
    from krypenv.envs.cuda import CudaUnavailableError, cuda_problem

    assert agents.load("pimc").device == "cpu" and agents.load("pimc:device=cpu").device == "cpu"
    for bad in ("gpu", "CUDA", True, 1):
        with pytest.raises(ValueError, match=re.escape(f"pimc option device must be one of cpu, cuda, got {bad!r}")):
            PIMCAgent(device=bad)
    problem = cuda_problem()
    if problem is None:  # a machine with a GPU (or the simulator)
        assert agents.load("pimc:device=cuda").device == "cuda"
    else:
        want = re.escape(f"pimc option device=cuda needs a GPU with CUDA: {problem}")
        with pytest.raises(CudaUnavailableError, match=want):
            agents.load("pimc:device=cuda")
    for policy in ("ppo:checkpoints/ppo-2p.zip", "mlp:checkpoints/exit-2p.npz"):
        with pytest.raises(ValueError, match=re.escape(f"pimc option device: the search over a learned policy "
                                                       f"({policy}) runs its network on the host; device= is for the "
                                                       "compiled rollout policies (random, greedy, creeper, expert)")):
            agents.load(f"pimc:policy={policy},device=cuda")


@pytest.mark.parametrize("players, spec", [(2, TINY), (3, "pimc:samples=2,policy=greedy,rounds=0,z=0"),
                                           (5, "pimc:samples=2,horizon=3,voids=false")])
def test_legal_everywhere(players: int, spec: str) -> None:
    """Every decision of random games, capture choices included, gets a legal action."""
    agent = agents.load(spec)
    choices = 0
    for core, batch in decisions_of(players, 7 * players, n=8):
        choices += int((core.choice[batch.envs, 0] >= 0).sum())
        check_actions(spec, batch, agent.act(batch))
    assert choices > 0


def test_determinized_worlds_keep_everything_public() -> None:
    """A sampled world: same public cards and own hand, hand sizes and deck length kept, two of every card."""
    P = 3
    for _, (_core, batch) in zip(range(7), decisions_of(P, 40, n=4)):
        pass
    st, d = batch.core.state, batch.core.deals
    W = kernels.tabbes_at(P) + P
    rng = np.array([99], np.uint64)
    pool, used = np.empty(104, np.int64), np.empty(104, np.bool_)
    voids = np.zeros(P, np.int64)
    for i in range(4):
        seat = int(d.turn[i])
        out = np.zeros((1, W), np.int8)
        worlds = set()
        for use in (True, False, True):
            worlds_of.determinize(st, i, P, seat, voids, use, out, 0, rng, pool, used)
            w = DealBatch(Rules(P), 1)
            w.state[0, :W] = out[0]
            assert (w.card_census() == 2).all()
            assert np.array_equal(w.hands[0, seat], d.hands[i, seat])
            assert np.array_equal(w.hands[0].sum(1), d.hands[i].sum(1))
            for name in ("table", "aside", "piles", "tabbes", "hist_card", "pos"):
                assert np.array_equal(getattr(w, name)[0], getattr(d, name)[i]), name
            assert np.array_equal(w.deck[0, :d.pos[i]], d.deck[i, :d.pos[i]])
            worlds.add(out.tobytes())
        assert len(worlds) == 3  # fresh hidden cards each time


def test_voids_are_respected() -> None:
    P = 2
    d = DealBatch.position(Rules(P), hands=[["2C", "3C"], ["4D", "5D", "6D"]], table=["9H"], deck_rest=[])
    st = d.state
    W = kernels.tabbes_at(P) + P
    rng = np.array([3], np.uint64)
    pool, used = np.empty(104, np.int64), np.empty(104, np.bool_)
    voids = np.array([0, sum(1 << v for v in range(2, 14))], np.int64)  # seat 1 holds only aces
    out = np.zeros((1, W), np.int8)
    worlds_of.determinize(st, 0, P, 0, voids, True, out, 0, rng, pool, used)
    hand = out[0, kernels.HANDS + 52:kernels.HANDS + 104]
    assert hand.sum() == 3 and all(name.startswith("A") for name in names_from_counts(hand))


def test_reproducible_and_independent_of_batching() -> None:
    specs = [TINY, "expert"]
    seeds = list(range(30, 36))
    whole = play(specs, 2, seeds)
    assert np.array_equal(whole, play(specs, 2, seeds, batch_size=1))
    assert np.array_equal(whole[2], play(specs, 2, [seeds[2]])[0])


def test_serial_and_parallel_drivers_agree() -> None:
    P = 3
    for _, (_core, batch) in zip(range(5), decisions_of(P, 3, n=6)):
        pass
    a = agents.load(TINY)
    rules = batch.rules
    game = np.zeros(PM.N_GAME + P, np.int64)
    game[:4] = [P, rules.hand_size, 0, 0]
    game[PM.G_SIDE:] = range(P)
    u = np.linspace(0.05, 0.95, len(batch))
    envs = np.asarray(batch.envs, np.int64)
    outs = []
    for par in (False, True):
        out = np.empty(len(batch), np.int64)
        args = (batch.core.state, batch.core.choice, envs, game, a.opts, a.z, a.weights, a.later_kinds, a.later_sizes,
                u, out)
        PM.decide_par(*args, 3) if par else PM.decide_ser(*args)
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])


# --------------------------------------------------------------------------- lookahead
def last_round(hands: list[list[str]], table: list[str], aside: list[str], last_capturer: int) -> DealBatch:
    """A 2-player position in the last round, every other card in the capture piles: nothing is hidden."""
    rules = Rules(2)
    d = DealBatch.position(rules, hands=hands, table=table, aside=aside, last_capturer=last_capturer, turn=0, dealer=1)
    d.round[0] = rules.rounds - 1
    rest = 2 - (d.hands[0].sum(0) + d.table[0] + d.aside[0])
    d.piles[0, 1] = rest  # all in one pile: it changes both moves' scores alike
    return d


def final_score(d: DealBatch, card: str, seat: int = 0) -> int:
    """Seat's score after playing ``card`` (its only capture) and the rest of the deal by expert play."""
    d2 = DealBatch(d.rules, 1, state=d.state.copy())
    (cap,) = [c for k, c in d2.legal_moves(0) if k == card_code(card)]
    d2.step(np.array([card_code(card)]), cap[None])
    core = core_at(d2)
    expert = agents.load("expert")
    status = np.empty(1, np.int64)
    while (w := core.waiting())[0] >= 0:
        batch = core.decisions(np.array([0]), w[:1])
        k_act_external(core.state, core.rng, core.ints, core.packed, np.array([0]), expert.act(batch), status,
                       core.scratch)
    return int(core.deals.scores()[0, seat])


def test_lookahead_finds_the_move_the_expert_misses() -> None:
    # Last round, deck empty: the unseen cards are exactly the other hand, so every world is the
    # real one.  Table AS QS, the K15 pile (KS JS QD) with the opponent, the last capturer.  The
    # expert creeps 8C first; the opponent creeps 5C, and our 6S must then take 5C AS (6 = 5 + 1),
    # which makes us the last capturer: the table and the pile come to us at the end (6 points).
    # Creeping 6S first, our 8C finds no combination after the 5C (AS QS 6S 5C) and creeps too:
    # we capture nothing and the opponent keeps the pile (0 points).  Only playing on shows it.
    d = last_round([["8C", "6S"], ["5C", "2H"]], ["AS", "QS"], ["KS", "JS", "QD"], last_capturer=1)
    assert act_on("expert", d) == card_code("8C")
    assert final_score(d, "8C") == final_score(d, "6S") + 6
    assert act_on("pimc:samples=1", d) == card_code("6S")
    assert act_on("pimc:samples=4,rounds=0", d) == card_code("6S")
