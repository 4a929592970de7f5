"""What the OpenSpiel tests share: the configuration grids of both games, oracles written from the rules, playing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from krypenv.krypkasino.cards import card_name
from krypenv.kungsholmskille.actions import FOLD, SHOW
from krypenv.kungsholmskille.config import E_OVER, POT_OUT, TRUNCATED
from krypenv.kungsholmskille.engine import kernels

KRYPKASINO = "python_krypkasino"
KUNGSHOLMSKILLE = "python_kungsholmskille"

# Every player count, preset (K22), team seating (K18), reward mode and rule key of python_krypkasino, each at least
# once; a variant deck (K20, K21) too.
KRYPKASINO_GRID: list[dict[str, Any]] = [
    {"players": 2, "preset": "tiny"},
    {"players": 2, "preset": "tiny", "reward": "relative"},
    {"players": 2, "preset": "small"},
    {"players": 3, "preset": "small", "last_capture_point": True},
    {"players": 2},
    {"players": 2, "two_player_deal": "5x6", "set_aside": "spades"},
    {"players": 3, "reward": "relative"},
    {"players": 4, "teams": 2},
    {"players": 4, "teams": 2, "reward": "relative", "last_capture_point": True},
    {"players": 5, "set_aside": "spades"},
    {"players": 6, "teams": 2},
    {"players": 6, "teams": 3, "reward": "relative"},
    {"players": 2, "ranks": "A-2-3-4-5", "suits": "H-S-D", "copies": 1, "hand": 2, "table": 3},
]

# Every player count and preset (L22) of python_kungsholmskille, a smaller deck (L20), pot bounds (L21) below, at
# and above the env's bound of deals (L16), another first dealer (L2).
KUNGSHOLMSKILLE_GRID: list[dict[str, Any]] = [
    {"players": 2, "preset": "small"},
    {"players": 3, "preset": "small"},
    {"players": 2, "max_deals": 2},
    {"players": 3, "max_deals": 3, "first_dealer": 0},
    {"players": 4, "max_deals": 3},
    {"players": 5, "max_deals": 2, "ranks": 18},
    {"players": 6, "max_deals": 2},
    {"players": 2, "ranks": 7, "pot_deals": 2, "max_deals": 2},
    {"players": 3, "ranks": 11, "pot_deals": 4, "max_deals": 3},
]


def k4_points(code: int) -> int:
    """A card's points by K4, from its name: 10D 3, 2S 2, AS 2, any other spade 1, any other ace 1, else 0."""
    name = card_name(code)
    rank, suit = name[:-1], name[-1]
    if name == "10D":
        return 3
    if name in ("2S", "AS"):
        return 2
    return 1 if suit == "S" or rank == "A" else 0


def krypkasino_episode_sum(game: Any) -> float:
    """What every deal's returns sum to (K4, K16, K17, K18): minus the deck's points (and the last capture's point)
    for every seat of a side, or 0 with relative rewards."""
    params = game.get_parameters()
    if params["reward"] == "relative":
        return 0.0
    deck = game.counts
    points = sum(int(deck[c]) * k4_points(c) for c in range(deck.shape[0])) + int(params["last_capture_point"])
    seats_per_side = params["players"] // params["teams"] if params["teams"] else 1
    return -float(points * seats_per_side)


def kungsholmskille_outcome(state: Any) -> str:
    """How a finished pot ended: showdown (L14), walkover (L15), settled (L21) or truncated (L16)."""
    over = int(state.rows[2][E_OVER])
    if over == TRUNCATED:
        return "truncated"
    assert over == POT_OUT, over
    last = [a for _, a, _ in state.deal_log[-1]]
    if SHOW in last:
        return "showdown"
    return "walkover" if last[-1] == FOLD else "settled"


def kungsholmskille_episode_sum(state: Any) -> float:
    """What a finished pot's returns sum to (L3, L16): 0, or minus the money a truncated pot keeps."""
    return -float(state.rows[1][kernels.POT]) if kungsholmskille_outcome(state) == "truncated" else 0.0


def episode_sum(game: Any, state: Any) -> float:
    """What a finished episode's returns must sum to, from the rules."""
    if game.get_type().short_name == KRYPKASINO:
        return krypkasino_episode_sum(game)
    return kungsholmskille_episode_sum(state)


def play_chance(state: Any, rng: np.random.Generator) -> None:
    """Sample chance nodes until a decision or the end."""
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))


def play_out(state: Any, rng: np.random.Generator, choose: Callable[[Any], int] | None = None) -> Any:
    """Play ``state`` to the end: chance by its probabilities, players by ``choose`` (default uniform)."""
    while not state.is_terminal():
        play_chance(state, rng)
        if not state.is_terminal():
            state.apply_action(choose(state) if choose else int(rng.choice(state.legal_actions())))
    return state


def game_string(name: str, params: dict[str, Any]) -> str:
    """``name(k=v,...)`` for test ids."""
    return name + "(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")"
