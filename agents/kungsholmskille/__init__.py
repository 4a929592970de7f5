"""Kungsholmskille's agents: ``timid`` and ``expert`` (:mod:`agents.kungsholmskille.heuristics` on the compiled
tactics of :mod:`agents.kungsholmskille.tactics`), ``pimc`` (:mod:`agents.kungsholmskille.pimc`) and the learned
``ppo:PATH`` (:mod:`agents.kungsholmskille.ppo`).

Importing this package registers their spec strings with :mod:`agents.base` for the game
``kungsholmskille``: ``agents.load("expert", game="kungsholmskille")``.  ``random`` plays every game.
"""

from agents.kungsholmskille import heuristics, pimc, ppo  # noqa: F401  (register timid, expert, pimc, ppo:PATH)
