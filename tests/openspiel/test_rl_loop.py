"""OpenSpiel's own RL loop and learners on both games: every reward reaches every learner (issue 34).

``open_spiel.python.rl_environment`` reads ``state.rewards()`` after each player action and the
chance nodes after it and hands the step to the seat to act next (at the end to all); its
learners (the tabular Q-learner, DQN, NFSP, policy gradients, ...) learn a step's reward as the result of their
previous action.  What a learner sees of an episode must add up to its ``state.returns()``, and
the seats' returns to the deck's points (Krypkasino, K4, K16) or to 0 (Kungsholmskille, L3; a
pot truncated by L16 keeps its money).  :mod:`krypenv.openspiel.rewards` is the contract.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
torch = pytest.importorskip("torch")

from open_spiel.python import rl_environment, rl_tools
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts, tabular_qlearner
from open_spiel.python.bots import uniform_random
from open_spiel.python.pytorch import policy_gradient

import krypenv.openspiel  # noqa: F401  (registers the games)
from tests.openspiel.helpers import (
    KRYPKASINO,
    KRYPKASINO_GRID,
    KUNGSHOLMSKILLE,
    KUNGSHOLMSKILLE_GRID,
    episode_sum,
    game_string,
    kungsholmskille_outcome,
)

GRID = [(KRYPKASINO, p) for p in KRYPKASINO_GRID] + [(KUNGSHOLMSKILLE, p) for p in KUNGSHOLMSKILLE_GRID]


class LearnerView:
    """An OpenSpiel learner in the loop, and what it can learn from: the rewards of the steps after its actions."""

    def __init__(self, agent: Any, player: int) -> None:
        self.agent, self.player = agent, player
        self.acted = False
        self.seen = 0.0  # this episode: the rewards of the steps it was handed after its first action
        self.first_step_rewards = 0.0  # this episode: the rewards of the step of its first decision (dropped)

    def step(self, time_step: Any) -> Any:
        """Hand the step to the learner, keeping what it learns from."""
        if time_step.rewards is not None:
            if self.acted:
                self.seen += time_step.rewards[self.player]
            else:
                self.first_step_rewards += time_step.rewards[self.player]
        out = self.agent.step(time_step)
        if not time_step.last():
            self.acted = True
        return out

    def new_episode(self) -> None:
        """Forget the last episode's sums."""
        self.acted, self.seen, self.first_step_rewards = False, 0.0, 0.0


def run_episodes(env: Any, views: list[LearnerView], episodes: int) -> list[tuple[Any, list[float], list[float]]]:
    """OpenSpiel's loop (its examples' ``while not time_step.last()``); per episode the final state, each learner's
    sum of rewards it learnt from, and the sum of every step's rewards per seat."""
    out = []
    for _ in range(episodes):
        for v in views:
            v.new_episode()
        time_step = env.reset()
        assert time_step.rewards is None
        stepped = np.zeros(len(views))
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([views[player].step(time_step).action])
            stepped += time_step.rewards
        for v in views:
            v.step(time_step)
        for v in views:
            assert v.acted, f"seat {v.player} never acted"  # every seat decides in every episode (K9, L5, L6)
            assert v.first_step_rewards == 0.0  # nothing is paid to a seat before its first action
        out.append((env.get_state, [v.seen for v in views], list(stepped)))
    return out


def check_episode(game: Any, state: Any, seen: list[float], stepped: list[float]) -> None:
    """The learners' sums are the returns, the returns sum as the rules say and lie in the declared bounds."""
    returns = state.returns()
    assert seen == pytest.approx(returns, abs=1e-9), (seen, returns)
    assert stepped == pytest.approx(returns, abs=1e-9), (stepped, returns)
    assert sum(returns) == pytest.approx(episode_sum(game, state), abs=1e-9)
    assert all(game.min_utility() <= r <= game.max_utility() for r in returns)


@pytest.mark.parametrize(("name", "params"), GRID, ids=[game_string(n, p) for n, p in GRID])
def test_every_reward_reaches_the_q_learners(name: str, params: dict) -> None:
    """OpenSpiel's tabular Q-learners (exploring) in every seat: each learns from exactly its return, every
    configuration."""
    game = pyspiel.load_game(name, params)
    env = rl_environment.Environment(game, observation_type=rl_environment.ObservationType.OBSERVATION)
    env.seed(1)
    agents = [tabular_qlearner.QLearner(p, game.num_distinct_actions(),
                                        epsilon_schedule=rl_tools.ConstantSchedule(1.0))
              for p in range(game.num_players())]
    episodes = 12 if game.max_game_length() < 400 else 3
    for state, seen, stepped in run_episodes(env, [LearnerView(a, p) for p, a in enumerate(agents)], episodes):
        check_episode(game, state, seen, stepped)
    assert any(agent._q_values for agent in agents)  # they learnt


def test_kungsholmskille_grid_reaches_every_ending() -> None:
    """The grid above plays every way a pot ends (L14, L15, L21, L16), so each ending's payments were checked."""
    seen = set()
    rng = np.random.default_rng(0)
    for params in KUNGSHOLMSKILLE_GRID:
        game = pyspiel.load_game(KUNGSHOLMSKILLE, params)
        env = rl_environment.Environment(game)
        env.seed(1)
        for _ in range(12):
            time_step = env.reset()
            while not time_step.last():
                player = time_step.observations["current_player"]
                time_step = env.step([int(rng.choice(time_step.observations["legal_actions"][player]))])
            seen.add(kungsholmskille_outcome(env.get_state))
    assert seen == {"showdown", "walkover", "settled", "truncated"}, seen


QLEARNING = [(KRYPKASINO, {"players": 2, "preset": "tiny"}), (KUNGSHOLMSKILLE, {"players": 3, "preset": "small"})]


@pytest.mark.parametrize(("name", "params"), QLEARNING, ids=[game_string(n, p) for n, p in QLEARNING])
def test_q_learners_train_for_hundreds_of_episodes(name: str, params: dict) -> None:
    """300 episodes of OpenSpiel's tabular Q-learning (information-state tensors, its default epsilon): every
    episode's learners see their returns, and the sums hold."""
    game = pyspiel.load_game(name, params)
    env = rl_environment.Environment(game)
    env.seed(2)
    agents = [tabular_qlearner.QLearner(p, game.num_distinct_actions()) for p in range(game.num_players())]
    for state, seen, stepped in run_episodes(env, [LearnerView(a, p) for p, a in enumerate(agents)], 300):
        check_episode(game, state, seen, stepped)
    assert all(len(agent._q_values) > 20 for agent in agents)


class EpisodeReturns:
    """Records the return a policy-gradient learner computes for each of its episodes (its first transition's
    discounted return, discount 1): what it trains its critic and policy on."""

    def __init__(self, agent: Any) -> None:
        self.returns: list[float] = []
        add = agent._add_episode_data_to_dataset

        def add_episode() -> None:
            first = len(agent._dataset["returns"])
            add()
            self.returns.append(float(agent._dataset["returns"][first]))

        agent._add_episode_data_to_dataset = add_episode


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params"), QLEARNING, ids=[game_string(n, p) for n, p in QLEARNING])
def test_policy_gradient_learners_compute_the_returns(name: str, params: dict) -> None:
    """OpenSpiel's PyTorch policy-gradient learners (A2C) in every seat for 200 episodes: the return each computes
    for an episode is its seat's ``state.returns()``, and they train (a loss is computed)."""
    torch.manual_seed(0)
    game = pyspiel.load_game(name, params)
    env = rl_environment.Environment(game)
    env.seed(3)
    size = env.observation_spec()["info_state"][0]
    agents = [policy_gradient.PolicyGradient(p, size, game.num_distinct_actions(), loss_str="a2c",
                                             hidden_layers_sizes=(32,), batch_size=16)
              for p in range(game.num_players())]
    computed = [EpisodeReturns(a) for a in agents]
    views = [LearnerView(a, p) for p, a in enumerate(agents)]
    for episode in range(200):
        ((state, seen, stepped),) = run_episodes(env, views, 1)
        check_episode(game, state, seen, stepped)
        assert [c.returns[episode] for c in computed] == pytest.approx(state.returns(), abs=1e-5)
    assert all(a.loss[0] is not None for a in agents)


CONSUMERS = [(KRYPKASINO, {"players": 2, "preset": "tiny"}), (KRYPKASINO, {"players": 3, "preset": "small",
                                                                           "reward": "relative"}),
             (KUNGSHOLMSKILLE, {"players": 2, "preset": "small"}), (KUNGSHOLMSKILLE, {"players": 3, "max_deals": 2})]


class SearchEachMove(pyspiel.Bot):
    """OpenSpiel's IS-MCTS bot for ``evaluate_bots`` (it searches afresh at every move, so restarting is a no-op)."""

    def __init__(self, bot: Any) -> None:
        pyspiel.Bot.__init__(self)
        self.bot = bot

    def step(self, state: Any) -> int:
        """IS-MCTS's move (it resamples the hidden cards with ``resample_from_infostate``)."""
        return self.bot.step(state)

    def restart_at(self, state: Any) -> None:
        """Nothing to forget."""

    def inform_action(self, state: Any, player: int, action: int) -> None:
        """Nothing to follow."""


@pytest.mark.parametrize(("name", "params"), CONSUMERS, ids=[game_string(n, p) for n, p in CONSUMERS])
def test_evaluate_bots_and_ismcts_see_the_returns(name: str, params: dict) -> None:
    """``evaluate_bots`` (uniform bots, and IS-MCTS in seat 0) returns ``state.returns()``, summing as the rules say;
    IS-MCTS's rollouts (its evaluator) return terminal returns that sum alike."""
    game = pyspiel.load_game(name, params)
    rng = np.random.RandomState(4)
    for episode in range(6):
        bots = [uniform_random.UniformRandomBot(p, rng) for p in range(game.num_players())]
        if episode % 2:
            evaluator = mcts.RandomRolloutEvaluator(1, rng)
            bots[0] = SearchEachMove(ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=5,
                                                      random_state=rng))
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rng)
        assert returns == state.returns()
        assert sum(returns) == pytest.approx(episode_sum(game, state), abs=1e-9)
    evaluator = mcts.RandomRolloutEvaluator(3, rng)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    values = evaluator.evaluate(state)  # the mean of 3 rollouts' terminal returns
    if game.get_type().utility != pyspiel.GameType.Utility.GENERAL_SUM:
        assert sum(values) == pytest.approx(game.utility_sum(), abs=1e-9)
