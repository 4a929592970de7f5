"""Krypkasino's agents: the rule-based baselines, determinized search and the learned-policy loader.

Importing this package registers their spec strings with :mod:`krypenv.agents.base`: ``greedy``,
``creeper`` and ``expert`` (:mod:`krypenv.agents.krypkasino.heuristics`, on the compiled move kernels
of :mod:`krypenv.agents.krypkasino.tactics`), ``pimc`` (:mod:`krypenv.agents.krypkasino.pimc`) and
``ppo:PATH`` (:mod:`krypenv.agents.krypkasino.ppo`; its network is :mod:`krypenv.agents.krypkasino.move_policy`
on the features of :mod:`krypenv.agents.krypkasino.move_features`, imported with torch only when a
checkpoint is loaded), the policy-guided search ``pimc:policy=ppo:PATH``
(:mod:`krypenv.agents.krypkasino.guided` on :mod:`krypenv.agents.krypkasino.lockstep`) and ``champion``
(:mod:`krypenv.agents.krypkasino.champion`, the strongest measured agent per table).
:mod:`krypenv.agents.league` mixes them with learner snapshots for training.
"""

# registers greedy, creeper, expert, pimc, ppo:PATH; pimc:policy=ppo:PATH and champion; the move features of mlp files
from krypenv.agents.krypkasino import champion, endgame, guided, heuristics, move_features, pimc, ppo  # noqa: F401
