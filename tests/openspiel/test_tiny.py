"""Krypkasino's tiny preset in OpenSpiel: its tools run on it, CFR solves, exploitability is exact (issue 26).

Solving tiny itself takes minutes (``python -m krypenv.openspiel.solve``); the tests that walk
a whole tree use a still smaller deal of the same preset (``MICRO``: A 2 3 of hearts and
spades, two cards each and two on the table, 1 436 states).
"""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from krypenv.agents.base import load
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr, exploitability, ismcts, mcts

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv import krypkasino_v0
from krypenv.openspiel.exploit import exact
from krypenv.openspiel.policy import TabularPolicyFile
from tests.openspiel.make_golden import GOLDEN, playthrough_text

TINY = "python_krypkasino(players=2,preset=tiny)"
MICRO_RULES = {"ranks": "A-2-3", "hand": 2, "table": 2}
MICRO = "python_krypkasino(players=2,preset=tiny,ranks=A-2-3,hand=2,table=2)"


def test_tiny_random_sim_test() -> None:
    """OpenSpiel's random simulation checks pass on the tiny preset."""
    pyspiel.random_sim_test(pyspiel.load_game(TINY), num_sims=5, serialize=True, verbose=False)


def test_tiny_golden_playthrough() -> None:
    """The seeded playthrough (OpenSpiel's format) equals the pinned one (tests/openspiel/make_golden.py)."""
    assert playthrough_text() == GOLDEN.read_text(encoding="utf-8")


def test_ismcts_plays_tiny_to_the_end() -> None:
    """OpenSpiel's Python IS-MCTS (it resamples hidden cards with resample_from_infostate) finishes a deal."""
    game = pyspiel.load_game(TINY)
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), uct_c=2.0, max_simulations=10,
                           random_state=rng)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert sum(state.returns()) == pytest.approx(-7)  # tiny's deck holds 7 card points (K4, K20)


@pytest.fixture(scope="module")
def micro_cfr() -> tuple:
    """MICRO, its uniform policy's NashConv, and OpenSpiel's CFR+ average policy after 3 iterations."""
    game = pyspiel.load_game(MICRO)
    uniform = exploitability.nash_conv(game, os_policy.UniformRandomPolicy(game))
    solver = cfr.CFRPlusSolver(game)
    for _ in range(3):
        solver.evaluate_and_update_policy()
    return game, uniform, solver.average_policy()


def test_cfr_reduces_nash_conv(micro_cfr: tuple) -> None:
    """OpenSpiel's CFR+ brings NashConv down from the uniform policy's (3.31 to 0.55 points in 3 iterations)."""
    game, uniform, average = micro_cfr
    assert exploitability.nash_conv(game, average) < uniform / 4


def test_exact_of_random_is_the_uniform_policy_nash_conv(micro_cfr: tuple) -> None:
    """exploit.exact with the random agent equals OpenSpiel's NashConv of the uniform policy."""
    game, uniform, _ = micro_cfr
    result = exact("krypkasino", "tiny", 2, "random", rules=MICRO_RULES)
    assert result["nash_conv"] == pytest.approx(uniform)
    assert result["nash_conv"] == pytest.approx(sum(result["improvements"]))
    assert all(g >= -1e-9 for g in result["improvements"])
    assert sum(result["on_policy_values"]) == pytest.approx(game.utility_sum())


def test_exact_of_a_rule_based_agent() -> None:
    """A rule-based agent is measured through our agent interface; its policy is pure where it has no ties."""
    result = exact("krypkasino", "tiny", 2, "greedy", samples=2, rules=MICRO_RULES)
    assert result["nash_conv"] >= 0 and result["samples"] == 2 and result["infostates"] > 0


def test_tabular_policy_plays_in_our_env_and_measures_the_same(micro_cfr: tuple, tmp_path) -> None:
    """A CFR policy file: exact() of tabular:PATH equals its NashConv, and it plays whole env episodes."""
    game, _, average = micro_cfr
    path = tmp_path / "micro.json.gz"  # gzip, keys hashed: the shipped cfr-tiny's form
    TabularPolicyFile.from_openspiel(game, average, {"iterations": 3}).save(path, hashed=True)
    table = TabularPolicyFile.load(path)
    assert table.game == str(game) and table.hashed
    result = exact("krypkasino", "tiny", 2, f"tabular:{path}", rules=MICRO_RULES)
    assert result["nash_conv"] == pytest.approx(exploitability.nash_conv(game, average), abs=1e-4)
    agent = load(f"tabular:{path}")
    env = krypkasino_v0.env(players=2, preset="tiny", ranks=("A", "2", "3"), hand=2, table=2)
    for seed in range(3):
        env.reset(seed=seed)
        for name in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            core = env.unwrapped.core
            batch = core.decisions(np.array([0]), np.array([int(name.split("_")[1])]))
            env.step(int(agent.act(batch)[0]))


def test_tabular_policy_refuses_a_missing_state(tmp_path) -> None:
    """A state the table does not hold is a ValueError naming it; a bad file names what is wrong."""
    path = tmp_path / "empty.json"
    TabularPolicyFile(MICRO, {"nothing": {0: 1.0}}).save(path)
    agent = load(f"tabular:{path}")
    env = krypkasino_v0.env(players=2, preset="tiny", ranks=("A", "2", "3"), hand=2, table=2)
    env.reset(seed=0)
    core = env.unwrapped.core
    with pytest.raises(ValueError, match="no entry for information state"):
        agent.act(core.decisions(np.array([0]), np.array([int(env.agent_selection.split("_")[1])])))
    path.write_text('{"format": "krypenv-tabular/1", "game": "x", "policy": {"s": {"0": 0.5}}}')
    with pytest.raises(ValueError, match="not a probability distribution"):
        TabularPolicyFile.load(path)
    with pytest.raises(ValueError, match="no such file"):
        load("tabular:nowhere.json")
    standard = krypkasino_v0.env(players=2)
    standard.reset(seed=0)
    core = standard.unwrapped.core
    with pytest.raises(ValueError, match="was solved for"):
        agent.act(core.decisions(np.array([0]), np.array([int(standard.agent_selection.split("_")[1])])))
