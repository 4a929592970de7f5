"""Duplicate evaluation of Krypkasino and Kungsholmskille agents: ``krypenv eval``.

    krypenv eval --agents expert,greedy[,...] [--players N] [--deals D] [--seed S] [--teams T]
                 [--seatings rotations|permutations] [--independent] [--workers W] [--batch B]
                 [--ray [ADDRESS]] [--out DIR] [--no-records] [--no-progress]
                 [--two-player-deal 6+4|5+6] [--set-aside court|spades] [--last-capture-point]
    krypenv eval --game kungsholmskille --agents expert,timid,random --players 4 --deals D [--max-deals M] [...]

``--agents`` takes agent spec strings (``agents.load``) separated by commas; a ``k=v`` piece
whose key has no ``:`` continues the previous spec's options (``pimc:samples=32,rollouts=4,greedy``
is two agents, ``pimc:samples=8,policy=ppo:checkpoints/ppo-2p.zip`` one).
Give a spec twice for a mirror match (the second is labelled ``spec#2``).

The command needs the ``eval`` extra (``pip install 'krypenv[eval]'``: matplotlib, openskill,
tqdm); without it, it stops before playing anything with a one-line error naming the extra.

**Duplicate format.** ``--deals D`` decks are shuffled (default 100; deck ``d`` depends only
on ``--seed`` and ``d``), and every deck is played at every *table*: every seating of every
lineup, so each agent meets the same cards from every seat and the luck of the deal cancels.
In all, D × tables deals are played.  Lineups (:mod:`krypenv.eval.schedule`): with as many agents as
seats, one; with more, every combination of distinct agents (every pair for 2 players); with
fewer, the agents repeated around the table (A, B, A, B).  With ``--teams`` an agent plays all
seats of a team (``--teams 2``: seats alternate between two teams, 4 or 6 players; ``--teams
3``: 6 players in three teams; or explicit seat lists ``0,2/1,3``).  ``--seatings rotations``
(default) plays each lineup in every rotation, ``permutations`` in every order of the seats.

**Statistics** (:mod:`krypenv.eval.stats`): per agent the mean score per deal (per seat, or team
with teams; lower is better) with a 95% Student-t interval over decks (the deck is the unit
of independence: games are averaged per deck first), the share of deals won (lowest score
at the table, ties shared), tabbes taken and set up per deal (a tabbe by the seat to the
left is set up, K14), and openskill Plackett–Luce ratings updated per deal in game order;
per pair of agents that met, the difference of their scores with a 95% interval paired by
deck.  ``--independent`` also plays the same tables with a fresh deck for every deal and
reports, per pair, the standard error of the difference both ways and the variance
reduction factor (independent variance / duplicate variance at the same number of deals).

**Output folder** (``--out``, default ``evals/<agents>-<P>p-<D>d-s<seed>``, then a tag per
non-default variant: ``-teams02+13``, ``-deal5+6``, ``-aside-spades``, ``-lastpoint``,
``-permutations``, ``-independent``):
``results.csv`` / ``results.json`` (the table, head to head and configuration),
``head_to_head.csv``, ``games.csv`` (per deal: deck, table, agents, seat scores and tabbes, in
the order of the records), ``records.jsonl`` (every deal as a game record that ``krypenv
replay`` checks; ``--no-records`` skips them), ``scores.png`` (means with 95% intervals),
``run.json`` (the command line, the full configuration, time and deals/s), and with
``--independent`` ``games-independent.csv`` and ``records-independent.jsonl``.  The report is
printed at the end; a progress bar with an ETA shows on stderr for runs over a second.

**Reproducibility and workers.** ``--workers W`` (default: all cores) plays chunks of
``--batch B`` deals (default 256) in W spawned processes, each with cores/W numba threads.
Each deal's deck and the agents' random numbers (``batch.uniforms``) come from streams seeded
by (seed, deck, table), so the same seed gives the same results and records whatever W and B
are, as long as the agents draw their randomness from ``batch.uniforms`` and act on each
decision independently of the others in the batch.

``--ray [ADDRESS]`` plays the same chunks as Ray tasks on a cluster instead (:mod:`krypenv.eval.ray_pool`;
the ``ray`` extra), with the same results.

**Kungsholmskille** (``--game kungsholmskille [--max-deals M]``, :mod:`krypenv.eval.kille`): the unit
is an *episode*, one pot carried over deals until it goes out (walkover or showdown) or
``--max-deals`` deals (default 50, L16: truncated, the pot belongs to nobody).  ``--deals D``
counts *deck sets*: deck set ``d`` is its own seeded stream of decks (``SeedSequence([seed, 0,
d])``), deal ``k`` of the episode taking its ``k``-th deck; only dealing draws from it, so the
decks never depend on the agents' choices or random numbers (their uniforms come from a
stream per (seed, deck set, table)).  Every table (lineups × seatings, as above; seat 0 is
forehand of the first deal) plays every deck set, so seatings differ only by the players'
choices.  Reported per agent: money per episode (higher is better) with a 95% t-interval over
deck sets (tables averaged within a deck set first), money per deal, deals per episode, share
of pots won, openskill ratings; head to head paired by deck set.  The folder holds
``results.csv``/``.json``, ``head_to_head.csv``, ``games.csv`` (one row per episode),
``records.jsonl`` (every deal an L18 record), ``money.png`` and ``run.json``.  The Krypkasino
options (``--teams``, ``--independent``, the K variants) are one-line errors there.

Python: ``krypenv.eval.duplicate.evaluate(EvalConfig(agents=("random", "random"), deals=50))``
returns :class:`krypenv.eval.duplicate.Results`; :func:`krypenv.eval.bench.bench_eval` measures deals/s.
"""

from krypenv.eval.duplicate import EvalConfig, Results, evaluate

__all__ = ["EvalConfig", "Results", "evaluate"]
