"""# Krypkasino (PettingZoo AEC)

Krypkasino is the Swedish misère fishing card game of RULES.md: 2–6 players, two decks;
capture table cards whose values sum to the played card; take as few points as possible;
a forced sweep ("tabbe") costs the sweeper 5 points and gives them to the seat before it.

| Import             | `import krypenv; env = krypenv.env(players=3)` (or `krypenv.raw_env`) |
|--------------------|------------------------------------------------------------------------|
| Actions            | Discrete(105)                                                          |
| Parallel API       | No                                                                     |
| Manual Control     | No                                                                     |
| Agents             | `["player_0", …, "player_{P-1}"]`, agent `player_s` sits in seat `s`   |
| Number of agents   | 2–6 (`players`, default 3)                                             |
| Action Shape       | (1,)                                                                   |
| Action Values      | [0, 104]                                                               |
| Observation Shape  | Dict: `observation` (325 + 7P + 5,) int8, `action_mask` (105,) int8    |
| Observation Values | see `krypenv.krypkasino.observation`                                              |

### Configuration

Keywords (the same in all three interfaces): the game record's rules keys `players` (2–6,
default 3), `teams` (None, or alternating seat lists, K18), `two_player_deal` ("6+4" or
"5+6"), `set_aside` ("court" or "spades"), `last_capture_point` (bool), and `reward`
("points" or "relative"), `deals` (deals per episode, default 1), `illegal` ("raise" or
"lose"), `render_mode` (None, "ansi" or "human").

### Action space

See `krypenv.krypkasino.actions`: 0–51 play a card, 52–103 take that table card into the capture
being chosen, 104 take the cards chosen so far.  When a card has several legal captures
the same agent acts again (`agent_selection` does not change) until the capture is
determined; no such question ever has a single answer.  Every card play is one decision,
even when the hand holds a single legal card.  An action is one integer: a Python `int`, a
numpy integer, or an integer array of shape `(1,)` or `()`; a float (even `3.0`), a bool, a
string or any other shape is a ValueError naming the agent and the action
(`krypenv.spaces.as_action`); an integer outside 0–104 is an illegal action (below).

### Observation space

`{"observation": int8 vector, "action_mask": int8 (105,)}` (PettingZoo classic).  The vector
is the agent's information state, seats relative to the observer; its layout table is in
`krypenv.krypkasino.observation`.  Any agent may be observed at any time.  The mask means "legal for
you now": an agent not on turn has no decision, so its mask is all zero — which can never
be confused with "nothing is legal", because the agent on turn always has at least one
legal action, and the turn is stated explicitly twice: `to_act[0] = 1` in the observation
vector, and `infos[agent]["to_act"]`.  After the episode every mask is zero and agents
step `None` (PettingZoo convention); once every agent has done so and `agents` is empty, the
raw env's `step` is a ValueError saying the episode is over (call `reset()`).

`reset(seed=...)` takes None or a non-negative integer (Python or numpy, not a bool); anything
else is a ValueError naming `seed` (`krypenv.rng.check_seed`).

### Rewards

Dense and exact: after every step each agent receives minus the change of its side's value
(its deal score, K16, or its team's with `teams`; with `reward="relative"` that score minus
the mean of the other sides', which sums to zero).  An episode's return is minus the final
value: minus the deal score for one deal, including the −5 a seat gets when the next seat
sweeps and the K15 remainder at the end.  With `deals=k` an episode is a match of k deals,
the dealer rotating left (first dealer seat P−1), and the return is minus the match total.

Illegal actions: with `illegal="raise"` (default) `step` raises a ValueError naming the
action and the legal ones and changes nothing.  With `illegal="lose"` the episode ends at
once and the offender's side score grows by `ILLEGAL_PENALTY` = 50 points (so its reward
is −50 with "points"; with "relative" the others share +50); nothing else is scored.

### Rendering

`render_mode="ansi"` returns, and `"human"` prints, a text table: deal and round, table,
set-aside pile, the hand to play, each seat's cards in hand, card points, tabbes and score,
and the last moves with the table talk of the rule texts ("tabbe på 6 eller dam", "TABBE",
"sistan"; :mod:`krypenv.krypkasino.render`).

### Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from krypenv.krypkasino.actions import CHOOSING, ILLEGAL, N_ACTIONS, action_name
from krypenv.krypkasino.config import ILLEGAL_PENALTY, EnvConfig
from krypenv.krypkasino.core import Core
from krypenv.krypkasino.env_kernels import k_aec_step, k_observe, k_values
from krypenv.krypkasino.render import move_lines, table_text
from krypenv.rng import check_seed
from krypenv.spaces import as_action, check_episode_live

__all__ = ["ILLEGAL_PENALTY", "env", "raw_env"]


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with direct ``last()``/``step()`` delegation (same checks, less overhead)."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``last()`` of the wrapped env, after the reset-order check."""
        if not self._has_reset:
            wrappers.order_enforcing.EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        """``step()`` of the wrapped env, after the order checks."""
        if not self._has_reset:
            wrappers.order_enforcing.EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            wrappers.order_enforcing.EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)


def env(**kwargs: Any) -> AECEnv:
    """The wrapped AEC environment (PettingZoo's call-order checks); keywords as :class:`raw_env`.

    Out-of-range actions need no extra wrapper: the raw env treats them as illegal actions.
    """
    return OrderEnforcing(raw_env(**kwargs))


class raw_env(AECEnv):
    """Krypkasino as a PettingZoo AEC environment (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "name": "krypkasino_v0",
                                          "is_parallelizable": False, "render_fps": 1}

    def __init__(self, players: int = 3, teams: Any = None, two_player_deal: str = "6+4", set_aside: str = "court",
                 last_capture_point: bool = False, reward: str = "points", deals: int = 1, illegal: str = "raise",
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.config = EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward, deals,
                                illegal, render_mode)
        self.render_mode = render_mode
        self._core = Core(self.config, 1)
        P = self.config.players
        self.possible_agents = [f"player_{s}" for s in range(P)]
        self.agents = self.possible_agents[:]
        self.agent_selection = self.possible_agents[0]
        obs_box = spaces.Box(self._core.low, self._core.high, dtype=np.int8)
        mask_box = spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": obs_box, "action_mask": mask_box})
                                   for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._lose = illegal == "lose"
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        self._vals = np.zeros(self._core.rules.n_teams, np.float64)
        self._delta = np.zeros(P, np.float64)  # reward per seat of the last step
        self._info = np.zeros(7, np.int64)
        self._next_obs = np.zeros(self._core.dim, np.int8)  # the next agent's observation, written by step()
        self._next_mask = np.zeros(N_ACTIONS, np.int8)
        self._seeded = False
        self._cache: tuple[str, dict[str, np.ndarray]] | None = None
        self._log: list[str] = []
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}

    def observation_space(self, agent: str) -> spaces.Space:
        """The Dict observation space (the same for every agent)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """Discrete(105) (the same for every agent)."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode; ``seed`` (None or an int >= 0) seeds the deck stream (without it, it continues)."""
        seed = check_seed(seed)
        core = self._core
        if seed is not None or not self._seeded:
            core.seed([seed])
            self._seeded = True
        core.reset()
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        k_values(core.st, core.ints, core.cfg, 0, self._vals)
        self.agent_selection = self.possible_agents[int(core.deals.turn[0])]
        self._set_infos()
        self._cache = None
        self._log = [f"new deal, dealer {self.possible_agents[int(core.deals.dealer[0])]}"]
        if self.render_mode == "human":
            self.render()

    def _set_infos(self) -> None:
        """``infos[agent]["to_act"]``: whether the agent has a decision to make now."""
        self.infos = {a: {"to_act": a == self.agent_selection and not self.terminations[a]} for a in self.agents}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation dict; its mask is all zero unless it is the agent to act."""
        cache = self._cache
        if cache is not None and cache[0] == agent:
            return {k: v.copy() for k, v in cache[1].items()}
        core = self._core
        obs = np.empty(core.dim, np.int8)
        mask = np.empty(N_ACTIONS, np.int8)
        k_observe(core.st, core.ints, core.cfg, 0, self._seat_of[agent], obs, mask, core.scr)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Apply the action of ``agent_selection`` (None once it is terminated; ValueError once no agent is left)."""
        check_episode_live(self.agents)
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = as_action(action, N_ACTIONS, agent)
        core = self._core
        obs, mask, info = self._next_obs, self._next_mask, self._info  # observe() hands out copies
        k_aec_step(core.st, core.rng, core.ints, core.cfg, action, self._lose, self._vals, self._delta, obs,
                   mask, info, core.scr)
        status, _, pending, deal_no, rnd, turn, over = info.tolist()
        if status == ILLEGAL and not self._lose:
            self._raise_illegal(agent, action, pending)
        self.rewards = dict(zip(self.agents, self._delta.tolist()))
        cum = self._cumulative_rewards
        cum[agent] = 0.0
        for a, r in self.rewards.items():
            cum[a] += r
        nxt = self.possible_agents[turn]
        self._cache = (nxt, {"observation": obs, "action_mask": mask})
        if over:
            self.terminations = {a: True for a in self.agents}
            for a in self.agents:
                self.infos[a]["to_act"] = False
        else:
            self.infos[agent]["to_act"] = False
            self.infos[nxt]["to_act"] = True
        self.agent_selection = nxt
        if self.render_mode is not None:
            if status == ILLEGAL:
                self._log.append(f"{agent}: illegal action {action} ({action_name(action, pending)}), "
                                 f"+{ILLEGAL_PENALTY} and the episode ends")
            elif status != CHOOSING:
                self._log.extend(move_lines(core, 0, self.possible_agents, deal_no, rnd))
            if self.render_mode == "human":
                self.render()

    def _raise_illegal(self, agent: str, action: int, pending: int) -> None:
        mask = self.observe(agent)["action_mask"]
        legal = ", ".join(f"{a} ({action_name(a, pending)})" for a in np.flatnonzero(mask))
        raise ValueError(f"illegal action {action} ({action_name(action, pending)}) for {agent}; "
                         f"legal actions: {legal}")

    def render(self) -> str | None:
        """A text table of the game; returned for "ansi", printed for "human" (None without a render mode)."""
        if self.render_mode is None:
            return None
        text = table_text(self._core, 0, self.possible_agents, self._log, self.config.deals)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
