"""``pimc:policy=mlp:PATH``: Kungsholmskille's determinized search whose rollouts are a learned policy.

The ``pimc`` search of :mod:`krypenv.agents.kungsholmskille.pimc` (the same worlds from the same
game stream: ``sample_world``, one generator per decision seeded by ``batch.uniforms``) with the
network of an ``mlp`` file (:mod:`krypenv.agents.mlp`, numpy, no pickle; what
:mod:`krypenv.training.distill` writes) playing every seat of every rollout, its most probable
legal action at each decision.  For every decision with two or more legal actions, each action is
applied in each of ``worlds`` worlds and the deal is played to its end **in lockstep**: the rows
of all the batch's decisions are stepped together, one network call per ply for every live row.
A rollout's value is pimc's (``value``: ``episode``, the default, or ``deal``;
:func:`krypenv.agents.kungsholmskille.pimc.row_value`), the action with the best mean is played.

| option   | default | meaning                                                          |
|----------|---------|------------------------------------------------------------------|
| policy   | —       | ``mlp:PATH``, the rollout policy (trained for the table's seats) |
| worlds   | 16      | sampled deals per decision, ≥ 1                                  |
| value    | episode | ``episode`` or ``deal``: what a rollout is worth (pimc's)         |

The network sees what the seat would see in the env: the deal's record, the episode's money so
far, the deal number and the deals left (constant within a rollout: it stops at the deal's end).
:meth:`GuidedPimc.values` gives every legal action's mean, for labelling.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from krypenv.agents.kungsholmskille.pimc import GAME, LEARNED, VALUES, row_value, sample_world
from krypenv.agents.mlp import MLPAgent, resolve
from numba import njit

from krypenv.agent_api import DecisionBatch
from krypenv.kungsholmskille.actions import MAX_LEGAL, N_ACTIONS
from krypenv.kungsholmskille.config import C_MAX_DEALS, E_DEAL, E_MONEY
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.observation import encode_into, mask_into

__all__ = ["GuidedPimc", "load"]

MAX_WORLDS = 4096


@njit(cache=True)
def observe_rows(st: np.ndarray, cash: np.ndarray, rows: np.ndarray, players: int, money: np.ndarray,
                 deal_no: np.ndarray, deals_left: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> None:
    """Observation and mask of the seat to act in each of ``rows`` (its decision's episode money and deal)."""
    buf = np.empty(MAX_LEGAL + 5, np.int64)
    for k in range(rows.shape[0]):
        r = rows[k]
        s = st[r, kernels.TO_ACT]
        encode_into(st[r], cash[r], money[r], deal_no[r], deals_left[r], False, players, s, obs[k])
        mask_into(st[r], s, False, mask[k], buf)


@njit(cache=True)
def apply_rows(st: np.ndarray, cash: np.ndarray, rows: np.ndarray, players: int, actions: np.ndarray) -> None:
    """Make ``actions[k]`` in row ``rows[k]``."""
    for k in range(rows.shape[0]):
        kernels.apply(st[rows[k]], cash[rows[k]], players, actions[k])


class GuidedPimc:
    """``pimc:policy=mlp:PATH`` (see the module docstring)."""

    game = GAME

    def __init__(self, path: str, worlds: int = 16, value: str = "episode") -> None:
        if isinstance(worlds, bool) or not isinstance(worlds, int) or not 1 <= worlds <= MAX_WORLDS:
            raise ValueError(f"pimc: worlds must be an integer from 1 to {MAX_WORLDS}, got {worlds!r}")
        if value not in VALUES:
            raise ValueError(f"pimc: value must be one of {', '.join(VALUES)}, got {value!r}")
        self.path, self.worlds, self.value = path, worlds, value
        self.agent = MLPAgent(resolve(path))
        if self.agent.trained_game != GAME:
            raise ValueError(f"mlp checkpoint {path} was trained on {self.agent.trained_game}, not {GAME}")
        if self.agent.net.features is not None:
            raise ValueError(f"mlp checkpoint {path} reads action features {self.agent.net.features}: "
                             f"{GAME} has none")
        self.name = f"pimc:policy=mlp:{path}"

    def values(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray]:
        """((B, A) every legal action's mean rollout money, higher is better, NaN elsewhere and at forced
        decisions; (B,) the action played: the best mean)."""
        core, P, W = batch.core, int(batch.rules.players), self.worlds
        if int(self.agent.players) != P:
            raise ValueError(f"{self.name} was trained for {self.agent.players} players, not {P}")
        values = np.full(batch.mask.shape, np.nan)
        out = np.empty(len(batch), np.int64)
        seeds = (batch.uniforms(1)[:, 0] * 2**53).astype(np.int64)
        counts = np.asarray(core.rules.deck_counts, np.int64)
        states, cashes, firsts, owner, legals = [], [], [], [], {}
        for k in range(len(batch)):
            legal = np.flatnonzero(batch.mask[k])
            if legal.size == 1:
                out[k] = legal[0]
                continue
            i, seat = int(batch.envs[k]), int(batch.seats[k])
            rng = np.random.default_rng(int(seeds[k]))
            worlds = np.stack([sample_world(core.state[i], P, seat, rng, counts) for _ in range(W)])
            states.append(np.tile(worlds, (legal.size, 1)))
            cashes.append(np.repeat(core.cash[i][None], legal.size * W, axis=0))
            firsts.append(np.repeat(legal, W))
            owner.append(np.full(legal.size * W, k))
            legals[k] = legal
        if not legals:
            return values, out
        st, cash = np.concatenate(states), np.concatenate(cashes)
        first, own = np.concatenate(firsts).astype(np.int64), np.concatenate(owner)
        rows = np.arange(st.shape[0], dtype=np.int64)
        apply_rows(st, cash, rows, P, first)
        env = np.asarray(batch.envs, np.int64)[own]
        money = core.episode[env, E_MONEY:E_MONEY + P].copy()
        deal_no = core.episode[env, E_DEAL].copy()
        deals_left = int(core.packed[C_MAX_DEALS]) - 1 - deal_no
        obs = np.empty((st.shape[0], core.dim), core.obs_dtype)
        mask = np.empty((st.shape[0], N_ACTIONS), np.int8)
        live = rows[st[:, kernels.DONE] == 0]
        while live.size:
            observe_rows(st, cash, live, P, money, deal_no, deals_left, obs, mask)
            logits = self.agent.net.logits(obs[:live.size], mask[:live.size])
            apply_rows(st, cash, live, P, logits.argmax(axis=1).astype(np.int64))
            live = live[st[live, kernels.DONE] == 0]
        seats = np.asarray(batch.seats, np.int64)[own]
        val = np.array([row_value(st[r], cash[r], P, seats[r], self.value == "episode") for r in rows])
        for k, legal in legals.items():
            means = val[own == k].reshape(legal.size, W).mean(axis=1)
            values[k, legal] = means
            out[k] = legal[int(np.argmax(means))]
        return values, out

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The legal action with the best mean rollout money (a forced one at once)."""
        return self.values(batch)[1]


def load(path: str, **options: Any) -> GuidedPimc:
    """``pimc:policy=mlp:PATH,...``."""
    return GuidedPimc(path, **options)


LEARNED["mlp"] = load
