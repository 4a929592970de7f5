"""Krypkasino's agents: the rule-based baselines, determinized search and the learned-policy loader.

Importing this package registers their spec strings with :mod:`agents.base`: ``greedy``,
``creeper`` and ``expert`` (:mod:`agents.krypkasino.heuristics`, on the compiled move kernels
of :mod:`agents.krypkasino.tactics`), ``pimc`` (:mod:`agents.krypkasino.pimc`) and
``ppo:PATH`` (:mod:`agents.krypkasino.ppo`; its network is :mod:`agents.krypkasino.move_policy`
on the features of :mod:`agents.krypkasino.move_features`, imported with torch only when a
checkpoint is loaded), the policy-guided search ``pimc:policy=ppo:PATH``
(:mod:`agents.krypkasino.guided` on :mod:`agents.krypkasino.lockstep`) and ``champion``
(:mod:`agents.krypkasino.champion`, the strongest measured agent per table).
:mod:`agents.league` mixes them with learner snapshots for training.
"""

# registers greedy, creeper, expert, pimc, ppo:PATH; pimc:policy=ppo:PATH and champion
from agents.krypkasino import champion, guided, heuristics, pimc, ppo  # noqa: F401
