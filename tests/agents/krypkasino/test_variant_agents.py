"""The baselines on variant decks and deals (RULES.md K20–K22): they count the deal's own deck, never "2 of 52".

Every card-counting baseline plays whole ``tiny`` and ``small`` deals through the duplicate
evaluation; its card counting sees the variant deck (``tactics.unseen_values``, pimc's worlds);
the shipped checkpoints and ``champion`` refuse a non-standard deck with a one-line ValueError.
"""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino import worlds as W
from krypenv.eval.krypkasino import EvalConfig, evaluate
from krypenv.eval.krypkasino.play import play

from krypenv import agents
from krypenv.krypkasino.engine import DealBatch, kernels
from krypenv.krypkasino.rules import Rules


@pytest.mark.parametrize(("preset", "players", "specs"), [
    ("tiny", 2, ("expert", "pimc:samples=4")),
    ("small", 2, ("greedy", "creeper")),
    ("small", 3, ("expert", "pimc:samples=4", "random")),
])
def test_k22_baselines_play_whole_variant_deals(preset: str, players: int, specs: tuple[str, ...]) -> None:
    """K20–K22: the baselines play every deal of the preset to its end; every table's scores sum to total_points."""
    config = EvalConfig(agents=specs, players=players, deals=2, seed=5, preset=preset, workers=1, records=False)
    played = play(config, [agents.load(s) for s in specs])
    rules = Rules.from_preset(preset, players=players)
    assert config.rules == rules and len(played.games) == config.schedule.n_games
    assert (played.scores.sum(axis=1) == rules.total_points).all()  # K16 with K20's total points


@pytest.mark.parametrize(("preset", "players"), [("tiny", 2), ("small", 3)])
def test_k20_card_counting_sees_the_variant_deck(preset: str, players: int) -> None:
    """K20: unseen copies are the variant deck's minus what the seat has seen; pimc deals its worlds from them."""
    rules = Rules.from_preset(preset, players=players)
    d = DealBatch(rules, 1)
    d.reset(rng=np.random.default_rng(3))
    seat = int(d.turn[0])
    seen = d.hands[0, seat] + d.table[0] + d.aside[0] + d.piles[0].sum(axis=0)
    counts = np.zeros(52, np.int64)
    kernels.deck_counts_into(d.state, 0, counts)
    assert counts.tolist() == rules.deck_counts.tolist()
    assert kernels.deck_points(d.state, 0) == rules.total_points
    uval = np.zeros(15, np.int64)
    n = T.unseen_values(d.state, 0, players, seat, uval, T.new_scratch())
    assert n == rules.deck_size - int(seen.sum()) == int(uval.sum())
    out = np.zeros_like(d.state)
    pool, used = np.empty(104, np.int64), np.empty(104, np.bool_)
    W.determinize(d.state, 0, players, seat, np.zeros(players, np.int64), False, out, 0,
                   np.array([7], np.uint64), pool, used)
    world = DealBatch(rules, 1, state=out)
    assert (world.card_census() == rules.deck_counts).all()  # the world is a deal of the same deck
    assert np.array_equal(world.hands[0, seat], d.hands[0, seat])


def test_k20_standard_deck_counts_are_two_of_each() -> None:
    """K1: the standard record (and a record that never set DECK_LEN) counts two of every card, 42 points."""
    d = DealBatch(Rules(players=3), 1)
    d.reset(rng=np.random.default_rng(1))
    counts = np.zeros(52, np.int64)
    kernels.deck_counts_into(d.state, 0, counts)
    assert (counts == 2).all() and kernels.deck_points(d.state, 0) == 42
    blank = np.zeros((1, d.state.shape[1]), np.int8)
    assert kernels.deck_length(blank, 0) == 104 and kernels.deck_points(blank, 0) == 42


@pytest.mark.parametrize("spec", ["ppo:ppo-2p", "champion"])
def test_k22_shipped_checkpoints_and_champion_refuse_a_variant(spec: str) -> None:
    """K22: a shipped checkpoint (trained on the standard deck) and champion refuse tiny with a ValueError naming it."""
    config = EvalConfig(agents=(spec, "expert"), players=2, deals=2, seed=1, preset="tiny", workers=1, records=False)
    with pytest.raises(ValueError, match="tiny"):
        evaluate(config)
