"""Duplicate evaluation of agents, for every registered game: ``krypenv eval``.

    krypenv eval [--game G] --agents SPECS [--players N] [--deals D] [--seed S]
                 [--seatings rotations|permutations] [--workers W] [--batch B]
                 [--ray [ADDRESS]] [--out DIR] [--no-records] [--no-progress] [the game's own options]

``--agents`` takes agent spec strings (:func:`krypenv.agents.load`) separated by commas; a ``k=v``
piece whose key has no ``:`` continues the previous spec's options (``pimc:samples=32,rollouts=4,greedy``
is two agents, ``pimc:samples=8,policy=ppo:ppo-2p`` one).  Give a spec twice for a mirror
match (the second is labelled ``spec#2``).

The command needs the ``eval`` extra (``pip install 'krypenv[eval]'``: matplotlib, openskill,
tqdm); without it, it stops before playing anything with a one-line error naming the extra.

**What is shared** (this package): lineups and seatings (:mod:`krypenv.eval.schedule`: with as
many agents as positions, one lineup; with more, every combination of distinct agents; with
fewer, the agents repeated around the table; each lineup in every rotation, or with
``--seatings permutations`` every order), the seeded deck and agent streams of every game,
playing chunks of games here, in worker processes or on Ray (:mod:`krypenv.eval.play`,
:mod:`krypenv.eval.ray_pool`), the statistics (:mod:`krypenv.eval.stats`: means with 95%
Student-t intervals over decks, head to head paired by deck, openskill ratings), the results
folder's plumbing (:mod:`krypenv.eval.report`), the command (:mod:`krypenv.eval.command`) and
the ``eval`` benchmark (:mod:`krypenv.eval.bench`).  None of them imports a game.

**What each game supplies**: its package ``krypenv.eval.<game>``, the registry's ``eval`` part
(:mod:`krypenv.games`): :mod:`krypenv.eval.krypkasino` (one deal per game, ``--teams``,
``--independent``, the K variants) and :mod:`krypenv.eval.kungsholmskille` (whole pots over deck
sets, ``--max-deals``) document their formats, statistics and output folders.  Each exposes:

=====================  ====================================================================
name                   what it is
=====================  ====================================================================
``EvalConfig``         the frozen configuration (``agents``, ``players``, ``deals``, ``seed``,
                       ``seatings``, ``workers``, ``batch``, ``records``, ``ray`` and the game's
                       own fields; ``schedule``, ``labels``, ``games_dict()``)
``evaluate``           ``evaluate(config, agents=None, progress=None, on_chunk=None) -> Results``;
                       ``on_chunk(played, independent)`` sees each chunk in game order
``Results``            the statistics and the games played (``to_dict()``: ``results.json``)
``Played``             the outcomes of played games, in game order
``OPTIONS``            the game's own ``krypenv eval`` options: argparse dest -> the values that
                       mean "not given" (another game's evaluation refuses them)
``config_from_args``   ``config_from_args(args, agents) -> EvalConfig`` from parsed arguments
``default_out``        the default output folder of a configuration, ``evals/...``
``run_eval``           ``run_eval(config, out, progress=True, stdout=None) -> Results``: play,
                       write the results folder, print the report
=====================  ====================================================================

**Reproducibility and workers.** ``--workers W`` (default: all cores) plays chunks of
``--batch B`` games in W spawned processes, each with cores/W numba threads.  Each game's
decks and the agents' random numbers (``batch.uniforms``) come from streams seeded by (seed,
deck, table), so the same seed gives the same results and records whatever W and B are, as
long as the agents draw their randomness from ``batch.uniforms`` and act on each decision
independently of the others in the batch.  ``--ray [ADDRESS]`` plays the same chunks as Ray
tasks on a cluster instead (:mod:`krypenv.eval.ray_pool`; the ``ray`` extra), with the same results.
A progress bar with an ETA shows on stderr for runs over a second; the report is printed at the end.

Python: ``krypenv.eval.krypkasino.evaluate(krypenv.eval.krypkasino.EvalConfig(agents=("random", "random"),
deals=50))``; :func:`krypenv.eval.bench.bench_eval` measures deals/s.
"""
