"""Kungsholmskille's duplicate evaluation: ``krypenv eval --game kungsholmskille``, the registry's ``eval`` part.

    krypenv eval --game kungsholmskille --agents expert,timid,random --players 4 --deals D
                 [--seed S] [--max-deals M] [--seatings rotations|permutations] [--workers W]
                 [--batch B] [--ray [ADDRESS]] [--out DIR] [--no-records] [--no-progress]

**The unit is an episode**: one pot carried over deals until it goes out (walkover or
showdown) or ``--max-deals`` deals (default 50, L16: truncated, the pot belongs to nobody).
``--deals D`` counts *deck sets*: deck set ``d`` is its own seeded stream of decks, deal ``k``
of the episode taking its ``k``-th deck (:mod:`krypenv.eval.kungsholmskille.play`), so the
decks never depend on the agents' choices or random numbers.  Every table (lineups ×
seatings, :mod:`krypenv.eval.schedule`; seat 0 is forehand of the first deal) plays every deck
set, so seatings differ only by the players' choices.  Reported per agent
(:mod:`krypenv.eval.kungsholmskille.duplicate`): money per episode (higher is better) with a 95%
t-interval over deck sets, money per deal, deals per episode, share of pots won, openskill
ratings; head to head paired by deck set.

**Output folder** (:mod:`krypenv.eval.kungsholmskille.command`; default
``evals/kille-<agents>-<P>p-<D>d-s<seed>``, then ``-m<max deals>`` and ``-permutations`` when
not the defaults): ``results.csv`` / ``results.json``, ``head_to_head.csv``, ``games.csv``
(one row per episode), ``records.jsonl`` (every deal as an L18 record, episode by episode,
deal by deal; ``krypenv replay`` checks them), ``money.png`` and ``run.json``.  The Krypkasino
options (``--teams``, ``--independent``, the K variants) are one-line errors here.

Python: ``evaluate(EvalConfig(agents=("expert", "random"), players=4, deals=10))`` returns :class:`Results`.
"""

from krypenv.eval.kungsholmskille.command import OPTIONS, config_from_args, default_out, run_eval
from krypenv.eval.kungsholmskille.config import EvalConfig
from krypenv.eval.kungsholmskille.duplicate import Results, evaluate
from krypenv.eval.kungsholmskille.play import Played

__all__ = ["OPTIONS", "EvalConfig", "Played", "Results", "config_from_args", "default_out", "evaluate",
           "run_eval"]
