"""What every game's environments take as an action and a seed, and what they refuse (every registered game).

The AEC and Gymnasium envs take one integer (an int, a numpy integer, or an integer array of
shape () or (1,): :func:`krypenv.envs.spaces.as_action`; one outside the action space is an
illegal action); the VecEnvs exactly N integers, shape (N,) or (N, 1)
(:class:`krypenv.envs.vec.GameVecEnv`); a seed is None or a non-negative integer
(:func:`krypenv.rng.check_seed`).  Anything else is a ValueError naming it, and
nothing moves.  ``raw_env().step`` after the episode says to call ``reset()``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from krypenv import agents
from krypenv.games import GAMES as REGISTRY
from tests.envs.helpers import lowest_legal


@dataclass(frozen=True)
class Game:
    """A game's three env classes, a table size, and its number of actions."""

    name: str
    aec: Callable[..., Any]
    single: Callable[..., Any]
    vec: Callable[..., Any]
    players: int
    actions: int


def _game(name: str) -> Game:
    """A registered game's env classes, at a table of three, from its entry module."""
    entry = REGISTRY[name].part("entry")
    actions = int(entry.raw_env(players=3).action_space("player_0").n)
    return Game(name, entry.raw_env, entry.GymEnv, entry.VecEnv, 3, actions)


GAMES = [_game(name) for name in REGISTRY]
LEGAL_FORMS = [int, np.int64, np.int32, np.uint8, lambda a: np.array(a), lambda a: np.array([a]),
               lambda a: np.array([a], np.int16)]
BAD_FORMS = [float, np.float64, lambda a: True, lambda a: np.bool_(False), str, lambda a: np.array([a, a]),
             lambda a: np.array([[a]]), lambda a: np.array([a], np.float32), lambda a: np.array(a, np.float64),
             lambda a: [a], lambda a: None]
BAD_SEEDS = [-1, 1.5, True, "1", np.float64(2.0)]
BAD_VEC_ACTIONS = [[3.7, 1.7, 0.0, 2.2], np.array([1.0, 1.0, 1.0, 1.0]), np.zeros(4, np.float32), np.ones(4, np.bool_),
                   ["0", "1", "0", "1"], np.zeros(3, np.int64), np.zeros(5, np.int64), np.zeros((2, 2), np.int64),
                   np.zeros((1, 4), np.int64), 1]


def rows(env: Any) -> np.ndarray:
    """A copy of an env's engine state rows."""
    return env.core.state.copy()


def first_legal(env: Any) -> int:
    """The lowest legal action of the AEC agent to act."""
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


@pytest.fixture(params=GAMES, ids=lambda g: g.name)
def game(request: pytest.FixtureRequest) -> Game:
    """Each game in turn."""
    return request.param


# ---------------------------------------------------------------- AEC
@pytest.mark.parametrize("form", LEGAL_FORMS)
def test_aec_action_is_an_int_a_numpy_integer_or_a_one_element_integer_array(game: Game, form: Callable) -> None:
    """Action Shape (1,): every integer form of the same action plays the same move."""
    ref, env = game.aec(players=game.players), game.aec(players=game.players)
    for e in (ref, env):
        e.reset(seed=5)
    action = first_legal(ref)
    ref.step(action)
    env.step(form(action))
    assert np.array_equal(rows(env), rows(ref)) and env.agent_selection == ref.agent_selection


@pytest.mark.parametrize("form", BAD_FORMS)
def test_aec_non_integer_actions_are_refused_naming_the_action(game: Game, form: Callable) -> None:
    """Floats (even integral), bools, strings, lists and other shapes: a ValueError naming the agent; nothing moves."""
    env = game.aec(players=game.players)
    env.reset(seed=5)
    action, before = first_legal(env), rows(env)
    with pytest.raises(ValueError, match=rf"{env.agent_selection}: action must be one integer 0\.\.{game.actions - 1} "
                                         rf".*got "):
        env.step(form(action))
    assert np.array_equal(rows(env), before)


@pytest.mark.parametrize("out_of_range", ["n", -1, 10**6])
def test_aec_and_single_out_of_range_integers_are_illegal_actions(game: Game, out_of_range: Any) -> None:
    """An integer outside 0..n-1 is an illegal action (a ValueError naming it), not an IndexError; nothing moves."""
    action = game.actions if out_of_range == "n" else out_of_range
    aec, single = game.aec(players=game.players), game.single(players=game.players)
    aec.reset(seed=1)
    single.reset(seed=1)
    for env in (aec, single):
        before = rows(env)
        with pytest.raises(ValueError, match=rf"^illegal .*action {action}\b.* for player_0; legal"):
            env.step(action)
        assert np.array_equal(rows(env), before)
    assert aec.agent_selection == "player_0"


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_aec_reset_seed_must_be_none_or_a_non_negative_integer(game: Game, seed: Any) -> None:
    """-1, 1.5, True, "1": a ValueError naming seed, not numpy's message."""
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        game.aec(players=game.players).reset(seed=seed)


def test_aec_reset_seed_may_be_a_numpy_integer(game: Game) -> None:
    """np.uint32(7) deals what 7 deals."""
    a, b = game.aec(players=game.players), game.aec(players=game.players)
    a.reset(seed=7)
    b.reset(seed=np.uint32(7))
    assert np.array_equal(rows(a), rows(b))


def test_aec_step_after_every_agent_has_left_says_the_episode_is_over(game: Game) -> None:
    """Once ``agents`` is empty, step() says the episode is over and to reset (not KeyError: 'player_0')."""
    env = game.aec(players=game.players)
    for _ in range(2):  # and after reset() the env plays on
        env.reset(seed=3)
        for _agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else first_legal(env))
        assert env.agents == []
        with pytest.raises(ValueError, match=r"episode is over .*call reset\(\)"):
            env.step(0)


# ---------------------------------------------------------------- Gymnasium
@pytest.mark.parametrize("form", [np.int64, np.uint8, lambda a: np.array(a), lambda a: np.array([a], np.int32)])
def test_single_action_may_be_a_numpy_integer_or_a_one_element_integer_array(game: Game, form: Callable) -> None:
    """The Gymnasium env takes what SB3's predict hands out."""
    ref, env = game.single(players=game.players), game.single(players=game.players)
    ref.reset(seed=1)
    _, info = env.reset(seed=1)
    action = int(np.flatnonzero(info["action_mask"])[0])
    assert env.step(form(action))[1:4] == ref.step(action)[1:4]
    assert np.array_equal(rows(env), rows(ref))


@pytest.mark.parametrize("bad", [1.0, np.float64(0.0), True, np.bool_(False), "9S", np.array([0, 1]),
                                 np.array([[0]]), np.array([0.0]), [0], None])
def test_single_non_integer_actions_are_refused_naming_the_action(game: Game, bad: Any) -> None:
    """A ValueError naming the action; nothing moves."""
    env = game.single(players=game.players)
    env.reset(seed=1)
    before = rows(env)
    with pytest.raises(ValueError, match=rf"action must be one integer 0\.\.{game.actions - 1} .*got "):
        env.step(bad)
    assert np.array_equal(rows(env), before)


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_single_reset_seed_must_be_none_or_a_non_negative_integer(game: Game, seed: Any) -> None:
    """A ValueError naming seed; a numpy integer deals what the int deals."""
    env = game.single(players=game.players)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        env.reset(seed=seed)
    assert np.array_equal(env.reset(seed=np.int64(3))[0], game.single(players=game.players).reset(seed=3)[0])


# ---------------------------------------------------------------- VecEnv
@pytest.mark.parametrize("actions", BAD_VEC_ACTIONS)
def test_vec_non_integer_or_miscounted_actions_are_refused_before_any_game_moves(game: Game, actions: Any) -> None:
    """Floats are never truncated ([3.7, 1.7] was played as 3, 1), integral ones are refused too, bools and strings
    neither; exactly N actions."""
    vec = game.vec(4, players=game.players, seed=2)
    vec.reset()
    before = rows(vec)
    with pytest.raises(ValueError, match=r"actions must be 4 integers \(an integer array of shape \(4,\)\), one per"):
        vec.step(actions)
    assert np.array_equal(rows(vec), before)


@pytest.mark.parametrize("num_envs", [0, -1, True, 1.5, "4", None])
def test_vec_num_envs_must_be_a_positive_integer(game: Game, num_envs: Any) -> None:
    """A ValueError naming num_envs and what was given; 1 and a numpy integer are taken (the edge and the type)."""
    with pytest.raises(ValueError, match=re.escape(f"num_envs must be a positive integer, got {num_envs!r}")):
        game.vec(num_envs, players=game.players)
    assert game.vec(1, players=game.players).num_envs == 1
    assert game.vec(np.int64(2), players=game.players).num_envs == 2


def test_vec_refuses_a_render_mode(game: Game) -> None:
    """The VecEnv does not render: a render mode is a ValueError saying where to watch a game; None is taken."""
    with pytest.raises(ValueError, match="^render_mode: the VecEnv does not render; use the Gymnasium or AEC env to "
                                         "watch a game$"):
        game.vec(2, players=game.players, render_mode="human")
    assert game.vec(2, players=game.players, render_mode=None).render_mode is None


def test_vec_keeps_its_config_and_refuses_an_agent_of_another_game(game: Game) -> None:
    """``vec.config`` is the table it was made with; an opponent loaded for another game is refused, naming both."""
    assert game.vec(2, players=game.players).config.players == game.players
    other = next(name for name in REGISTRY if name != game.name)
    with pytest.raises(ValueError, match=f"was built for {other}, not {game.name}"):
        game.vec(2, players=game.players, opponents=agents.load("expert", game=other))


@pytest.mark.parametrize(("actions", "shown"), [
    ([3.7, 1.7, 0.0, 2.2], "shape (4,) and dtype float64: [3.7, 1.7, 0.0, 2.2]"),
    (["0", "1", "0", "1"], "['0', '1', '0', '1']"),  # strings as given
    (np.zeros(8, np.int64), "shape (8,) and dtype int64: [0, 0, 0, 0, 0, 0, 0, 0]"),  # up to 8 values are listed
    (np.zeros(9, np.int64), "shape (9,) and dtype int64"),  # more are not
])
def test_vec_bad_actions_message_shows_what_was_given(game: Game, actions: Any, shown: str) -> None:
    """The refusal ends with what was given: its shape and dtype, its values when there are at most 8, or its repr when
    it holds strings or objects."""
    vec = game.vec(4, players=game.players, seed=2)
    vec.reset()
    with pytest.raises(ValueError) as err:
        vec.step(actions)
    assert str(err.value).endswith("one per game, got " + shown), str(err.value)


@pytest.mark.parametrize("form", [list, lambda a: a.astype(np.int32), lambda a: a.astype(np.uint8),
                                  lambda a: a[:, None]])
def test_vec_integer_actions_of_any_integer_dtype_list_or_column(game: Game, form: Callable) -> None:
    """A list of ints, any integer dtype and SB3's (N, 1) column all step the same games."""
    ref, vec = game.vec(4, players=game.players, seed=2), game.vec(4, players=game.players, seed=2)
    ref.reset(), vec.reset()
    actions = lowest_legal(ref.action_masks())
    ref.step(actions)
    vec.step(form(actions))
    assert np.array_equal(rows(vec), rows(ref))


@pytest.mark.parametrize("seed", [-1, 1.5, True, "9"])
def test_vec_seed_must_be_none_or_a_non_negative_integer(game: Game, seed: Any) -> None:
    """The constructor's seed and seed() refuse a bad seed naming it; a numpy integer seeds as the int."""
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        game.vec(2, players=game.players, seed=seed)
    vec = game.vec(2, players=game.players)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        vec.seed(seed)
    a, b = game.vec(2, players=game.players, seed=np.int64(4)), game.vec(2, players=game.players, seed=4)
    assert np.array_equal(a.reset(), b.reset())


def test_first_illegal_is_the_first_game_its_mask_refuses() -> None:
    """The VecEnvs' compiled check against numpy's: out of range on both sides, masked out, the first of several."""
    from krypenv.envs.spaces import first_illegal

    rng = np.random.default_rng(5)
    for _ in range(200):
        n, a = int(rng.integers(1, 9)), int(rng.integers(1, 6))
        masks = (rng.random((n, a)) < 0.5).astype(np.int8)
        actions = rng.integers(-1, a + 1, n)
        ok = (actions >= 0) & (actions < a)
        ok[ok] = masks[np.flatnonzero(ok), actions[ok]] != 0
        assert first_illegal(masks, actions) == (int(np.flatnonzero(~ok)[0]) if not ok.all() else -1)
    masks = np.ones((3, 4), np.int8)
    assert first_illegal(masks, np.array([0, 3, 2])) == -1
    assert first_illegal(masks, np.array([0, 4, -1])) == 1
    assert first_illegal(masks, np.array([0, 3, -1])) == 2


ACCEPTS = "action must be one integer 0..9 (an int, a numpy integer or an integer array of shape () or (1,)), got "


@pytest.mark.parametrize(("action", "agent", "message"), [
    (1.5, "player_0", "player_0: " + ACCEPTS + "1.5 (float)"),
    (True, None, ACCEPTS + "True (bool)"),
    (np.zeros(2, np.int64), "", ACCEPTS + "an array of shape (2,) and dtype int64"),
])
def test_as_action_names_the_agent_and_what_it_got(action: Any, agent: str | None, message: str) -> None:
    """The whole message: the agent (when named) first, the range, what is accepted, and the value or array got."""
    from krypenv.envs.spaces import as_action

    with pytest.raises(ValueError) as err:
        as_action(action, 10, agent)
    assert str(err.value) == message


@pytest.mark.parametrize("action", [3, np.int64(3), np.uint8(3), np.array(3), np.array([3], np.uint16)])
def test_as_action_returns_a_python_int(action: Any) -> None:
    """Every accepted form becomes the same Python ``int``."""
    from krypenv.envs.spaces import as_action

    out = as_action(action, 10, "p")
    assert out == 3 and type(out) is int
