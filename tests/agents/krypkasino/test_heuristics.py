"""The compiled baselines greedy, creeper and expert.

They are krypenv.agents.krypkasino.heuristics over krypenv.agents.krypkasino.tactics.
"""

from __future__ import annotations

import numpy as np
import pytest

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.cards import card_code
from krypenv.krypkasino.config import EXTERNAL, EnvConfig
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.env_kernels import k_act_external
from krypenv.krypkasino.rules import Rules

BASELINES = ("greedy", "creeper", "expert")


def core_at(deals: DealBatch, seed: int = 0) -> KrypkasinoBatch:
    """A one-game core whose game is the hand-built position ``deals`` (every seat external)."""
    P = deals.rules.players
    core = KrypkasinoBatch(EnvConfig(players=P, set_aside=deals.rules.set_aside), 1, seat=0, kinds=[EXTERNAL] * P)
    core.load(deals)
    core.seed([seed])
    return core


def act_on(spec: str, deals: DealBatch, seed: int = 0) -> int:
    """The action the agent ``spec`` takes for the seat to play in the position."""
    core = core_at(deals, seed)
    batch = core.decisions(np.array([0]), np.array([int(deals.turn[0])]))
    return int(check_actions(spec, batch, agents.load(spec).act(batch))[0])


def position(hands: list[list[str]], table: list[str], **kw: object) -> DealBatch:
    return DealBatch.position(Rules(players=len(hands)), hands=hands, table=table, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- hand-built positions
def test_greedy_takes_the_fewest_points_now() -> None:
    # 10C takes 10D (storan, 3 points), 8S takes 5H 3C (the 8S: 1), 9S takes 5H 4D (the 9S: 1),
    # 7H takes 3C 4D: no points, the only such move
    d = position([["10C", "8S", "9S", "7H"], ["2D", "2H", "3D", "3H"]], ["10D", "5H", "3C", "4D"])
    for seed in range(5):
        assert act_on("greedy", d, seed) == card_code("7H")


def test_creeper_creeps_with_its_highest_creeping_card() -> None:
    # KC (13 = 10 + 3) and an ace (14 = 10 + 4) capture; 2C and 6H creep: the 6H goes
    d = position([["2C", "6H", "KC", "AH"], ["2D", "2H", "3D", "3H"]], ["10D", "5H", "3C", "4D"])
    for seed in range(5):
        assert act_on("creeper", d, seed) == card_code("6H")


def test_creeper_captures_greedily_when_nothing_creeps() -> None:
    d = position([["10C", "8S", "7H"], ["2D", "2H"]], ["10D", "5H", "3C", "4D"])
    assert act_on("creeper", d) == card_code("7H")


def test_expert_sets_up_a_forced_sweep_for_the_next_seat() -> None:
    # both cards creep for 0 points.  3H leaves 8C 5D 3H, which any 8 sweeps (8, 5 + 3): the
    # next seat must sweep it if it holds one (K13) and we get -5 (K14); 2H leaves 8C 5D 2H,
    # which nothing sweeps.  Greedy sees no difference, the expert counts the unseen 8s.
    d = position([["3H", "2H"], ["KD", "KH", "QD", "QH"]], ["8C", "5D"])
    for seed in range(5):
        assert act_on("expert", d, seed) == card_code("3H")
    assert {act_on("greedy", d, seed) for seed in range(20)} == {card_code("3H"), card_code("2H")}


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("spec, match", [
    ("expert:setup=-1", "expert option setup must be a number >= 0"),
    ("expert:endq=2", "endq must be a probability"),
    ("expert:high=abc", "expert option high must be a number"),
    ("expert:nosuch=1", r"unknown expert option\(s\) \['nosuch'\]"),
    ("greedy:x=1", "greedy:x=1"),
    ("creeper:x=1", "creeper:x=1"),
])
def test_option_errors_name_the_option(spec: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        agents.load(spec)


def test_registered_with_summaries() -> None:
    known = agents.known()
    for name in BASELINES:
        assert known.get(name)
    assert agents.load("expert:setup=2,high=0").weights[0] == 2.0


# --------------------------------------------------------------------------- whole games
def decisions_of(players: int, seed: int, n: int = 24, set_aside: str = "court"):
    """Every decision (batch) of n games played by random actions, with capture choices, to the end."""
    core = KrypkasinoBatch(EnvConfig(players=players, set_aside=set_aside), n, seat=0, kinds=[EXTERNAL] * players)
    core.seed(list(range(seed, seed + n)))
    core.reset()
    rand = agents.load("random")
    status = np.empty(n, np.int64)
    while True:
        waiting = core.waiting()
        envs = np.flatnonzero(waiting >= 0)
        if envs.size == 0:
            return
        batch = core.decisions(envs, waiting[envs])
        yield core, batch
        k_act_external(core.state, core.rng, core.ints, core.packed, envs, rand.act(batch), status[:envs.size],
                       core.scratch)


@pytest.mark.parametrize("players, set_aside", [(2, "court"), (3, "spades"), (4, "court"), (6, "court")])
def test_every_baseline_acts_legally_everywhere(players: int, set_aside: str) -> None:
    """Over every decision of random games (capture choices included), each baseline's action is legal."""
    baselines = [agents.load(s) for s in BASELINES]
    seen_choice = False
    for core, batch in decisions_of(players, 100 * players, set_aside=set_aside):
        seen_choice |= bool((core.choice[batch.envs, 0] >= 0).any())
        for agent in baselines:
            check_actions(agent.name, batch, agent.act(batch))  # raises on an illegal action
    assert seen_choice


def play(specs: list[str], players: int, seeds: list[int], batch_size: int | None = None) -> np.ndarray:
    """Final scores of games with the given seeds, seat s played by specs[s % len(specs)].

    ``batch_size`` splits every agent's decisions into batches of that size (None: one batch).
    """
    n = len(seeds)
    core = KrypkasinoBatch(EnvConfig(players=players), n, seat=0, kinds=[EXTERNAL] * players)
    core.seed(seeds)
    core.reset()
    ags = [agents.load(s) for s in specs]
    status = np.empty(n, np.int64)
    while True:
        waiting = core.waiting()
        envs = np.flatnonzero(waiting >= 0)
        if envs.size == 0:
            return core.deals.scores()
        seats = waiting[envs]
        for a, agent in enumerate(ags):
            sel = seats % len(ags) == a
            if not sel.any():
                continue
            e, s = envs[sel], seats[sel]
            step = len(e) if batch_size is None else batch_size
            for lo in range(0, len(e), step):
                batch = core.decisions(e[lo:lo + step], s[lo:lo + step])
                acts = check_actions(agent.name, batch, agent.act(batch))
                k_act_external(core.state, core.rng, core.ints, core.packed, e[lo:lo + step], acts, status[:len(acts)],
                               core.scratch)


@pytest.mark.parametrize("players", [2, 4])
def test_same_seed_same_games_whatever_the_batching(players: int) -> None:
    specs = ["expert", "greedy", "creeper"][:players] + ["expert"] * (players - 3)
    seeds = list(range(10, 22))
    whole = play(specs, players, seeds)
    assert np.array_equal(whole, play(specs, players, seeds))
    assert np.array_equal(whole, play(specs, players, seeds, batch_size=1))
    assert np.array_equal(whole, play(specs, players, seeds, batch_size=5))
    # alone, a game is played exactly as in the batch
    assert np.array_equal(whole[3], play(specs, players, [seeds[3]])[0])
    assert not np.array_equal(whole, play(specs, players, [s + 100 for s in seeds]))


def test_expert_beats_greedy() -> None:
    """A sanity check of strength on a few duplicate decks: expert scores less than greedy."""
    seeds = list(range(40))
    a = play(["expert", "greedy"], 2, seeds)
    b = play(["greedy", "expert"], 2, seeds)
    expert = a[:, 0].sum() + b[:, 1].sum()
    greedy = a[:, 1].sum() + b[:, 0].sum()
    assert expert < greedy
