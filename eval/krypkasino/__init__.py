"""Krypkasino's duplicate evaluation: ``krypenv eval [--game krypkasino]``, the registry's ``eval`` part.

    krypenv eval --agents expert,greedy[,...] [--players N] [--deals D] [--seed S] [--teams T]
                 [--seatings rotations|permutations] [--independent] [--workers W] [--batch B]
                 [--ray [ADDRESS]] [--out DIR] [--no-records] [--no-progress]
                 [--two-player-deal 6+4|5+6] [--set-aside court|spades] [--last-capture-point]
                 [--preset standard|tiny|small]

**Duplicate format.** ``--deals D`` decks are shuffled (default 100; deck ``d`` depends only
on ``--seed`` and ``d``), and every deck is played at every *table*: every seating of every
lineup (:mod:`krypenv.eval.schedule`), so each agent meets the same cards from every seat and
the luck of the deal cancels.  In all, D × tables deals are played.  With ``--teams`` an agent
plays all seats of a team (``--teams 2``: seats alternate between two teams, 4 or 6 players;
``--teams 3``: 6 players in three teams; or explicit seat lists ``0,2/1,3``).

**Statistics** (:mod:`krypenv.eval.krypkasino.duplicate` on :mod:`krypenv.eval.stats`): per agent
the mean score per deal (per seat, or team with teams; lower is better) with a 95% Student-t
interval over decks, the share of deals won (lowest score at the table, ties shared), tabbes
taken and set up per deal (a tabbe by the seat to the left is set up, K14), and openskill
Plackett–Luce ratings updated per deal in game order; per pair of agents that met, the
difference of their scores with a 95% interval paired by deck.  ``--independent`` also plays
the same tables with a fresh deck for every deal and reports, per pair, the standard error of
the difference both ways and the variance reduction factor (independent variance / duplicate
variance at the same number of deals).

**Output folder** (``--out``, default ``evals/<agents>-<P>p-<D>d-s<seed>``, then a tag per
non-default variant: ``-tiny`` / ``-small`` for ``--preset`` (the deck and deal, RULES.md K22;
shipped checkpoints and ``champion`` play only ``standard``), ``-teams02+13``, ``-deal5+6``,
``-aside-spades``, ``-lastpoint``, ``-permutations``, ``-independent``; :mod:`krypenv.eval.krypkasino.command`):
``results.csv`` / ``results.json`` (the table, head to head and configuration),
``head_to_head.csv``, ``games.csv`` (per deal: deck, table, agents, seat scores and tabbes, in
the order of the records), ``records.jsonl`` (every deal as a game record that ``krypenv
replay`` checks; ``--no-records`` skips them), ``scores.png`` (means with 95% intervals),
``run.json`` (the command line, the full configuration, time and deals/s), and with
``--independent`` ``games-independent.csv`` and ``records-independent.jsonl``.

Python: ``evaluate(EvalConfig(agents=("random", "random"), deals=50))`` returns :class:`Results`.
"""

from krypenv.eval.krypkasino.command import OPTIONS, config_from_args, default_out, run_eval
from krypenv.eval.krypkasino.config import EvalConfig
from krypenv.eval.krypkasino.duplicate import Results, evaluate
from krypenv.eval.krypkasino.play import Played

BENCH_AGENTS = ("random", "greedy", "creeper", "expert")  # the cheap baselines of ``krypenv bench``'s eval key

__all__ = ["BENCH_AGENTS", "OPTIONS", "EvalConfig", "Played", "Results", "config_from_args", "default_out", "evaluate",
           "run_eval"]
