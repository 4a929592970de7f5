"""Kungsholmskille's baselines: what makes each of timid, expert and pimc that agent; specs of the wrong game."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.kungsholmskille.pimc import PimcAgent, sample_world
from krypenv.agents.kungsholmskille.tactics import EXPERT_PARAMS, chance_lowest

from krypenv import agents
from krypenv.agent_api import DecisionBatch
from krypenv.kungsholmskille.actions import BUD, FOLD, KNACKA, PLAY, SHOW, STAY
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.cards import N_RANKS, parse_deck
from krypenv.kungsholmskille.config import EXTERNAL, EnvConfig
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.single import KungsholmskilleEnv
from tests.kungsholmskille.helpers import deck_for

GAME = "kungsholmskille"


def _core(hands: dict[int, list[str]], moves: list[str], talon: list[str] = (), pot: int = 8) -> KungsholmskilleBatch:
    core = KungsholmskilleBatch(EnvConfig(players=4), 1, kinds=[EXTERNAL] * 4)
    core.seed([0])
    core.reset()
    core.deals.reset(decks=parse_deck(deck_for(4, hands, dealer=3, talon=list(talon)))[None], dealers=[3], pots=[pot])
    for m in moves:
        core.deals.play_move(0, m)
    return core


def _act(spec: str, core: KungsholmskilleBatch) -> str:
    seat = int(core.deals.to_act[0])
    agent = agents.load(spec, game=GAME)
    a = int(agent.act(core.decisions(np.array([0]), np.array([seat])))[0])
    return core.action_name(0, a)


@pytest.mark.parametrize("r,k", [(0, 15), (2, 15), (3, 6), (5, 24), (1, 3)])
def test_chance_lowest_matches_monte_carlo(r: int, k: int) -> None:
    rng = np.random.default_rng(r * 100 + k)
    unseen = rng.integers(0, 3, N_RANKS)
    pool = np.repeat(np.arange(N_RANKS), unseen)
    est = chance_lowest(unseen.astype(np.int64), r, k)
    hits = []
    for _ in range(20000):
        drawn = rng.permutation(pool)[:k]
        hits.append(0.5 * (int((drawn >= r).all()) + int((drawn > r).all())))
    assert abs(est - np.mean(hits)) < 0.015


LOW = ["blaren", "blompotta", "9", "husar", "kille"]
MID = ["krans", "5", "9", "husar", "kille"]
HIGH = ["9", "10", "11", "husar", "kille"]


@pytest.mark.parametrize("spec", ["timid", "expert:next_ante=0.8", "expert:margin=1"])
def test_first_call_knocks_only_with_a_low_card(spec: str) -> None:
    """L5: timid, and expert when a lost showdown or a knock has a price, knock with blaren and bud with a 9."""
    assert _act(spec, _core({0: LOW}, [])) == "knacka"
    assert _act(spec, _core({0: HIGH}, [])) == "bud"


def test_expert_knocks_whenever_it_can_win_the_pot() -> None:
    """L5, L12: in the episode's money a knock costs nothing and a budrunda costs an ante: expert knocks."""
    assert _act("expert", _core({0: LOW}, [])) == "knacka"
    assert _act("expert", _core({0: HIGH}, [])) == "knacka"


def test_timid_never_knocks_above_its_limit_on_random_deals() -> None:
    """Over many deals: timid's first call is knacka exactly when its lowest card is blaren or blompotta (L5)."""
    env = KungsholmskilleBatch(EnvConfig(players=4), 256, kinds=[EXTERNAL] * 4)
    env.seed(list(range(256)))
    env.reset()
    seats = env.deals.to_act.astype(np.int64)
    batch = env.decisions(np.arange(256), seats)
    acts = agents.load("timid", game=GAME).act(batch)
    lowest = np.array([np.flatnonzero(batch.obs[i, :N_RANKS])[0] for i in range(256)])
    assert set(acts.tolist()) == {BUD, KNACKA} and np.array_equal(acts == KNACKA, lowest <= 1)
    acts2 = agents.load("timid:knock_max=0", game=GAME).act(batch)
    assert np.array_equal(acts2 == KNACKA, lowest == 0)


def test_expert_folds_a_hopeless_hand_only_when_a_lost_showdown_costs() -> None:
    """L6: facing seat 1's knock, seat 2 stays with blaren; with five high cards it folds only if a lost showdown
    costs the next ante (``next_ante``): in the episode's money (L12, L14, L16) a fold only gives up the pot."""
    assert _act("expert:next_ante=0.8", _core({1: MID, 2: HIGH}, ["bud", "knacka"])) == "fold"
    assert _act("expert", _core({1: MID, 2: HIGH}, ["bud", "knacka"])) == "stay"
    for spec in ("expert", "expert:next_ante=0.8"):
        assert _act(spec, _core({1: MID, 2: LOW}, ["bud", "knacka"])) == "stay"
    assert _act("timid", _core({1: MID, 2: MID}, ["bud", "knacka"])) == "stay"  # krans: timid's limit


def test_expert_exchanges_its_highest_cards() -> None:
    core = _core({0: MID, 1: LOW}, ["bud", "knacka", "stay", "stay", "stay"])
    assert _act("expert", core) == "discard:husar,kille"
    assert _act("timid", core) == "discard:husar,kille"


class Watch:
    """Wraps an agent; checks every trick play keeps the lowest card unless nothing else is legal (L10)."""

    def __init__(self, spec: str) -> None:
        self.agent, self.name, self.plays, self.kept = agents.load(spec, game=GAME), spec, 0, 0

    def act(self, batch: DecisionBatch) -> np.ndarray:
        acts = self.agent.act(batch)
        for k, a in enumerate(acts):
            if a >= PLAY:
                hand = batch.obs[k, :N_RANKS]
                low = int(np.flatnonzero(hand)[0])
                legal = np.flatnonzero(batch.mask[k, PLAY:])
                self.plays += 1
                if legal.size > 1:
                    assert a - PLAY != low or hand[low] > 1, (hand, legal, a)
                    self.kept += 1
        return acts


@pytest.mark.parametrize("spec", ["expert", "timid"])
def test_tricks_keep_the_lowest_card_to_the_end(spec: str) -> None:
    watch = Watch(spec)
    env = KungsholmskilleEnv(players=4, opponents=[watch] * 3, max_deals=10)
    for seed in range(20):
        _obs, info = env.reset(seed=seed)
        while True:
            legal = np.flatnonzero(info["action_mask"])
            _obs, _r, term, trunc, info = env.step(KNACKA if KNACKA in legal else int(legal[0]))  # the learner knocks
            if term or trunc:
                break
    assert watch.plays > 100 and watch.kept > 20


def _show_core(pot: int) -> KungsholmskilleBatch:
    """Seat 0 to say show/bud holding blaren, the other blaren played by seat 1 (it cannot lose)."""
    core = KungsholmskilleBatch(EnvConfig(players=2), 1, kinds=[EXTERNAL] * 2)
    core.seed([0])
    core.reset()
    deck = deck_for(2, {0: ["blaren", "kille", "gok", "husar", "svin"],
                        1: ["blaren", "krans", "3", "4", "5"]}, dealer=1)
    core.deals.reset(decks=parse_deck(deck)[None], dealers=[1], pots=[pot])
    for m in ["knacka", "stay", "stand", "stand", "knacka"]:
        core.deals.play_move(0, m)
    for m in ["play:kille", "play:blaren", "play:gok", "play:krans", "play:husar", "play:3", "play:svin", "play:4"]:
        core.deals.play_move(0, m)  # seat 1 cannot overtake: its lowest card each time (L10)
    assert core.deals.phase[0] == kernels.SHOWING and core.deals.to_act[0] == 0
    return core


@pytest.mark.parametrize("spec", ["timid", "expert"])
def test_show_when_the_card_cannot_lose(spec: str) -> None:
    """L11, L14: blaren with the other blaren played cannot lose the showdown: timid and expert show."""
    assert _act(spec, _show_core(10)) == "show"


def test_pimc_values_a_sure_showdown_exactly() -> None:
    """Showing wins the pot of 10 in every world: the episode ends there (L16); as a deal, less the ante of 1
    (two at the showdown, L14).  A budrunda (both bud, L12, nobody folded): the ante of 1, and half the pot of 12."""
    core = _show_core(10)
    mask = core.observe(0, 0)[1]
    legal, vals = PimcAgent(worlds=8).world_values(core, 0, 0, mask, np.random.default_rng(0))
    assert legal.tolist() == [BUD, SHOW] and vals[1].tolist() == [10.0] * 8
    legal, vals = PimcAgent(worlds=8, value="deal").world_values(core, 0, 0, mask, np.random.default_rng(0))
    assert vals[1].tolist() == [9.0] * 8
    core.deals.play_move(0, "bud")
    assert core.deals.to_act[0] == 1
    legal, vals = PimcAgent(worlds=4, rollout="timid").world_values(core, 0, 1, core.observe(0, 1)[1],
                                                               np.random.default_rng(0))
    assert legal.tolist() == [BUD, SHOW] and vals[0].tolist() == [-1 + 12 / 2] * 4


def test_pimc_plays_the_best_mean_over_its_worlds() -> None:
    core = _core({0: LOW, 1: MID}, ["bud", "knacka", "stay", "stay", "stay"])
    seat = int(core.deals.to_act[0])
    mask = core.observe(0, seat)[1]
    pimc = PimcAgent(worlds=16)
    legal, vals = pimc.world_values(core, 0, seat, mask, np.random.default_rng(5))
    assert vals.shape == (legal.size, 16) and legal.size == 16  # stand, 5 singles, 10 pairs (L8)
    batch = core.decisions(np.array([0]), np.array([seat]))
    u = core.rng.copy()
    chosen = int(pimc.act(batch)[0])
    core.rng[:] = u
    seed = int(core.uniforms(np.array([0]), 1)[0, 0] * 2**53)
    legal2, vals2 = pimc.world_values(core, 0, seat, mask, np.random.default_rng(seed))
    assert chosen == legal2[int(np.argmax(vals2.mean(axis=1)))]


def test_pimc_worlds_keep_public_information_and_do_not_leak() -> None:
    mid2 = ["krans", "5", "8", "gok", "svin"]
    a = _core({0: LOW, 1: mid2, 2: HIGH}, ["bud", "knacka", "stay", "fold", "stay"])
    b = _core({0: LOW, 1: HIGH, 2: mid2}, ["bud", "knacka", "stay", "fold", "stay"])
    seat = 0
    for core in (a, b):
        w = sample_world(core.state[0], 4, seat, np.random.default_rng(1))
        assert np.array_equal(w[kernels.HANDS:kernels.HANDS + N_RANKS],
                              core.state[0, kernels.HANDS:kernels.HANDS + N_RANKS])
        assert w[kernels.HANDS:kernels.HANDS + 4 * N_RANKS].reshape(4, N_RANKS).sum(axis=1).tolist() == [5] * 4
    wa = sample_world(a.state[0], 4, seat, np.random.default_rng(1))
    wb = sample_world(b.state[0], 4, seat, np.random.default_rng(1))
    public = np.r_[kernels.TPOS:kernels.N_MOVES + 1, kernels.FOLDED:kernels.FOLDED + 6,
                   kernels.EXCHANGED:kernels.EXCHANGED + 6, kernels.CALL1:kernels.TRICK_CARDS]
    assert (np.array_equal(wa[kernels.HANDS:kernels.FOLDED], wb[kernels.HANDS:kernels.FOLDED])
            and np.array_equal(wa[public], wb[public]))
    mask = a.observe(0, seat)[1]
    pimc = PimcAgent(worlds=8)
    va = pimc.world_values(a, 0, seat, mask, np.random.default_rng(2))[1]
    vb = pimc.world_values(b, 0, seat, mask, np.random.default_rng(2))[1]
    assert np.array_equal(va, vb)


def test_pimc_defaults_and_one_rollout_per_world_and_move() -> None:
    """pimc's defaults (32 worlds, expert rollouts); its values hold one rollout per (world, legal move).

    Speed is measured by benchmarks, never by a timed test.
    """
    pimc = agents.load("pimc", game=GAME)
    assert pimc.worlds == 32 and pimc.rollout == "expert" and pimc.value == "episode"
    core = _core({0: LOW}, ["bud", "knacka", "stay", "stay", "stay"])
    mask = core.observe(0, 0)[1]
    legal, vals = pimc.world_values(core, 0, 0, mask, np.random.default_rng(0))
    assert vals.size == pimc.worlds * len(legal)


def test_specs_of_the_wrong_game_are_refused() -> None:
    assert agents.load("expert", game=GAME).game == GAME and agents.load("expert").game == "krypkasino"
    assert isinstance(agents.load("pimc", game=GAME), PimcAgent)
    with pytest.raises(ValueError, match="agent 'greedy' plays krypkasino, not kungsholmskille"):
        agents.load("greedy", game=GAME)
    with pytest.raises(ValueError, match="ppo-2p.zip: trained for krypkasino, not kungsholmskille"):
        agents.load("ppo:checkpoints/ppo-2p.zip", game=GAME)
    with pytest.raises(ValueError, match="'expert' was built for krypkasino, not kungsholmskille"):
        KungsholmskilleEnv(opponents=agents.load("expert"))
    with pytest.raises(ValueError, match="timid: knock_max"):
        agents.load("timid:knock_max=25", game=GAME)
    with pytest.raises(ValueError, match="pimc: rollout"):
        agents.load("pimc:rollout=greedy", game=GAME)
    with pytest.raises(ValueError, match="pimc: value must be one of episode, deal"):
        agents.load("pimc:value=money", game=GAME)
    with pytest.raises(ValueError, match="next_ante >= 0"):
        agents.load("expert:next_ante=-1", game=GAME)
    assert set(agents.known(GAME)) == {"expert", "mlp", "pimc", "ppo", "random", "rllib", "timid", "tabular"}
    assert EXPERT_PARAMS.shape == (7,) and SHOW == 5 and FOLD == 2 and STAY == 3
