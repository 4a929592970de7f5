"""What every game's OpenSpiel module shares, written once: the game type, a game's parts, a state's bookkeeping.

A game's module (:mod:`krypenv.openspiel.krypkasino`, :mod:`krypenv.openspiel.kungsholmskille`) supplies its
facts: its name and parameters, how its parameters become an env configuration, the sizes and utilities of its
``GameInfo``, how its deck is drawn (the group being drawn), how an action applies, what a seat observes.  This
module supplies the rest:

* :func:`game_type`: the ``pyspiel.GameType`` of a sequential game with explicit chance (the deal), imperfect
  information, rewards, 2–6 players, every string and tensor;
* :class:`ShellGame`: one env per configuration shared by all states of a game (its *machine*, kept by the
  game's key, the sorted parameters), pickling as the class and its parameters, ``deepcopy`` as itself, the
  initial state and the observer from the classes the game names;
* :class:`ShellState`: ``clone`` as ``deepcopy``, the shared env loaded with a state, the seat's decision asked
  ``n`` times as our agents are asked it, the chance outcomes of the group being drawn
  (:func:`krypenv.openspiel.deal.next_card_outcomes`), returns and rewards as the seats were paid
  (:mod:`krypenv.openspiel.rewards`), resampling through the game's resampler.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pyspiel

from krypenv.agent_api import DecisionBatch
from krypenv.openspiel.deal import next_card_outcomes

__all__ = ["ShellGame", "ShellMachine", "ShellState", "game_type"]


def game_type(short_name: str, long_name: str, utility: Any, defaults: dict[str, Any]) -> pyspiel.GameType:
    """The game type of one of our games (module docstring), with its ``defaults`` as the parameters."""
    return pyspiel.GameType(
        short_name=short_name, long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility, reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=6, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification=dict(defaults))


class ShellMachine:
    """One env of a configuration, shared by all states of a game; ``samplers`` hold ``n`` envs for asking an agent
    ``n`` times at once.  The game's machine adds how a state's rows load (``load``)."""

    def __init__(self, config: Any, batch_class: type) -> None:
        self.config = config
        self.batch_class = batch_class
        self.batch = batch_class(config, 1)
        self.samplers: dict[int, Any] = {}

    def sampler(self, n: int) -> Any:
        """The batch of ``n`` envs of this configuration (made once)."""
        if n not in self.samplers:
            self.samplers[n] = self.batch_class(self.config, n)
        return self.samplers[n]


class ShellGame(pyspiel.Game):
    """A game of one configuration: ``state_class`` and ``observer_class`` name the game's state and observer."""

    state_class: ClassVar[type]
    observer_class: ClassVar[type]
    machines: ClassVar[dict[str, ShellMachine]]  # each game module's own: key -> the machine of that configuration

    def __init__(self, game_type: pyspiel.GameType, info: pyspiel.GameInfo, params: dict[str, Any],
                 machine: Any) -> None:
        """Register with OpenSpiel; ``machine(config)`` makes this configuration's machine the first time."""
        super().__init__(game_type, info, params)
        self.params = params
        self.key = repr(sorted(params.items()))
        if self.key not in self.machines:
            self.machines[self.key] = machine(self.config)

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        """Pickle as the class and its parameters."""
        return (type(self), (self.params,))

    def __deepcopy__(self, memo: dict) -> ShellGame:
        """The game itself: it never changes (OpenSpiel's ``clone`` deep-copies every attribute of a state)."""
        return self

    @property
    def machine(self) -> Any:
        """This configuration's shared env."""
        return self.machines[self.key]

    def new_initial_state(self) -> Any:
        """The state before the first card is drawn."""
        return self.state_class(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The observer of observations (default) or of information states (``perfect_recall=True``)."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        return self.observer_class(self, bool(iig_obs_type is not None and iig_obs_type.perfect_recall))


class ShellState(pyspiel.State):
    """A state's shared bookkeeping (module docstring); ``resampler`` is the game's ``resample``, ``drawing()`` the
    game's group being drawn."""

    resampler: ClassVar[Any]

    def __init__(self, game: ShellGame) -> None:
        super().__init__(game)
        self._game = game

    def __deepcopy__(self, memo: dict) -> ShellState:
        """OpenSpiel's clone (its history included), sharing the game."""
        return self.clone()

    def drawing(self) -> tuple[int, list[int], np.ndarray]:
        """The group of cards being drawn: its size, its cards so far, and the cards left before it."""
        raise NotImplementedError

    def decisions(self, n: int, seed: int) -> DecisionBatch:
        """The decision of the seat to act, ``n`` times, as our agents are asked it (:mod:`krypenv.agent_api`): ``n``
        envs holding this state, each env's stream seeded from ``seed``."""
        batch = self._game.machine.load(self.env_rows(), self._game.machine.sampler(n))
        batch.seed([seed + k for k in range(n)])
        return batch.decisions(np.arange(n), np.full(n, self.to_act(batch), np.int64))

    def env_rows(self) -> Any:
        """What this state keeps of the env (the game's rows)."""
        raise NotImplementedError

    def to_act(self, batch: Any) -> int:
        """The seat to act in env 0 of ``batch``."""
        raise NotImplementedError

    def env(self) -> Any:
        """The shared env loaded with this state (valid until another state loads)."""
        return self._game.machine.load(self.env_rows())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the group being drawn, with its probability."""
        k, prefix, counts = self.drawing()
        return next_card_outcomes(counts, k, prefix)

    def returns(self) -> list[float]:
        """Each seat's rewards paid so far (:mod:`krypenv.openspiel.rewards`)."""
        return list(self.pay.paid)

    def rewards(self) -> list[float]:
        """What the last transition paid each seat."""
        return list(self.pay.last)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> ShellState:
        """A state with the information state of ``player_id``, hidden cards dealt again (the game's resampler)."""
        return type(self).resampler(self, player_id, probability_sampler)
