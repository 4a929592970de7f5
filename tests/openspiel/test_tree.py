"""krypenv.openspiel.tree: a whole game as arrays, NashConv equal to OpenSpiel's best responses on every policy.

Oracles: OpenSpiel's C++ ``pyspiel.nash_conv`` on Kuhn and Leduc poker, OpenSpiel's Python best response
(``exploitability.nash_conv``, what ``krypenv exploit`` runs) on a small deal of Krypkasino's tiny and on
``python_two_ways``, a game written here whose information states are reached at two depths (seat 0 may
take both chips at once or one by one; seat 1 sees only that both were taken), as tiny's are when a
capture's cards are chosen in different orders.  Policies are drawn at random, mixed and pure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability

from krypenv.openspiel.tree import GameTree

MICRO_RULES = {"ranks": "A-2-3", "hand": 2, "table": 2}


class TwoWaysState(pyspiel.State):
    """Chance deals seat 0 a card (0 or 1); seat 0 takes both chips (action 0), chip A then chip B (1, 2) or stops
    (3); seat 1, who sees whether both chips were taken and not how, guesses the card (0 or 1)."""

    def __init__(self, game: pyspiel.Game) -> None:
        super().__init__(game)
        self.history_: list[int] = []

    def current_player(self) -> int:
        h = self.history_
        if not h:
            return pyspiel.PlayerId.CHANCE
        if len(h) == 1 or (len(h) == 2 and h[1] == 1):
            return 0
        if self._guess() is None:
            return 1
        return pyspiel.PlayerId.TERMINAL

    def _took(self) -> str:
        moves = self.history_[1:]
        return "both" if moves[:1] == [0] or moves[:2] == [1, 2] else "none"

    def _guess(self) -> int | None:
        moves = self.history_[1:]
        done = 1 if moves[:1] in ([0], [3]) else 2 if moves[:2] == [1, 2] else None
        return moves[done] if done is not None and len(moves) > done else None

    def _legal_actions(self, player: int) -> list[int]:
        if player == 1:
            return [4, 5]
        return [2] if len(self.history_) == 2 else [0, 1, 3]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(0, 0.3), (1, 0.7)]

    def _apply_action(self, action: int) -> None:
        self.history_.append(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return str(action)

    def is_terminal(self) -> bool:
        return self.current_player() == pyspiel.PlayerId.TERMINAL

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        card, guess = self.history_[0], self._guess() - 4
        took = self._took() == "both"
        win = (2.0 if took else 1.0) * (1.0 if guess != card else -1.0) + (0.5 if took and card else 0.0)
        return [win, -win]

    def information_state_string(self, player: int | None = None) -> str:
        player = self.current_player() if player is None else player
        if player == 0:
            return f"card={self.history_[0]} moves={self.history_[1:]}"
        return f"took={self._took()}"

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        player = self.current_player() if player is None else player
        text = self.information_state_string(player)
        return [float(player), float("card=1" in text), float("both" in text), float(len(self.history_))]

    def __str__(self) -> str:
        return str(self.history_)


class TwoWaysGame(pyspiel.Game):
    """See :class:`TwoWaysState`."""

    def __init__(self, params: dict | None = None) -> None:
        super().__init__(GAME_TYPE, pyspiel.GameInfo(num_distinct_actions=6, max_chance_outcomes=2, num_players=2,
                                                     min_utility=-2.5, max_utility=2.5, utility_sum=0.0,
                                                     max_game_length=4), params or {})

    def new_initial_state(self) -> TwoWaysState:
        return TwoWaysState(self)


GAME_TYPE = pyspiel.GameType(
    short_name="python_two_ways", long_name="two ways to one information state",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL, chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION, utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=2, min_num_players=2,
    provides_information_state_string=True, provides_information_state_tensor=True,
    provides_observation_string=False, provides_observation_tensor=False, parameter_specification={})
pyspiel.register_game(GAME_TYPE, TwoWaysGame)


def random_policy(tree: GameTree, seed: int, pure: bool = False) -> np.ndarray:
    """A random policy matrix (mixed, or one legal action per information state)."""
    rng = np.random.default_rng(seed)
    w = tree.legal * (rng.random(tree.legal.shape) + 1e-3)
    if pure:
        w = tree.legal & (w == w.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def openspiel_policy(game: pyspiel.Game, tree: GameTree, probs: np.ndarray) -> os_policy.Policy:
    """The matrix as an OpenSpiel policy looked up by information state string."""
    index = {str(k): i for i, k in enumerate(tree.keys)}

    class Lookup(os_policy.Policy):
        def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
            row = probs[index[state.information_state_string()]]
            return {a: float(row[a]) for a in state.legal_actions()}

    return Lookup(game, list(range(game.num_players())))


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test caches its trees in its own folder."""
    monkeypatch.setenv("KRYPENV_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_nash_conv_is_openspiel_s_on_poker(name: str) -> None:
    """OpenSpiel's C++ NashConv of the same tabular policy, uniform, mixed and pure."""
    game = pyspiel.load_game(name)
    tree = GameTree.load(game)
    for probs in (tree.uniform(), random_policy(tree, 1), random_policy(tree, 2, pure=True)):
        table = os_policy.TabularPolicy(game)
        for k, key in enumerate(tree.keys):
            table.action_probability_array[table.state_lookup[str(key)]] = probs[k]
        want = pyspiel.nash_conv(game, os_policy.python_policy_to_pyspiel_policy(table))
        assert tree.nash_conv(probs)["nash_conv"] == pytest.approx(want, abs=1e-9)


def test_information_states_at_two_depths() -> None:
    """The game written here reaches seat 1's state at depths 2 and 3; the values are OpenSpiel's Python ones."""
    game = pyspiel.load_game("python_two_ways")
    tree = GameTree.load(game, cache=False)
    seat1 = (tree.kind == 1) & (tree.player == 1)
    both = tree.info[seat1 & (tree.depth == 2)]
    assert set(both) & set(tree.info[seat1 & (tree.depth == 3)])  # one information state, two depths
    for seed in range(6):
        probs = random_policy(tree, seed, pure=seed % 2 == 1)
        want = exploitability.nash_conv(game, openspiel_policy(game, tree, probs), return_only_nash_conv=False)
        got = tree.nash_conv(probs)
        assert got["nash_conv"] == pytest.approx(want.nash_conv, abs=1e-12)
        assert got["improvements"] == pytest.approx(list(want.player_improvements), abs=1e-12)


def test_krypkasino_micro_is_exact_s() -> None:
    """A small deal of tiny: NashConv, values and gains per seat as krypenv exploit's OpenSpiel best responses."""
    from krypenv.openspiel.exploit import load_game, nash_conv

    game = load_game("krypkasino", "tiny", 2, **MICRO_RULES)
    tree = GameTree.load("krypkasino", "tiny", 2, **MICRO_RULES)
    assert (len(tree.parent), tree.num_infostates) == (1436, 882)
    assert tree.nash_conv(tree.uniform())["nash_conv"] == pytest.approx(3.311111111111111, abs=1e-12)
    probs = random_policy(tree, 7)
    want = nash_conv(game, openspiel_policy(game, tree, probs))
    got = tree.nash_conv(probs)
    for key in ("best_response_values", "on_policy_values", "improvements"):
        assert got[key] == pytest.approx(want[key], abs=1e-12)


def test_observations_are_what_an_agent_reads() -> None:
    """Each information state's stored observation and legal actions are the env's for that seat."""
    from krypenv.openspiel.exploit import load_game

    game = load_game("krypkasino", "tiny", 2, **MICRO_RULES)
    tree = GameTree.load(game)
    index = {str(k): i for i, k in enumerate(tree.keys)}
    rng, seen = np.random.default_rng(0), 0
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, p = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=p)))
                continue
            k = index[state.information_state_string()]
            batch = state.decisions(1, 0)
            assert np.array_equal(tree.obs[k], batch.obs[0]) and np.array_equal(tree.legal[k], batch.mask[0] != 0)
            assert tree.info_player[k] == state.current_player()
            seen += 1
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert seen > 50


def test_the_cache_is_reused_and_keyed_by_the_game(tmp_path: Path) -> None:
    """A second load reads the file (same arrays); another game string is another file."""
    game = pyspiel.load_game("kuhn_poker")
    first = GameTree.load(game)
    files = list((tmp_path / "cache").glob("tree-*.npz"))
    assert len(files) == 1
    again = GameTree.load(game)
    assert all(np.array_equal(getattr(first, f), getattr(again, f)) for f in GameTree.__dataclass_fields__)
    GameTree.load(pyspiel.load_game("kuhn_poker(players=3)"))
    assert len(list((tmp_path / "cache").glob("tree-*.npz"))) == 2


def _illegal_mass(p: np.ndarray) -> np.ndarray:
    """Half of every row moved onto an illegal action (rows still sum to 1)."""
    q = p * 0.5
    q[:, 5] += 0.5 * (p[:, 5] == 0)
    q[:, 3] += 0.5 * (p[:, 5] != 0)
    return q


def _negative(p: np.ndarray) -> np.ndarray:
    """One row with two legal actions made (1.5, −0.5): it still sums to 1."""
    q = p.copy()
    row = int(np.flatnonzero((p > 0).sum(1) == 2)[0])
    a, b = np.flatnonzero(p[row] > 0)
    q[row, a], q[row, b] = 1.5, -0.5
    return q


@pytest.mark.parametrize(("change", "complaint"), [
    (lambda p: p * 2, "not a policy"), (lambda p: p - p, "not a policy"), (_illegal_mass, "not a policy"),
    (lambda p: p[:-1], "shape"), (lambda p: np.where(p > 0, np.nan, 0), "not a policy"),
    (_negative, "not a policy")])
def test_a_bad_policy_is_one_clear_error(change, complaint: str) -> None:
    """Rows that do not sum to 1, mass on an illegal action, NaN, a negative entry or a wrong shape: ValueError."""
    tree = GameTree.load(pyspiel.load_game("python_two_ways"), cache=False)
    assert (~tree.legal).any(1).all()  # every state has an illegal action to load
    with pytest.raises(ValueError, match=complaint):
        tree.nash_conv(change(tree.uniform()))
    tree.nash_conv(tree.uniform())  # the unchanged policy passes


def test_policy_of_asks_each_distinct_observation_once() -> None:
    """policy_of maps the answers back to every information state (same observation, same answer)."""
    tree = GameTree.load("krypkasino", "tiny", 2, **MICRO_RULES)
    asked = []

    def answer(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        asked.append(len(obs))
        w = legal * (1.0 + obs[:, :legal.shape[1]].astype(float) ** 2)
        return w / w.sum(1, keepdims=True)

    probs = tree.policy_of(answer, batch=100)
    distinct = len(np.unique(np.concatenate([tree.obs, tree.legal], axis=1), axis=0))
    assert sum(asked) == distinct < tree.num_infostates and max(asked) <= 100
    direct = answer(tree.obs, tree.legal)
    assert np.allclose(probs, direct)
