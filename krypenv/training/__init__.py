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
| ``selfplay.py``       | self-play with magnetic mirror descent on the device env (``mlp`` checkpoints)   |
| ``mmdnet.py``         | its network and losses, computed on the inputs and actions a batch uses          |
| ``distill.py``        | expert iteration: DAgger games, the search's labels, a student network, repeat   |
| ``labels.py``         | the labels' shards on disk (npz with a JSON card; resumable, checked on reading) |
| ``student.py``        | the student network in torch, saved as an ``mlp`` file (format 2)                |
| ``ensemble.py``       | several students as one ``mlp`` file: the weighted mean of their logits, exactly |
| ``krypkasino.py``     | Krypkasino's defaults, env, networks, metadata and duplicate evaluations; its    |
|                       | expert-iteration hooks (``DISTILL``, ``distill_core``, ``label_features``, …)    |
| ``kungsholmskille.py``| Kungsholmskille's: one pot per episode, an MLP, money among copies of a baseline |
"""
