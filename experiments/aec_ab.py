"""Steps/s of both games' AEC envs in two source trees, interleaved rounds, one core: a quick before/after.

    python experiments/aec_ab.py --before /tmp/krypenv-before --after . --rounds 5 --seconds 3

Each round runs :func:`krypenv.bench.aec_row` (the loop of ``krypenv bench``'s ``aec`` and ``kille_aec`` rows:
``env.last()``, a uniform random legal action from the mask, ``env.step``) of each tree in a fresh interpreter
whose ``krypenv`` is that tree's, the order alternating between rounds so that a drift of the machine's speed hits
both alike.  Prints each game's median steps/s per tree, after/before and each tree's spread (max/min − 1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compare import interleaved

CODE = ("import sys; from krypenv.bench import aec_row; game, seconds, players = sys.argv[1], float(sys.argv[2]), "
        "int(sys.argv[3]); print(aec_row(game, seconds, players=players)['steps_per_s'])")
TABLES = {"krypkasino": 3, "kungsholmskille": 4}  # the players of the bench rows aec and kille_aec


def rate(tree: Path, game: str, seconds: float) -> float:
    """One measurement of ``game``'s AEC env in ``tree``, in a fresh interpreter on one numba thread."""
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CODE, game, str(seconds), str(TABLES[game])], env=env, cwd=tree,
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for game in TABLES:
        runs = interleaved(list(trees), args.rounds, lambda label, game=game: rate(trees[label], game, args.seconds))
        b, a = (statistics.median(runs[k]) for k in ("before", "after"))
        spread = {k: max(v) / min(v) - 1 for k, v in runs.items()}
        print(f"{game:16} before {b:10,.0f}  after {a:10,.0f} steps/s  after/before {a / b:.3f}  "
              f"spread before {spread['before']:.0%} after {spread['after']:.0%}", flush=True)


if __name__ == "__main__":
    main()
