"""Exact last-round labels at scale: a student plays 2-player Krypkasino, the endgame solver labels its last rounds.

    python experiments/endgame_labels.py checkpoints/exit-2p-endgame.npz --out runs/eg-labels --shards 64
    python experiments/endgame_labels.py checkpoints/exit-2p-endgame.npz --out runs/eg-labels --shards 8 \\
        --iteration 1            # held-out decisions (other games: the shards' seeds depend on the iteration)

Once the deck is empty, a 2-player deal is a game of perfect information, and
:func:`krypenv.agents.krypkasino.endgame.solve_batch` gives every legal action's exact value in about 0.04 ms
(docs/research/expert-iteration.md). A search teacher's label costs 10–25 ms. So the last round's labels can be made
by the million, where a teacher labels the whole game by the hundred thousand.

Each shard plays ``--games-per-shard`` games with every seat played by the student (``mlp:STUDENT``): its most
probable action, or, with probability ``--explore`` at each decision, one drawn from its policy (wider states, still
the student's own). Only the decisions of the last round with two or more legal actions are kept, labelled with the
solver's values and action (the labels' format and unit, :mod:`krypenv.training.labels`; ``played`` is the student's
action, ``by_teacher`` is false). The games' seeds are those of :func:`krypenv.training.distill.shard_seeds` for
(``--seed``, ``--iteration``, shard), so a killed run resumes with the same command and a shard already written is
kept. ``OUT/args.json`` makes the folder a run that ``experiments/distill_offline.py`` and
``experiments/fit_by_kind.py`` read.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
from krypenv.agents.krypkasino.endgame import solvable_rows, solve_batch
from krypenv.agents.krypkasino.pimc import game_vector
from krypenv.agents.mlp import blas_threads, policy_draw

from krypenv import agents
from krypenv.agent_api import check_actions
from krypenv.training import distill as D
from krypenv.training.labels import Labels, LabelSet, card_for

TEACHER = "endgame (exact, last round only)"  # the teacher named in every shard's card and in args.json


def label_shard(student: str, preset: str, seed: int, iteration: int, index: int, games: int, explore: float
                ) -> tuple[Labels, dict]:
    """Play one shard's games with the student; its last-round labels and card (module docstring)."""
    t0 = time.perf_counter()
    core = D.training_part("krypkasino").distill_core(2, preset, games)
    seeds = D.shard_seeds(seed, iteration, index, games)
    core.seed(seeds)
    core.reset()
    net = agents.load(f"mlp:{student}", game="krypkasino")
    status = np.empty(games, np.int64)
    parts: list[dict[str, np.ndarray]] = []
    with blas_threads(1, required=True):
        while True:
            envs, seats = core.pending()
            if envs.size == 0:
                break
            rows = np.asarray(envs, np.int64)
            batch = core.decisions(envs, seats)
            probs = net.action_probabilities(batch)
            u = batch.uniforms(2)  # the exploration draw, the sample
            drawn = policy_draw(probs, u[:, 1])
            played = check_actions("endgame_labels", batch, np.where(u[:, 0] < explore, drawn, probs.argmax(axis=1)))
            keep = solvable_rows(core.deals.state, rows, 2) & ((batch.mask != 0).sum(axis=1) >= 2)
            if keep.any():
                values, taught, _ = solve_batch(core.deals.state, core.choice, rows[keep],
                                                game_vector(batch.rules), batch.mask.shape[1])
                parts.append({"obs": batch.obs[keep], "mask": batch.mask[keep] != 0, "values": values,
                              "teacher": taught, "played": played[keep], "by_teacher": np.zeros(keep.sum(), bool),
                              "seat": seats[keep], "seed": np.asarray(seeds, np.int64)[envs[keep]],
                              "state": core.state[envs[keep]]})
            core._act_external(envs, played, status[:envs.size])
    if not parts:
        raise ValueError(f"shard {index} of iteration {iteration}: its {games} games reached no last-round decision "
                         "with two or more legal actions")
    labels = Labels(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})
    card = {"games": games, "seed": seed, "teacher": TEACHER, "student": student,
            "beta": 0.0, "student_play": f"greedy, explore {explore}", "seconds": round(time.perf_counter() - t0, 3)}
    return labels, card


LIMITS = {"shards": (1, 99_999), "games_per_shard": (1, 4096), "iteration": (0, 999)}  # shard names; memory


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked: SystemExit with a one-line message naming a bad option."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("student", help="an mlp checkpoint of 2-player Krypkasino (it plays every seat)")
    p.add_argument("--out", required=True, help="the run folder (labels/ and args.json)")
    p.add_argument("--shards", type=int, default=16)
    p.add_argument("--games-per-shard", type=int, default=1024)
    p.add_argument("--iteration", type=int, default=0, help="the label iteration the shards are written as")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--explore", type=float, default=0.1, help="probability of a decision drawn from the policy")
    p.add_argument("--preset", default="standard")
    a = p.parse_args(argv)
    for name, (lo, hi) in LIMITS.items():
        if not lo <= getattr(a, name) <= hi:
            raise SystemExit(f"--{name.replace('_', '-')} must be from {lo:,} to {hi:,}, got {getattr(a, name)}")
    if not 0 <= a.explore <= 1:
        raise SystemExit(f"--explore must be in [0, 1], got {a.explore}")
    if a.seed < 0:
        raise SystemExit(f"--seed must be >= 0, got {a.seed}")
    return a


def main() -> None:
    """Write the missing shards (module docstring)."""
    a = parse()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    args = D.Args(out=str(out), players=2, preset=a.preset, seed=a.seed, teacher=TEACHER,
                  init=f"mlp:{a.student}", guide_from=0)
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1) + "\n")
    core = D.training_part("krypkasino").distill_core(2, a.preset, 1)
    labels = LabelSet(out / "labels", card_for("krypkasino", 2, a.preset, core))
    labels.clean()
    t0, n = time.perf_counter(), 0
    for k in range(a.shards):
        if labels.shard_path(a.iteration, k).exists():
            continue
        lab, card = label_shard(a.student, a.preset, a.seed, a.iteration, k, a.games_per_shard, a.explore)
        labels.write(a.iteration, k, lab, card)
        n += len(lab)
        print(f"shard {k}: {len(lab):,} labels in {card['seconds']:.0f} s; {n / (time.perf_counter() - t0):.0f} "
              "labels/s so far", flush=True)


if __name__ == "__main__":
    try:
        main()
    except ValueError as exc:  # a student file that is not an mlp checkpoint, a preset that does not exist, ...
        raise SystemExit(f"endgame_labels: error: {exc}") from None
