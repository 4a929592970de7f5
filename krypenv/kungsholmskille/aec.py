"""# Kungsholmskille (PettingZoo AEC)

Kungsholmskille is the Swedish misère trick game of KILLE.md: 2–6 players with a 42-card
kille deck play for a money pot; each tries to be left with the lowest card after four
tricks, and must judge when to stay in, knock, fold, exchange and show.

| Import             | `from krypenv import kungsholmskille_v0; env = kungsholmskille_v0.env(players=4)` |
|--------------------|------------------------------------------------------------------------------------|
| Actions            | Discrete(279)                                                                      |
| Parallel API       | No                                                                                 |
| Manual Control     | No                                                                                 |
| Agents             | `["player_0", …, "player_{P-1}"]`, agent `player_s` sits in seat `s`               |
| Number of agents   | 2–6 (`players`, default 4)                                                         |
| Action Shape       | (1,)                                                                               |
| Action Values      | [0, 278]                                                                           |
| Observation Shape  | Dict: `observation` (75 + 23P,) int16, `action_mask` (279,) int8                   |
| Observation Values | see `krypenv.kungsholmskille.observation`                                          |

### Configuration

Keywords (the same in all three interfaces): `players` (2–6, default 4), `first_dealer`
(None = seat P−1, L2, or a seat), `max_deals` (deals before truncation, 1–1000, default 50,
L16), `skip_forced` (default False), `illegal` ("raise" or "lose"), `render_mode` (None,
"ansi" or "human"), `preset` ("standard", default, or "small", KILLE.md L22), `ranks` (the
deck's ranks, L20; None = the preset's) and `pot_deals` (the rule key `max_deals`, deals per
pot before L21 settles it; None = the preset's).  A bad value is a ValueError naming the keyword.
The observation layout is the same in every preset; only the Box highs of `talon`, `deal` and
`deals_left` change (KILLE.md "Presets").

### Action space

See `krypenv.kungsholmskille.actions`: 0 `bud`, 1 `knacka`, 2 `fold`, 3 `stay`, 4 `stand`,
5 `show`, 6–26 `discard:X`, 27–257 `discard:X,Y`, 258–278 `play:X` (L17).  Every legal move
of every decision (L5–L11) is one index, nothing else is legal.  With `skip_forced=False`
(default) a decision with a single legal move — a forced play (L10), always so in the fourth
trick — is still asked, as L17 records it; with `skip_forced=True` the env makes it.  The
default keeps one env step per record move, so records, replays and all three interfaces
see the same decisions.  An action is one integer: a Python `int`, a numpy integer, or an
integer array of shape `(1,)` or `()`; a float (even `3.0`), a bool, a string or any other
shape is a ValueError naming the agent and the action (`krypenv.envs.spaces.as_action`); an
integer outside 0–278 is an illegal action (below).

### Observation space

`{"observation": int16 vector, "action_mask": int8 (279,)}` (PettingZoo classic).  The vector
is the agent's information state, seats relative to the observer (layout table in
`krypenv.kungsholmskille.observation`).  Any agent may be observed at any time.  The mask
means "legal for you now": an agent not on turn has all zeros, and the turn is explicit in
the vector (`to_act[0] = 1`) and in `infos[agent]["to_act"]`.

### Episodes, agents and rewards

An episode is one pot: every seat pays 2 into it (L3), then deal follows deal (the dealer
rotating left, L2; budrunda antes into the same pot, L12) until the pot goes out by a
walkover (L15) or a showdown (L14): all agents are then *terminated*, and the antes for the
next pot are not paid.  If the `max_deals`-th deal still ends in a budrunda all agents are
*truncated* (L16): the pot belongs to nobody.  With a pot bound (`preset="small"` or
`pot_deals`, L21) a budrunda in the pot's last deal shares the pot out and terminates all
agents, so such an episode always ends within the bound, its returns summing to 0.

A seat's reward is the change of its money: antes negative, a pot won and a penalty received
positive, a penalty paid negative.  Rewards reach every agent at every step (PettingZoo's
`rewards`, accumulated by `last()`), folded agents included.  The −2 ante of L3 arrives with
the first step (PettingZoo requires zero rewards right after `reset`).  So an agent's return
is its net money, and the returns of an episode whose pot went out sum to 0.

A folded agent stays in `agents` until the episode ends: it is simply never selected while it
is out of the deal (L6), receives its rewards, and plays again from the next deal.  When the
episode ends every agent steps `None` (PettingZoo convention); once all have and `agents` is
empty, the raw env's `step` is a ValueError saying the episode is over (call `reset()`).

`reset(seed=...)` takes None or a non-negative integer (Python or numpy, not a bool); anything
else is a ValueError naming `seed` (`krypenv.rng.check_seed`).

Illegal actions: with `illegal="raise"` (default) `step` raises a ValueError naming the move
(as an L17 string), the agent and the legal moves; nothing changes.  With `illegal="lose"`
the episode ends (terminated) and the offender pays `ILLEGAL_FINE` = 20 to every other seat;
the pot belongs to nobody.

### Rendering

`render_mode="ansi"` returns, and `"human"` prints, a spectator's table (all hands shown):
deal, dealer, forehand, pot, phase; each seat's money, hand, calls and trick cards; the
current trick; the seat to act and its legal moves; and the moves so far with how each deal
ended (`krypenv.kungsholmskille.render`).

### Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from krypenv.envs.aec import GameAECEnv, aec_metadata, env_factory
from krypenv.kungsholmskille.actions import N_ACTIONS, action_name
from krypenv.kungsholmskille.batch import KungsholmskilleBatch
from krypenv.kungsholmskille.config import FORFEIT, ILLEGAL, ILLEGAL_FINE, POT_OUT, RUNNING, TRUNCATED, EnvConfig
from krypenv.kungsholmskille.env_kernels import k_aec_step
from krypenv.kungsholmskille.render import moves_since, table_text

__all__ = ["ILLEGAL_FINE", "env", "raw_env"]


class raw_env(GameAECEnv):
    """Kungsholmskille as a PettingZoo AEC environment (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = aec_metadata("kungsholmskille_v0")
    batch_class = KungsholmskilleBatch
    core: KungsholmskilleBatch

    def __init__(self, players: int = 4, first_dealer: int | None = None, max_deals: int = 50,
                 skip_forced: bool = False, illegal: str = "raise", render_mode: str | None = None,
                 preset: str = "standard", ranks: int | None = None, pot_deals: int | None = None) -> None:
        """A table of ``players`` seats; the keywords are documented in the module docstring."""
        super().__init__(EnvConfig(players, first_dealer, max_deals, skip_forced, illegal, render_mode, preset, ranks,
                                   pot_deals))
        P = self.core.players
        self._base = np.zeros(P, np.int64)  # each seat's money when it was last rewarded
        self._money_delta = np.zeros(P, np.int64)
        self._before = (0, 0)  # deal number and moves of the deal before the last step (for the render log)
        self._next_obs = np.zeros(self.core.dim, self.core.obs_dtype)  # the next agent's observation, by the kernel
        self._next_mask = np.zeros(N_ACTIONS, np.int8)

    def _start(self) -> int:
        """Money starts at −2: the ante reaches the seats with the first step; the seat to act."""
        self._base[:] = 0
        return int(self.core.deals.to_act[0])

    def _play(self, action: int) -> tuple[bool, int, bool, bool, tuple[np.ndarray, np.ndarray] | None]:
        """One compiled AEC step: act, forced and dealt-on moves, each seat's money change."""
        core = self.core
        if self.render_mode is not None:
            self._before = (int(core.deal_no[0]), int(core.deals.n_moves[0]))
        status = k_aec_step(core.state, core.cash, core.episode, core.rng, core.packed, core.prev_state,
                            core.prev_cash, action, self._lose, self._base, self._money_delta, self._next_obs,
                            self._next_mask)
        self._delta[:] = self._money_delta
        over = int(core.over[0])
        if over != RUNNING:
            return bool(status == ILLEGAL), self._seat_of[self.agent_selection], over in (POT_OUT, FORFEIT), \
                over == TRUNCATED, None
        return bool(status == ILLEGAL), int(core.deals.to_act[0]), False, False, (self._next_obs, self._next_mask)

    def _start_log(self) -> list[str]:
        """The new pot and the first deal's dealer."""
        d = self.core.deals
        return [(f"new pot: every seat antes 2 (L3); deal 0: dealer {self.possible_agents[int(d.dealer[0])]}, "
                 f"pot {int(d.pot[0])}")]

    def _step_log(self, agent: str, action: int, illegal: bool) -> list[str]:
        """The moves since the step began (forced and dealt-on ones included), after an illegal move's line."""
        lines = []
        if illegal:
            name = action_name(action) if 0 <= action < N_ACTIONS else f"action {action}"
            lines.append(f"{agent}: illegal move {name!r}")
        return lines + moves_since(self.core, 0, self.possible_agents, *self._before)

    def _table_text(self) -> str:
        """The spectator's table of :mod:`krypenv.kungsholmskille.render`."""
        return table_text(self.core, 0, self.possible_agents, self._log)


env = env_factory(raw_env)  # raw_env wrapped in PettingZoo's call-order checks
