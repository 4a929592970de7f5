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
"lose"), `render_mode` (None, "ansi" or "human"); the deck and deal: `preset` ("standard",
the default, "tiny" for 2 players or "small" for 2–3 players; RULES.md K22) and the rule keys
`ranks`, `suits`, `copies`, `hand`, `table` (K20, K21), which override the preset's, e.g.
`krypkasino_v0.env(players=2, preset="tiny")`.  Every preset has the same observation layout
and action space; only the observation's highs follow the deck (RULES.md "Variants and presets").

### Action space

See `krypenv.krypkasino.actions`: 0–51 play a card, 52–103 take that table card into the capture
being chosen, 104 take the cards chosen so far.  When a card has several legal captures
the same agent acts again (`agent_selection` does not change) until the capture is
determined; no such question ever has a single answer.  Every card play is one decision,
even when the hand holds a single legal card.  An action is one integer: a Python `int`, a
numpy integer, or an integer array of shape `(1,)` or `()`; a float (even `3.0`), a bool, a
string or any other shape is a ValueError naming the agent and the action
(`krypenv.envs.spaces.as_action`); an integer outside 0–104 is an illegal action (below).

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

from krypenv.envs.aec import GameAECEnv, aec_metadata, env_factory
from krypenv.krypkasino.actions import CHOOSING, ILLEGAL, N_ACTIONS, action_name
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.config import ILLEGAL_PENALTY, EnvConfig
from krypenv.krypkasino.env_kernels import k_aec_step, k_values
from krypenv.krypkasino.render import move_lines, table_text

__all__ = ["ILLEGAL_PENALTY", "env", "raw_env"]


class raw_env(GameAECEnv):
    """Krypkasino as a PettingZoo AEC environment (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = aec_metadata("krypkasino_v0")
    batch_class = KrypkasinoBatch
    core: KrypkasinoBatch

    def __init__(self, players: int = 3, teams: Any = None, two_player_deal: str = "6+4", set_aside: str = "court",
                 last_capture_point: bool = False, reward: str = "points", deals: int = 1, illegal: str = "raise",
                 render_mode: str | None = None,
                 preset: str = "standard", ranks: Any = None, suits: Any = None, copies: int | None = None,
                 hand: int | None = None, table: int | None = None) -> None:
        """A table of ``players`` seats; the keywords are documented in the module docstring."""
        super().__init__(EnvConfig(players, teams, two_player_deal, set_aside, last_capture_point, reward, deals,
                                   illegal, render_mode, preset, ranks, suits, copies, hand, table))
        self._values = np.zeros(self.core.rules.n_teams, np.float64)  # each side's value after the last step
        self._step_info = np.zeros(7, np.int64)  # status, seat, pending card, deal, round; seat to act, over
        self._next_obs = np.zeros(self.core.dim, np.int8)  # the next agent's observation, written by the kernel
        self._next_mask = np.zeros(N_ACTIONS, np.int8)

    def _start(self) -> int:
        """The sides' values at the deal; the seat to act."""
        core = self.core
        k_values(core.state, core.ints, core.packed, 0, self._values)
        return int(core.deals.turn[0])

    def _play(self, action: int) -> tuple[bool, int, bool, bool, tuple[np.ndarray, np.ndarray] | None]:
        """One compiled AEC step: act, deal on in a match, rewards per seat, the next agent's observation."""
        core = self.core
        info = self._step_info
        k_aec_step(core.state, core.rng, core.ints, core.packed, action, self._lose, self._values, self._delta,
                   self._next_obs, self._next_mask, info, core.scratch)
        status, _, _, _, _, seat, over = info.tolist()
        return status == ILLEGAL, seat, over != 0, False, (self._next_obs, self._next_mask)

    def _start_log(self) -> list[str]:
        """The dealer of the new deal."""
        return [f"new deal, dealer {self.possible_agents[int(self.core.deals.dealer[0])]}"]

    def _step_log(self, agent: str, action: int, illegal: bool) -> list[str]:
        """The move just made with the table talk, or the illegal action."""
        status, _, pending, deal_no, rnd, _, _ = self._step_info.tolist()
        if illegal:
            return [(f"{agent}: illegal action {action} ({action_name(action, pending)}), "
                     f"+{ILLEGAL_PENALTY} and the episode ends")]
        if status == CHOOSING:
            return []
        return move_lines(self.core, 0, self.possible_agents, deal_no, rnd)

    def _table_text(self) -> str:
        """The text table of :mod:`krypenv.krypkasino.render`."""
        return table_text(self.core, 0, self.possible_agents, self._log, self.config.deals)


env = env_factory(raw_env)  # raw_env wrapped in PettingZoo's call-order checks
