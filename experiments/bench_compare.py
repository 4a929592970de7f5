"""``krypenv bench --json`` of two source trees, interleaved, with each figure's median and spread per tree.

    python experiments/bench_compare.py --before /tmp/krypenv-before --after . --rounds 3 --seconds 3

Each round runs the bench of ``--before`` and then of ``--after`` (alternating which goes first,
so a drift of the machine's speed during the run hits both trees alike), each in a fresh Python
whose ``krypenv`` (and ``krypenv.agents``/``krypenv.eval``, or a tree's top-level ``agents``/``eval``)
is imported from that tree.  Every numeric figure (a rate: higher is better) is printed with the
median over rounds per tree, the ratio after/before, and the spread (max/min − 1) of each tree's
rounds: the noise.  A figure counts as slower only when its ratio is below 1 by more than the
larger of the two spreads.  Warm-up (numba compiling) happens before the timed rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

FINDER = '''
import importlib.abc, importlib.util, os, sys
TREE = os.environ["KRYPENV_TREE"]
MAP = {"krypenv": "krypenv", "krypenv.agents": "agents", "krypenv.eval": "eval"}
class TreeFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        folder = MAP.get(name)
        init = os.path.join(TREE, folder or "", "__init__.py")
        if folder and os.path.exists(init):
            where = [os.path.dirname(init)]
            return importlib.util.spec_from_file_location(name, init, submodule_search_locations=where)
        return None
sys.meta_path.insert(0, TreeFinder())
sys.path.insert(0, TREE)
'''


def bench(tree: Path, seconds: float, batches: str, site: Path) -> dict[str, Any]:
    """One ``krypenv bench --json`` of ``tree`` in a fresh interpreter."""
    env = dict(os.environ, KRYPENV_TREE=str(tree), PYTHONPATH=str(site))
    code = "import sys; from krypenv.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", code, "bench", "--json", "--seconds", str(seconds),
                          "--batches", batches], cwd=tree, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def figures(result: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Every numeric rate of a bench result, flattened to ``name.key`` (batched rows keyed by their batch)."""
    flat: dict[str, float] = {}
    for key, value in result.items():
        if key == "machine":
            continue
        name = f"{prefix}{key}"
        if isinstance(value, list):
            for row in value:
                for k, v in row.items():
                    if k.endswith("_per_s") and isinstance(v, (int, float)):
                        flat[f"{name}[{row['batch']}].{k}"] = float(v)
        elif isinstance(value, dict):
            flat.update(figures(value, name + "."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and "_per_s" in name:
            flat[name] = float(value)
    return flat


def interleaved(labels: list[str], rounds: int, measure: Callable[[str], Any]) -> dict[str, list[Any]]:
    """``measure(label)`` of every label in each round, the order reversed every other round (a drift of the
    machine's speed during the run hits every label alike); each label's results in round order."""
    runs: dict[str, list[Any]] = {label: [] for label in labels}
    for r in range(rounds):
        for label in labels if r % 2 == 0 else labels[::-1]:
            runs[label].append(measure(label))
    return runs


def main() -> None:
    """Run the rounds and print the table (``--json``: the medians and spreads as one object)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--batches", default="1,256,4096")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        (site / "sitecustomize.py").write_text(FINDER)
        for tree in trees.values():  # warm-up: compile and cache every kernel of both trees, untimed
            bench(tree, 0.2, args.batches, site)
        runs = interleaved(list(trees), args.rounds,
                           lambda label: figures(bench(trees[label], args.seconds, args.batches, site)))
    rows = {}
    for name in runs["before"][0]:
        if all(name in run for label in runs for run in runs[label]):
            b = [run[name] for run in runs["before"]]
            a = [run[name] for run in runs["after"]]
            spread = max(max(b) / min(b) - 1, max(a) / min(a) - 1) if min(b) > 0 and min(a) > 0 else float("nan")
            ratio = statistics.median(a) / statistics.median(b)
            rows[name] = {"before": statistics.median(b), "after": statistics.median(a), "ratio": ratio,
                          "noise": spread, "slower": ratio < 1 - spread}
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'figure':44} {'before':>12} {'after':>12} {'after/before':>12} {'noise':>7}  verdict")
    for name, row in rows.items():
        verdict = "SLOWER" if row["slower"] else "same or faster"
        print(f"{name:44} {row['before']:12.4g} {row['after']:12.4g} {row['ratio']:12.2f} {row['noise']:7.0%}  "
              f"{verdict}")


if __name__ == "__main__":
    main()
