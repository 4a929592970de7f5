"""The quick start over training seeds: ``python train.py`` with its defaults, once per seed, and its closing table.

    python experiments/quickstart_seeds.py --seeds 1-7                       # train what is missing, then collect
    python experiments/quickstart_seeds.py --seeds 1-7 --collect-only        # only read the runs' results
    python experiments/quickstart_seeds.py --seeds 1-7 --collect-only --refinal 3000   # final tables again
    python experiments/quickstart_seeds.py --seeds 1-7 --out-dir runs/qs-3m -- --total-timesteps 3000000

Each seed is ``python train.py --seed S --run-name qs-sS --out-dir OUT`` (plus anything after ``--``),
run one after another in the background-safe way (a finished run, one with ``summary.json``, is not
run again).  The final evaluation of every run is the quick start's own: the learner against each
baseline in turn over ``--final-deals`` (3,000) duplicate decks of seed 2000, which no training run
sees (training plays decks of the env seed, the periodic evaluations decks of seed 1000).  Then, per
seed, the learner's margin against each baseline with
its 95% interval goes to ``--csv`` (default ``docs/results/quickstart-seeds.csv``), and the
distribution is printed: median and range of the margin against ``expert``, and whether **every**
seed's interval lies below 0 (the robustness check of the defaults; it exits 1 when one does not).
The README's headline and the results page are held to the CSV by ``tests/test_docs.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ("random", "greedy", "creeper", "expert")
ROW = re.compile(r"^\s*learner - (\w+)\s+(-?[\d.]+)\s+\[(-?[\d.]+), (-?[\d.]+)\]", re.MULTILINE)
SCORES = re.compile(r"^(\w+)\s+([\d.]+)\s+([\d.]+)$", re.MULTILINE)  # opponent, learner's score, opponent's


def seeds_of(text: str) -> list[int]:
    """``1-5,9`` -> [1, 2, 3, 4, 5, 9]."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def commit() -> str:
    """The checkout's short commit."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                          check=False).stdout.strip() or "unknown"


def collect(run: Path, seed: int) -> dict[str, object]:
    """One CSV row from a finished run's ``final_eval.txt`` and ``summary.json``."""
    table = (run / "final_eval.txt").read_text()
    summary = json.loads((run / "summary.json").read_text())
    args = json.loads((run / "args.json").read_text())
    row: dict[str, object] = {"seed": seed, "env_steps": summary["env_steps"],
                              "train_min": round(summary["train_s"] / 60, 1)}
    scores = {name: (mine, theirs) for name, mine, theirs in SCORES.findall(table)}
    row["learner_score"], row["expert_score"] = scores["expert"]
    found = {name: (mean, lo, hi) for name, mean, lo, hi in ROW.findall(table)}
    for name in BASELINES:
        row[f"vs_{name}"], row[f"{name}_low"], row[f"{name}_high"] = found[name]
    row["total_timesteps"], row["final_seed"] = args["total_timesteps"], args["final_seed"]
    row["final_deals"] = int(re.search(r"(\d+) duplicate decks each", table).group(1))
    return row


def refinal(run: Path, decks: int) -> None:
    """Evaluate a finished run's final policy again with this checkout's final table (``decks`` decks per baseline,
    the run's seed of the final evaluation) and rewrite its ``final_eval.txt``."""
    from types import SimpleNamespace

    from krypenv.agents.krypkasino.ppo import PPOAgent

    from krypenv.training.krypkasino import final_table

    args = SimpleNamespace(**{**json.loads((run / "args.json").read_text()), "final_deals": decks})
    table, _ = final_table(PPOAgent.load(str(run / "final.zip")), args)
    (run / "final_eval.txt").write_text(table + "\n")
    print(table, flush=True)


def main() -> int:
    """Train the missing seeds, collect every seed's row, write the CSV and print the check."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="1-7")
    p.add_argument("--out-dir", default="runs/quickstart")
    p.add_argument("--csv", default=str(ROOT / "docs/results/quickstart-seeds.csv"))
    p.add_argument("--collect-only", action="store_true")
    p.add_argument("--refinal", type=int, default=0, metavar="DECKS",
                   help="evaluate every finished seed's final policy again with DECKS decks per baseline first")
    p.add_argument("--machine", default="", help="the machine, for the CSV (default: what platform says)")
    p.add_argument("train_args", nargs="*", help="after --: more train.py options, the same for every seed")
    a = p.parse_args()
    runs = Path(a.out_dir)
    for seed in seeds_of(a.seeds):
        run = runs / f"qs-s{seed}"
        if a.collect_only or (run / "summary.json").exists():
            continue
        t0 = time.time()
        subprocess.run([sys.executable, str(ROOT / "train.py"), "--seed", str(seed), "--run-name", run.name,
                        "--out-dir", str(runs), *a.train_args], check=True, cwd=ROOT)
        print(f"seed {seed}: {(time.time() - t0) / 60:.1f} min", flush=True)
    for seed in seeds_of(a.seeds) if a.refinal else []:
        refinal(runs / f"qs-s{seed}", a.refinal)
    from krypenv.bench import machine as info

    machine = a.machine or f"{info()['cpu']}, {len(os.sched_getaffinity(0))} cores"
    rows = []
    for seed in seeds_of(a.seeds):
        row = collect(runs / f"qs-s{seed}", seed)
        rows.append({**row, "commit": commit(), "machine": machine, "date": time.strftime("%Y-%m-%d")})
    with open(a.csv, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    margins = [float(r["vs_expert"]) for r in rows]
    below = [r["seed"] for r in rows if float(r["expert_high"]) < 0]
    print(f"learner - expert over {len(rows)} seeds: median {statistics.median(margins):+.2f}, "
          f"range [{min(margins):+.2f}, {max(margins):+.2f}]; interval below 0 for seeds {below} "
          f"({len(below)} of {len(rows)})")
    return 0 if len(below) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
