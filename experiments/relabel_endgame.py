"""A 2-player Krypkasino label set with its endgame labels made exact: the solver's values where the deck is empty.

    python experiments/relabel_endgame.py runs/exit-2p-champ --out runs/exit-2p-champ-exact

Copies ``RUN/args.json`` and every shard of ``RUN/labels`` to ``OUT``. In each label whose deal has an empty deck
(:func:`krypenv.agents.krypkasino.endgame.solvable`, computed from the stored state row), the teacher's values are
replaced by the exact ones of :func:`krypenv.agents.krypkasino.endgame.solve` (minus the mover's final score after
the best move each action leads to: the labels' unit, :mod:`krypenv.training.labels`) and the teacher's action by the
solver's. Every other array and label is copied unchanged. Each shard's card gets ``"endgame": "exact"`` and the
number of labels changed. A shard already in ``OUT`` is kept, so a killed run resumes. Then train on ``OUT`` with
``experiments/distill_offline.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
from krypenv.agents.krypkasino import endgame as E
from krypenv.agents.krypkasino.pimc import game_vector

from krypenv.krypkasino.config import C_E0
from krypenv.training.common import training_part
from krypenv.training.labels import Labels, LabelSet


def relabel(labels: Labels, game: np.ndarray, choice_at: int) -> tuple[Labels, int]:
    """(the labels with exact values and actions at the solvable rows, how many rows changed)."""
    st = np.ascontiguousarray(labels.state)
    rows = np.flatnonzero(E.solvable_rows(st, np.arange(len(labels), dtype=np.int64), int(game[0])))
    values, teacher = labels.values.copy(), labels.teacher.copy()
    values[rows], teacher[rows], _ = E.solve_batch(st, st[:, choice_at:choice_at + 53], rows, game, values.shape[1])
    return Labels(**{**labels.__dict__, "values": values, "teacher": teacher}), len(rows)


def main() -> None:
    """Relabel every shard of a run (module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="an expert-iteration run folder of 2-player Krypkasino (its labels/ and args.json)")
    p.add_argument("--out", required=True, help="the new run folder")
    a = p.parse_args()
    run, out = Path(a.run), Path(a.out)
    args = json.loads((run / "args.json").read_text())
    if args["game"] != "krypkasino" or int(args["players"]) != 2:
        raise SystemExit(f"{run}: labels of {args['game']} with {args['players']} players; the endgame is solved for "
                         "2-player Krypkasino only")
    src = LabelSet(run / "labels")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run / "args.json", out / "args.json")
    dst = LabelSet(out / "labels", src.card)
    dst.clean()
    core = training_part("krypkasino").distill_core(2, args["preset"], 1)
    game, choice_at = game_vector(core.rules), int(core.packed[C_E0])
    t0, done, changed = time.time(), 0, 0
    for path in src.shards():
        it, index = int(path.name[2:5]), int(path.name[6:11])
        if dst.shard_path(it, index).exists():
            continue
        labels, card = src.read(path)
        new, n = relabel(labels, game, choice_at)
        dst.write(it, index, new, {**card, "endgame": "exact", "endgame_labels": n})
        done, changed = done + len(labels), changed + n
        print(f"{path.name}: {n} of {len(labels)} labels exact ({time.time() - t0:.0f} s)", flush=True)
    print(json.dumps({"run": str(run), "out": str(out), "labels": done, "changed": changed,
                      "seconds": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
