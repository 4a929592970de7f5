"""Expert iteration's results: the curves of the runs and the head-to-head matches of their students, as CSVs.

    python experiments/distill_results.py curve runs/exit-2p-a runs/exit-2p-b          # per iteration
    python experiments/distill_results.py match "mlp:runs/exit-2p-a/final.npz,greedy=true" pimc --decks 1000
    krypenv exploit --agent "mlp:checkpoints/exit-2p.npz,greedy=true" --init-from checkpoints/ppo-2p.zip \
        --budget-steps 300000 --deals 2000 --seed 1 --json > abr.json
    python experiments/distill_results.py exploit abr.json ...   # approximate best responses' rows
    python experiments/distill_results.py offline checkpoints/exit-2p-wide.npz=runs/off-both-256 ...
    python experiments/distill_results.py plot
    python experiments/distill_results.py tables                 # the page's four Markdown tables

``curve`` reads each run's ``log.csv`` and ``args.json`` (:mod:`krypenv.training.distill`) and
writes one row per iteration to ``docs/research/exit-curve.csv``: the run, its seed, players, the
labels trained on so far, the hours so far (labelling, training and measuring, wall time), and
the student against the game's opponent (its per-iteration measurement: ``--eval-decks`` decks of
``--eval-seed``).  ``match A B`` plays a duplicate evaluation of two agent specs (``--game``: Krypkasino by default,
or Kungsholmskille; ``--players``, ``--decks`` decks of ``--seed``: by default 4711, a seed the docs use nowhere else)
and adds or replaces its row in ``docs/research/exit-matches.csv`` (A − B per deal, 95% interval,
seconds, date, machine).  ``exploit FILE...`` adds or replaces, per (agent, seed, budget, deals, start), the
rows of ``docs/research/exit-exploit.csv`` from what ``krypenv exploit --json`` printed (an approximate best
response's gain against the agent, :mod:`krypenv.training.exploit`), with the file's date and this machine.
``offline CHECKPOINT=OUT...`` adds or replaces the rows of ``docs/research/exit-offline.csv`` from
``experiments/distill_offline.py``'s ``OUT/result.json`` (labels, parameters, temperature, losses, its own
measurement), for the student shipped as CHECKPOINT (the same bytes as ``OUT/student.npz``, checked).
``plot`` draws ``docs/research/exit-curve.png`` from the curve CSV: the
student against its opponent by labels and by hours, one line per run.  The page
``docs/research/expert-iteration.md`` shows the tables (``tables`` prints them);
``tests/test_docs.py`` holds them to the CSVs.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CURVE = ROOT / "docs/research/exit-curve.csv"
MATCHES = ROOT / "docs/research/exit-matches.csv"
EXPLOIT = ROOT / "docs/research/exit-exploit.csv"
EXPLOIT_KEY = ("agent", "seed", "budget_steps", "deals", "init_from")
OFFLINE = ROOT / "docs/research/exit-offline.csv"


def machine() -> str:
    """This machine in a few words (:func:`krypenv.bench.machine`)."""
    from krypenv.bench import machine as info

    m = info()
    return f"{m['cpu']}, {len(os.sched_getaffinity(0))} cores"


GAMES = ("krypkasino", "kungsholmskille")  # the games whose duplicate evaluation ``match`` plays


def upsert(path: Path, new: list[dict[str, Any]], key: tuple[str, ...]) -> None:
    """Write ``new`` into the CSV at ``path``: the old rows with another ``key`` kept in order, then ``new``."""
    keys = {tuple(str(r[k]) for k in key) for r in new}
    old = list(csv.DictReader(path.open())) if path.exists() else []
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(new[0]))
        w.writeheader()
        w.writerows([r for r in old if tuple(r[k] for k in key) not in keys] + new)


def curve(runs: list[str]) -> None:
    """One row per iteration of each run (module docstring)."""
    rows = []
    for run in runs:
        path = Path(run)
        args = json.loads((path / "args.json").read_text())
        hours = 0.0
        shard_s: dict[int, float] = {}  # labelling seconds per iteration, from the shards' cards (resumes included)
        for shard in sorted((path / "labels").glob("it*.npz")):
            with np.load(shard) as z:
                card = json.loads(str(z["card"]))
            shard_s[card["iteration"]] = shard_s.get(card["iteration"], 0.0) + card["seconds"]
        for r in csv.DictReader((path / "log.csv").open()):
            it = int(r["iteration"])
            hours += (shard_s.get(it, 0.0) + sum(float(r.get(k) or 0) for k in ("train_s", "eval_s"))) / 3600
            teacher = r["teacher"].split(",")[0].replace(str(path), "RUN")
            rows.append({"run": path.name, "seed": args["seed"], "players": args["players"],
                         "iteration": it, "teacher": teacher, "labels": int(r["labels_trained"]),
                         "hours": round(hours, 2), "opponent": r.get("opponent", ""),
                         "vs_opponent": r.get("vs_opponent", ""), "ci_low": r.get("ci_low", ""),
                         "ci_high": r.get("ci_high", ""), "eval_decks": args["eval_decks"],
                         "eval_seed": args["eval_seed"]})
    with CURVE.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows: {CURVE}")


def match(a: str, b: str, players: int, decks: int, seed: int, game: str = "krypkasino") -> None:
    """A duplicate evaluation of ``a`` against ``b`` in ``game``; its row in the matches CSV."""
    if game not in GAMES:
        raise SystemExit(f"--game must be one of {', '.join(GAMES)}, got {game!r}")
    from importlib import import_module

    ev = import_module(f"krypenv.eval.{game}")
    t0 = time.time()
    res = ev.evaluate(ev.EvalConfig(agents=(a, b), players=players, deals=decks, seed=seed, records=False))
    pair = next(p for p in res.pairs if {p.a, p.b} == {a, b})
    sign = 1.0 if pair.a == a else -1.0
    lo, hi = sorted((sign * pair.diff.low, sign * pair.diff.high))
    row = {"game": game, "a": a, "b": b, "players": players, "decks": decks, "seed": seed,
           "a_minus_b": round(sign * pair.diff.mean, 4), "ci_low": round(lo, 4), "ci_high": round(hi, 4),
           "seconds": round(time.time() - t0),
           "date": time.strftime("%Y-%m-%d"), "machine": machine()}
    upsert(MATCHES, [row], ("game", "a", "b", "players", "decks", "seed"))
    print(f"{a} - {b}: {row['a_minus_b']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}] over {decks} decks "
          f"({row['seconds']} s)")


def exploit(files: list[str]) -> None:
    """Rows of the approximate best responses' gains from ``krypenv exploit --json`` outputs (module docstring)."""
    new = []
    for name in files:
        try:
            r = json.loads(Path(name).read_text())
            if not str(r["method"]).startswith("approximate"):
                raise ValueError(f"an exact result ({r['method']}), not an approximate best response")
            new.append({"agent": r["agent"], "seed": r["seed"], "budget_steps": r["budget_steps"],
                        "deals": r["deals"], "init_from": r["init_from"] or "", "gain": round(r["gain"], 4),
                        "ci_low": round(r["ci_low"], 4), "ci_high": round(r["ci_high"], 4),
                        "learner": r["learner"], "agent_value": r["agent_value"], "train_s": r["train_s"],
                        "date": time.strftime("%Y-%m-%d", time.gmtime(Path(name).stat().st_mtime)),
                        "machine": machine()})
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{name}: not the JSON of `krypenv exploit --json` ({type(e).__name__}: {e})") from None
    upsert(EXPLOIT, new, EXPLOIT_KEY)
    print(f"{len(new)} rows added or replaced: {EXPLOIT}")


def offline(pairs: list[str]) -> None:
    """Rows of offline students from ``CHECKPOINT=OUT`` pairs (module docstring)."""
    new = []
    for pair in pairs:
        ckpt, _, out = pair.partition("=")
        try:
            r = json.loads((Path(out) / "result.json").read_text())
            if Path(ckpt).read_bytes() != (Path(out) / "student.npz").read_bytes():
                raise ValueError(f"{ckpt} is not {out}/student.npz")
        except (OSError, ValueError) as e:
            raise SystemExit(f"{pair}: not CHECKPOINT=OUT of experiments/distill_offline.py ({e})") from None
        new.append({"checkpoint": ckpt, "labels": r["labels"], "parameters": r["parameters"],
                    "temperature": r["temperature"], "policy_loss": round(r["policy_loss"], 4),
                    "target_entropy": round(r["target_entropy"], 4), "train_s": r["train_s"],
                    "opponent": r["opponent"], "eval_decks": r["eval_decks"], "eval_seed": r["eval_seed"],
                    "vs_opponent": r["vs_opponent"], "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
    upsert(OFFLINE, new, ("checkpoint",))
    print(f"{len(new)} rows added or replaced: {OFFLINE}")


def offline_table() -> None:
    """The offline students' table: their fit, their own check and their matches of seed 4711 (exit-matches.csv)."""
    matches = {(r["a"], r["b"]): r for r in csv.DictReader(MATCHES.open()) if r["seed"] == "4711"}
    print("| student | T (points) | policy loss − target entropy (nats) | − opponent, own check | − `pimc`, seed 4711 "
          "| − `ppo-2p`, seed 4711 |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in csv.DictReader(OFFLINE.open()):
        spec = f"mlp:{r['checkpoint']},greedy=true"
        cells = []
        for b in ("pimc", "ppo:checkpoints/ppo-2p.zip"):
            m = matches.get((spec, b))
            cells.append(f"{_num(m['a_minus_b'])} [{_num(m['ci_low'])}, {_num(m['ci_high'])}]" if m else "")
        gap = float(r["policy_loss"]) - float(r["target_entropy"])
        print(f"| `{r['checkpoint']}` | {float(r['temperature']):g} | {gap:.3f} | {_num(r['vs_opponent'])} "
              f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}] ({int(r['eval_decks']):,} decks of seed {r['eval_seed']}) "
              f"| {cells[0]} | {cells[1]} |")


def plot() -> None:
    """exit-curve.png: the student against its opponent by labels and by hours, a line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(CURVE.open()))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), dpi=100, sharey=True)
    for run in dict.fromkeys(r["run"] for r in rows):
        mine = [r for r in rows if r["run"] == run and r["vs_opponent"]]
        y = [float(r["vs_opponent"]) for r in mine]
        lo = [float(r["ci_low"]) for r in mine]
        hi = [float(r["ci_high"]) for r in mine]
        for ax, key in ((axes[0], "labels"), (axes[1], "hours")):
            x = [float(r[key]) for r in mine]
            ax.errorbar(x, y, yerr=[[a - b for a, b in zip(y, lo)], [b - a for a, b in zip(y, hi)]], marker="o",
                        capsize=3, label=f"{run} (seed {mine[0]['seed']})")
    for ax, label in ((axes[0], "labelled decisions trained on"), (axes[1], "hours (2 cores, shared)")):
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"student − {rows[0]['opponent']} per deal\n(negative: the student better)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Expert iteration, Krypkasino: the student alone (greedy) against its opponent, 95% CI", fontsize=10)
    fig.tight_layout()
    fig.savefig(CURVE.with_suffix(".png"))
    print(CURVE.with_suffix(".png"))


def _num(x: str) -> str:
    """A figure with 2 decimals and a typographic minus."""
    return f"{float(x):.2f}".replace("-", "\u2212")


def tables() -> None:
    """The page's four tables in Markdown, from the CSVs (the rows ``tests/test_docs.py`` holds the page to)."""
    print("| run | seed | iteration | labels | hours | student − opponent | 95% CI |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in csv.DictReader(CURVE.open()):
        print(f"| `{r['run']}` | {r['seed']} | {r['iteration']} | {int(r['labels']):,} | {float(r['hours']):.2f} | "
              f"{_num(r['vs_opponent'])} | [{_num(r['ci_low'])}, {_num(r['ci_high'])}] |")
    print()
    print("| game | players | a | b | decks | seed | a − b | 95% CI |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for r in csv.DictReader(MATCHES.open()):
        print(f"| {r['game']} | {r['players']} | `{r['a']}` | `{r['b']}` | {int(r['decks']):,} | {r['seed']} | "
              f"{_num(r['a_minus_b'])} | "
              f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}] |")
    print()
    offline_table()
    print()
    print("| frozen agent | seed | learner decisions | decks | gain | 95% CI |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in csv.DictReader(EXPLOIT.open()):
        print(f"| `{r['agent']}` | {r['seed']} | {int(r['budget_steps']):,} | {int(r['deals']):,} | "
              f"{_num(r['gain'])} | [{_num(r['ci_low'])}, {_num(r['ci_high'])}] |")


def main() -> None:
    """The commands of the module docstring."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("curve")
    c.add_argument("runs", nargs="+")
    m = sub.add_parser("match")
    m.add_argument("a")
    m.add_argument("b")
    m.add_argument("--game", default="krypkasino", help="krypkasino or kungsholmskille")
    m.add_argument("--players", type=int, default=2)
    m.add_argument("--decks", type=int, default=1000)
    m.add_argument("--seed", type=int, default=4711)
    o = sub.add_parser("offline")
    o.add_argument("pairs", nargs="+", metavar="CHECKPOINT=OUT")
    e = sub.add_parser("exploit")
    e.add_argument("files", nargs="+")
    sub.add_parser("plot")
    sub.add_parser("tables")
    a = p.parse_args()
    if a.command == "curve":
        curve(a.runs)
    elif a.command == "match":
        match(a.a, a.b, a.players, a.decks, a.seed, a.game)
    elif a.command == "offline":
        offline(a.pairs)
    elif a.command == "exploit":
        exploit(a.files)
    elif a.command == "plot":
        plot()
    else:
        tables()


if __name__ == "__main__":
    sys.exit(main())
