"""Rule-based baselines: ``greedy``, ``creeper`` and ``expert``.

| spec       | idea                                                                                     |
|------------|------------------------------------------------------------------------------------------|
| ``greedy`` | the move that takes the fewest points now: card points (K4) of the captured cards and     |
|            | the played card, plus 5 per tabbe it scores against itself (10 for a dubbeltabbe, K14).  |
| ``creeper``| creeps (K12) whenever it can, with its highest card first (aces count 14, K3), so aces   |
|            | and high cards leave the hand early; when it must capture, greedy (higher card on ties). |
| ``expert`` | the tactics of the rule texts: counts cards to estimate whether the next seat must sweep |
|            | what a move leaves (−5/−10 for us) or can make us sweep; minds the K15 pile in "sistan". |

"Points now" (greedy) is the whole immediate change of the mover's own score: a creep
takes 0, a capture its card points, and a sweep (forced, K13) adds its tabbe; the −5 a
sweep gives the seat before the sweeper is that seat's, not the mover's.  Ties are broken
by the decision's uniform from the game's stream, so games are reproducible from the seed.

``expert`` options (``expert:setup=1,self=1,...``), each a float weight ≥ 0 of a term of the
expected cost of a move, lower being better::

    cost = points now
         − 5·setup · P(the next seat holds a card sweeping the table we leave)     (K13, K14)
                   (+1 P(that sweep is a dubbeltabbe))
         + 5·self  · P(the seat before our next turn can leave a table our hand must sweep)
         + last    · (set-aside pile + table points) · P(we end as the last capturer)  (K15)
         − high    · (played value − 8) / 6                                  (shed high cards)

| option  | default | meaning                                                                   |
|---------|---------|---------------------------------------------------------------------------|
| setup   | 1.0     | weight of the tabbe we set up for the next seat                           |
| self    | 1.0     | weight of the risk of being made to sweep ourselves                       |
| last    | 1.0     | weight of the K15 stake in the last round                                 |
| high    | 0.3     | preference for playing high cards (aces count 14) early                   |
| endq    | 0.5     | assumed chance that a later play in the last round captures              |

The probabilities are hypergeometric over the cards this seat has not seen (own hand,
table, set-aside pile and capture piles are seen), with the next seat's hand size and the
values it cannot hold (a seat that did not sweep a sweepable table this round holds none
of its sweepers, K13).  With two players the seat before our next turn is the next seat;
with more it is the seat to our right, judged on the table we leave.  When our move ends a
round the next seat leads the new one with 4 cards after the court cards are set aside (K8).

All three run compiled over the whole batch of decisions (:mod:`krypenv.agents.krypkasino.tactics`), reading
only the acting seat's public information from the game records.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.krypkasino import tactics as T
from numba import njit

from krypenv.agent_api import DecisionBatch, DevicePolicy

EXPERT_DEFAULTS = {"setup": 1.0, "self": 1.0, "last": 1.0, "high": 0.3, "endq": 0.5}
EXPERT_ORDER = ("setup", "self", "last", "high", "endq")  # positions in the weight vector (tactics.W_*)


def expert_weights(**options: float) -> np.ndarray:
    """The expert's weight vector from options (defaults for the rest); ValueError naming a bad one."""
    unknown = sorted(set(options) - set(EXPERT_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown expert option(s) {unknown}; options are {', '.join(EXPERT_ORDER)}")
    w = np.zeros(T.N_WEIGHTS, np.float64)
    for k, name in enumerate(EXPERT_ORDER):
        value = options.get(name, EXPERT_DEFAULTS[name])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
            raise ValueError(f"expert option {name} must be a number >= 0, got {value!r}")
        if name == "endq" and value > 1:
            raise ValueError(f"expert option endq must be a probability in [0, 1], got {value!r}")
        w[k] = float(value)
    return w


@njit(cache=True)
def device_act(st: np.ndarray, i: int, players: int, hand_size: int, spades: bool, choice: np.ndarray, u: float,
               iparams: np.ndarray, fparams: np.ndarray, cards: np.ndarray, caps: np.ndarray, costs: np.ndarray,
               keys: np.ndarray, scr: np.ndarray) -> int:
    """The next action of policy ``iparams[0]`` (RANDOM, GREEDY, CREEPER or EXPERT; expert weights ``fparams``) for
    the seat to act in deal ``i`` with choice state ``choice`` (53,) and tie-break uniform ``u``.

    One decision with caller-owned buffers (``cards``, ``caps``, ``costs``: ``MAX_MOVES`` rows; ``keys``:
    ``MAX_KEYS``; ``scr``: the tactics' ``new_scratch()``): what :func:`act_batch` does per decision on the CPU,
    and what a device env's CUDA kernels call for the seats these agents play there
    (:meth:`HeuristicAgent.device_policy`).
    """
    pending = np.int64(choice[0])
    m = T.choose(st, i, players, hand_size, spades, pending, choice[1:], np.int64(iparams[0]), fparams, u, cards,
                 caps, costs, keys, scr)
    return T.action_for(pending, choice[1:], cards[m], caps[m])


@njit(cache=True)
def act_batch(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, players: int, hand_size: int, spades: bool,
              kind: int, w: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """The next action of the seat to act in each deal ``envs[k]`` (choice states ``choice``, uniforms ``u``)."""
    cards = np.empty(T.MAX_MOVES, np.int64)
    caps = np.empty((T.MAX_MOVES, 52), np.int8)
    costs = np.empty(T.MAX_MOVES, np.float64)
    keys = np.empty(T.MAX_KEYS, np.int64)
    scr = T.new_scratch()
    iparams = np.full(1, kind, np.int64)
    for k in range(envs.shape[0]):
        out[k] = device_act(st, envs[k], players, hand_size, spades, choice[envs[k]], u[k], iparams, w, cards, caps,
                            costs, keys, scr)


class HeuristicAgent:
    """A compiled rule-based policy (kind ``tactics.GREEDY``, ``CREEPER`` or ``EXPERT``) acting on a whole batch."""

    kind: ClassVar[int] = T.GREEDY
    name = "heuristic"

    def __init__(self, weights: np.ndarray | None = None) -> None:
        self.weights = expert_weights() if weights is None else weights

    def device_policy(self, rules: object) -> DevicePolicy:
        """This policy inside a device env's kernels (:func:`device_act`): the
        same choices as :meth:`act`, one uniform per decision from the env's stream."""
        return DevicePolicy(game="krypkasino", function=device_act, iparams=np.array([self.kind], np.int64),
                            fparams=np.asarray(self.weights, np.float64), uniforms=1, scratch=T.TACTICS_WORDS,
                            moves=T.MAX_MOVES, keys=T.MAX_KEYS)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The next action of each decision: one uniform per decision breaks ties."""
        core, rules = batch.core, batch.rules
        u = batch.uniforms(1)[:, 0]
        out = np.empty(len(batch), np.int64)
        act_batch(core.deals.state, core.choice, np.asarray(batch.envs, np.int64), rules.players,
                    rules.hand_size, rules.set_aside == "spades", self.kind, self.weights, u, out)
        return out


class GreedyAgent(HeuristicAgent):
    """``greedy``: the move that takes the fewest points now (card points plus own tabbes)."""

    kind = T.GREEDY
    name = "greedy"


class CreeperAgent(HeuristicAgent):
    """``creeper``: creep with the highest card when possible, else greedy."""

    kind = T.CREEPER
    name = "creeper"


class ExpertAgent(HeuristicAgent):
    """``expert``: card counting, tabbe set-ups, own sweep risk and the K15 pile (see the module docstring)."""

    kind = T.EXPERT
    name = "expert"

    def __init__(self, **options: float) -> None:
        super().__init__(expert_weights(**options))


register("greedy", GreedyAgent, "takes the fewest points now (card points plus own tabbes)", games=("krypkasino",))
register("creeper", CreeperAgent, "creeps whenever it can, highest card first; else greedy", games=("krypkasino",))
register("expert", ExpertAgent, "counts cards: sets up tabbes for the next seat, avoids its own, minds the K15 pile",
         games=("krypkasino",))
