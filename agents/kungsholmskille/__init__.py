"""Kungsholmskille's agents: ``timid`` and ``expert`` (:mod:`krypenv.agents.kungsholmskille.heuristics` on the compiled
tactics of :mod:`krypenv.agents.kungsholmskille.tactics`), ``pimc`` (:mod:`krypenv.agents.kungsholmskille.pimc`)
and the learned ``ppo:PATH`` (:mod:`krypenv.agents.kungsholmskille.ppo`).

Importing this package registers their spec strings with :mod:`krypenv.agents.base` for the game
``kungsholmskille``: ``agents.load("expert", game="kungsholmskille")``.  ``random`` plays every game.
"""

from krypenv.agents.kungsholmskille import guided, heuristics, pimc, ppo  # noqa: F401  (timid, expert, pimc, ppo:PATH)
