"""The pieces of ``train.py``: what every game's training shares, and one module per game.

``train.py`` (at the repository root) is the readable CleanRL-style script; it asks the game
named by ``--game`` for everything that is the game's own, through the ``training`` part of
the game's declaration in :mod:`krypenv.games`:

| module                | what it holds                                                                    |
|-----------------------|----------------------------------------------------------------------------------|
| ``common.py``         | the interface of a game's training part, ``resolve`` (the game's defaults), the  |
|                       | learning curve's words (:class:`Curve`) and a periodic evaluation's point         |
| ``warm.py``           | warm starts: ``--init-from`` a checkpoint's weights, ``--bc-teacher`` imitation  |
| ``exploit.py``        | ``krypenv exploit``: exact NashConv (OpenSpiel) or an approximate best response  |
| ``krypkasino.py``     | Krypkasino's defaults, env, networks, metadata and duplicate evaluations         |
| ``kungsholmskille.py``| Kungsholmskille's: one pot per episode, an MLP, money among copies of a baseline |
"""
