"""Labels per second of expert iteration's teachers: one shard each, here on all cores or on Ray.

    python experiments/label_speed.py                                    # the default teachers, 2 players
    python experiments/label_speed.py --teachers pimc "pimc:samples=256,z=1" --games 64
    python experiments/label_speed.py --game kungsholmskille --players 4 --teachers pimc --games 16
    python experiments/label_speed.py --ray ""                            # the same shards as Ray tasks

Each teacher labels one shard of ``--games`` games (:func:`krypenv.training.distill.label_shard`,
the games of shard 1 of iteration 0, seed 1) after a small warm-up shard (numba's cache loaded,
first calls made), with ``--student`` playing (``--beta`` mixing) when given.  Printed per
teacher: labels, wall seconds, labels per second, and labels per CPU second of this process
(``time.process_time``: what the cores did for it; with Ray, the driver's only, so that column is
left out).  The machine should be otherwise idle for the wall figures; ``uptime``'s load is
printed first and last so that a run beside other work is recognisable.
"""

from __future__ import annotations

import argparse
import math
import os
import time

from krypenv.training.distill import LabelJob, label_shard


def main() -> None:
    """Label one shard per teacher and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="krypkasino")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--teachers", nargs="+", default=["pimc", "pimc:samples=256,z=1"])
    p.add_argument("--games", type=int, default=64)
    p.add_argument("--student", default="", help="an mlp file that plays (DAgger) beside the teacher")
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--ray", default=None, help="label on Ray at this address ('' for a local Ray)")
    a = p.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}; {len(os.sched_getaffinity(0))} cores", flush=True)
    print("| teacher | games | labels | wall s | labels/s | labels per CPU s |\n|---|---:|---:|---:|---:|---:|")
    for spec in a.teachers:
        def job(index: int, games: int, spec: str = spec) -> LabelJob:
            return LabelJob(a.game, a.players, "standard", 1, 0, index, games, spec, a.student, a.beta)

        if a.ray is not None:
            from krypenv.eval.ray_pool import RayPool

            from krypenv.training.distill import _ray_init

            pool = RayPool(a.ray, _ray_init, ())
            list(pool.imap(label_shard, [job(0, 2)]))
            t0 = time.perf_counter()
            parts = list(pool.imap(label_shard, [job(1 + k, max(1, a.games // 8)) for k in range(8)]))
            wall = time.perf_counter() - t0
            n, cpu = sum(len(lab) for lab, _ in parts), float("nan")
        else:
            label_shard(job(0, 2))
            t0, c0 = time.perf_counter(), time.process_time()
            lab, _ = label_shard(job(1, a.games))
            wall, cpu, n = time.perf_counter() - t0, time.process_time() - c0, len(lab)
        print(f"| `{spec}` | {a.games} | {n:,} | {wall:.1f} | {n / wall:,.0f} | "
              f"{'—' if math.isnan(cpu) else f'{n / cpu:,.0f}'} |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
