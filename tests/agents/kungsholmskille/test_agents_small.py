"""Kungsholmskille's baselines on a smaller deck (KILLE.md L20–L22): their card counting reads the preset's deck."""

from __future__ import annotations

import numpy as np
from krypenv.agents.kungsholmskille.pimc import sample_world
from krypenv.agents.kungsholmskille.tactics import EXPERT, EXPERT_PARAMS, WORK_WORDS, decide, offsets

from krypenv import agents
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.config import EXTERNAL, EnvConfig
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.rules import Rules
from krypenv.kungsholmskille.single import KungsholmskilleEnv

GAME = "kungsholmskille"
STANDARD_COUNTS = Rules(2).deck_counts


def _small_core(seed: int) -> KungsholmskilleBatch:
    core = KungsholmskilleBatch(EnvConfig(players=2, preset="small"), 1, kinds=[EXTERNAL] * 2)
    core.seed([seed])
    core.reset()
    return core


def test_expert_counts_the_cards_of_the_small_deck() -> None:
    """L20: the expert's chance of holding the lowest card counts only the deck's cards; on random small deals
    some decisions differ from counting a 42-card deck, and the agent takes the small deck's."""
    expert = agents.load("expert", game=GAME)
    off = offsets(2)
    work = np.empty(WORK_WORDS, np.int64)
    small_counts = Rules.from_preset("small", players=2).deck_counts
    differ = 0
    for seed in range(40):
        core = _small_core(seed)
        rng = np.random.default_rng(seed)
        while not core.deals.done[0]:
            seat = int(core.deals.to_act[0])
            obs, mask = core.observe(0, seat)
            small = decide(obs, mask, 2, EXPERT, EXPERT_PARAMS, off, small_counts, work)
            wide = decide(obs, mask, 2, EXPERT, EXPERT_PARAMS, off, STANDARD_COUNTS, work)
            got = int(expert.act(core.decisions(np.array([0]), np.array([seat])))[0])
            assert got == small
            differ += small != wide
            core.deals.play_action(0, int(rng.choice(np.flatnonzero(mask))))
    assert differ > 0


def test_pimc_worlds_deal_only_the_small_decks_cards() -> None:
    """L20: pimc's sampled worlds hold the deck's cards only, the talon filling the deck's length."""
    core = _small_core(3)
    core.deals.play_move(0, "knacka")
    core.deals.play_move(0, "stay")
    counts = core.rules.deck_counts
    for k in range(5):
        w = sample_world(core.state[0], 2, 0, np.random.default_rng(k), counts)
        d = core.deals
        d.state[0] = w
        assert d.card_census(0).tolist() == counts.tolist()
        assert (w[kernels.DECK + 22:kernels.DECK + 42] == -1).all()
        assert w[kernels.HANDS:kernels.HANDS + 21].tolist() == core.deals.hands[0, 0].tolist()


def test_every_baseline_plays_small_episodes_to_their_end() -> None:
    """L21, L22: random, timid, expert and pimc play 3-player small pots legally, each ending within 3 deals."""
    env = KungsholmskilleEnv(players=3, preset="small",
                             opponents=[agents.load(s, game=GAME) for s in ("timid", "pimc:worlds=2")])
    learner = agents.load("expert", game=GAME)
    for seed in range(4):
        env.reset(seed=seed)
        done = False
        while not done:
            core = env.core
            a = int(learner.act(core.decisions(np.array([0]), np.array([int(core.seat[0])])))[0])
            _, _, term, trunc, info = env.step(a)
            done = term or trunc
        assert term and info["deal"] <= 2 and sum(info["money"]) == 0


def test_the_shipped_checkpoint_refuses_other_deck_or_pot_rules() -> None:
    """L22: ppo:kille-4p was trained on the standard game; at a 4-player table with 14 ranks or a pot bound it
    raises one ValueError naming the preset, and still plays the standard table."""
    agent = agents.load("ppo:kille-4p", game=GAME)
    for kw in ({"ranks": 14}, {"pot_deals": 3}):
        core = KungsholmskilleBatch(EnvConfig(players=4, **kw), 1, kinds=[EXTERNAL] * 4)
        core.seed([0])
        core.reset()
        seat = np.array([int(core.deals.to_act[0])])
        try:
            agent.act(core.decisions(np.array([0]), seat))
        except ValueError as exc:
            assert "trained on the standard preset" in str(exc) and "custom" in str(exc)
        else:
            raise AssertionError("a standard checkpoint played a custom table")
    core = KungsholmskilleBatch(EnvConfig(players=4), 1, kinds=[EXTERNAL] * 4)
    core.seed([0])
    core.reset()
    assert agent.act(core.decisions(np.array([0]), np.array([int(core.deals.to_act[0])]))).shape == (1,)
