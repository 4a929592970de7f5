"""SeatView (a seat's public information) and the shared agent interface at Kungsholmskille tables."""

from __future__ import annotations

import numpy as np
import pytest
from krypenv.agents.base import RandomAgent

from krypenv import agents
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.cards import parse_deck, rank_index
from krypenv.kungsholmskille.config import EXTERNAL, EnvConfig
from krypenv.kungsholmskille.single import KungsholmskilleEnv
from tests.kungsholmskille.helpers import deck_for

HANDS = {0: ["blaren", "3", "7", "gok", "kille"], 1: ["krans", "5", "9", "husar", "svin"],
         2: ["1", "2", "4", "6", "8"], 3: ["blompotta", "10", "11", "12", "kavall"]}
def _core(hands: dict[int, list[str]], talon: list[str]) -> KungsholmskilleBatch:
    core = KungsholmskilleBatch(EnvConfig(players=4), 1, kinds=[EXTERNAL] * 4)
    core.seed([0])
    core.reset()
    core.deals.reset(decks=parse_deck(deck_for(4, hands, dealer=3, talon=talon))[None], dealers=[3], pots=[8])
    return core


def _play(core: KungsholmskilleBatch, moves: list[str]) -> None:
    for m in moves:
        core.deals.play_move(0, m)


SCRIPT = ["bud", "knacka", "fold", "stay", "stay", "discard:gok,kille", "stand", "discard:kavall", "knacka",
          "play:7"]


def test_view_holds_the_seats_public_information() -> None:
    core = _core(HANDS, ["blaren", "vardshus", "krans"])
    _play(core, SCRIPT)
    assert all(callable(getattr(core, m)) for m in ("uniforms", "seat_view", "action_name")) and core.rules.players == 4
    v = core.seat_view(0, 0)
    assert v.seat == 0 and v.players == 4 and v.dealer == 3 and v.phase == "tricks" and v.deal == 0
    assert v.forehand == 0 and v.to_act == 1 and v.pot == 8 and v.money.tolist() == [-2] * 4
    assert v.folded.tolist() == [False, False, True, False] and v.in_play == [0, 1, 3] and v.n_in == 3
    assert v.call1 == ["bud", "knacka", None, None] and v.fold_call == ["stay", None, "fold", "stay"]
    assert v.call2 == ["knacka", None, None, None]
    assert v.exchanged.tolist() == [2, 0, -1, 1]
    # seat 0 drew blaren, vardshus from the talon (L8) for gok, kille; it played 7 to the first trick
    names = {rank_index(x) for x in ("blaren", "3", "vardshus")}
    assert {int(x) for x in np.flatnonzero(v.hand)} == names and v.hand[rank_index("blaren")] == 2
    assert v.discards[rank_index("gok")] == 1 and v.discards[rank_index("kille")] == 1
    assert v.tricks == [[(0, rank_index("7"))]] and v.current_trick == [(0, rank_index("7"))]
    assert v.high == rank_index("7") and v.trick == 0 and v.talon == 42 - 20 - 3
    assert v.seen.sum() == 4 + 2 + 1 and v.unseen.sum() == 42 - 7 and v.legal_moves == []
    w = core.seat_view(0, 1)  # seat 1 must overtake the 7 (L10)
    assert w.legal_moves == ["play:9", "play:svin", "play:husar"] and w.action_for("play:9") == 258 + rank_index("9")
    with pytest.raises(ValueError, match="not legal for seat 1"):
        w.action_for("play:krans")


def test_view_does_not_leak_hidden_cards() -> None:
    """Two deals that differ only in seat 1's hand and the talon's back give seat 0 the same view."""
    other = {**HANDS, 1: ["krans", "5", "9", "husar", "husar"]}
    views = []
    for hands in (HANDS, other):
        core = _core(hands, ["blaren", "vardshus", "krans"])
        _play(core, SCRIPT[:8])
        views.append(core.seat_view(0, 0))
    a, b = views
    for field in ("hand", "discards", "exchanged", "money", "folded", "seen", "unseen"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert (a.call1, a.fold_call, a.tricks, a.legal_moves) == (b.call1, b.fold_call, b.tricks, b.legal_moves)


class _ExternalRandom:
    """The random agent asked from Python (not native), to compare with the compiled built-in one."""

    name = "external-random"

    def act(self, batch):
        return RandomAgent().act(batch)


def _trajectory(opponents: object, seed: int) -> list[tuple[int, float]]:
    env = KungsholmskilleEnv(players=4, opponents=opponents, max_deals=6)
    obs, info = env.reset(seed=seed)
    out = []
    while True:
        a = int(np.flatnonzero(info["action_mask"])[-1])
        obs, r, term, trunc, info = env.step(a)
        out.append((a, r, int(obs.sum())))
        if term or trunc:
            return out


@pytest.mark.parametrize("seed", [0, 3])
def test_random_opponents_compiled_or_through_decision_batches_play_alike(seed: int) -> None:
    """agents.load('random', game=...) runs compiled (native); asked from Python it makes the same choices."""
    loaded = agents.load("random", game="kungsholmskille")
    assert _trajectory("random", seed) == _trajectory(loaded, seed) == _trajectory(_ExternalRandom(), seed)


def test_opponent_spec_strings() -> None:
    with pytest.raises(ValueError, match=r"agents.load\('expert', game='kungsholmskille'\)"):
        KungsholmskilleEnv(opponents="expert")
    with pytest.raises(ValueError, match="not an agent"):
        KungsholmskilleEnv(opponents=3)
