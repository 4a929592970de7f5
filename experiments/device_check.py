"""The GPU check of the device envs: equality with the CPU on at least 100,000 games of each game, then the benchmark.

    python experiments/device_check.py [--out DIR] [--games 100000] [--seconds 1]

Run on a machine with a GPU, numba-cuda and a CUDA build of PyTorch; it needs no network.  The first
use of each kernel compiles it (numba-cuda: a minute or two per kernel on one core).  Sections, each
timed, each failing alone (the table says which):

1. **equality**: for each game, configurations of mixed player counts and presets with built-in
   random opponents: the CUDA env (``DeviceVecEnv(device="cuda")``) and the CPU VecEnv step in
   lockstep with the same random legal actions until at least ``--games`` episodes have ended,
   every observation, mask, reward, done and terminal observation compared
   (tests/envs/device_helpers.py); then a compiled ``expert`` for the other seats, and self-play
   against the CPU backend of the device env;
2. **benchmark**: ``krypenv bench --device cuda``'s GPU rows (:mod:`krypenv.bench_device`);
3. **ppo**: the steps/s of docs/tutorials/cleanrl_ppo_device.py, end to end.

It prints a short table last and writes everything to ``DIR/device_check.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # tests.envs.device_helpers; krypenv itself is the installed package

CONFIGS = {  # game -> (players, preset) of the equality check, each at BATCH games
    "krypkasino": [{"players": 2}, {"players": 3}, {"players": 4}, {"players": 6}, {"players": 2, "preset": "tiny"},
                   {"players": 3, "preset": "small"}],
    "kungsholmskille": [{"players": 2}, {"players": 3}, {"players": 4}, {"players": 6},
                        {"players": 3, "preset": "small"}],
}
BATCH = 8192


def versions() -> dict[str, Any]:
    """The machine: GPU, driver, libraries."""
    import numba
    import numpy
    import torch

    out = {"python": platform.python_version(), "numpy": numpy.__version__, "numba": numba.__version__,
           "torch": torch.__version__, "cpus": os.cpu_count()}
    try:
        import importlib.metadata as md

        out["numba_cuda"] = md.version("numba-cuda")
    except Exception:  # noqa: BLE001
        out["numba_cuda"] = None
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        out.update(gpu=p.name, multiprocessors=p.multi_processor_count, memory_gib=round(p.total_memory / 2**30, 1),
                   cuda=torch.version.cuda)
    return out


def equality(games_needed: int, batch: int = BATCH) -> dict[str, Any]:
    """Section 1 (module docstring)."""
    from krypenv import agents
    from krypenv.games import GAMES
    from tests.envs.device_helpers import against_device, against_vecenv

    result: dict[str, Any] = {}
    for name, configs in CONFIGS.items():
        entry, device = GAMES[name].part("entry"), GAMES[name].part("device")
        episodes, steps, decisions, rows = 0, 0, 0, []
        per = -(-games_needed // len(configs))
        for k, config in enumerate(configs):
            start = time.perf_counter()
            tally = against_vecenv(entry.VecEnv(batch, seed=1000 + k, **config),
                                   device.DeviceVecEnv(batch, device="cuda", seed=1000 + k, **config),
                                   steps=100_000, seed=k, until_episodes=per)
            episodes, steps, decisions = episodes + tally.episodes, steps + tally.steps, decisions + tally.decisions
            rows.append({**config, "episodes": tally.episodes, "steps": tally.steps,
                         "seconds": round(time.perf_counter() - start, 1)})
            print(f"equal: {name} {config}: {tally.episodes} episodes, {tally.steps} steps", flush=True)
        expert = agents.load("expert", game=name)
        start = time.perf_counter()
        opp = [expert] * 1 + ["random"]
        small = max(8, batch // 4)
        t = against_vecenv(entry.VecEnv(small, players=3, opponents=opp, seed=7),
                           device.DeviceVecEnv(small, device="cuda", players=3, opponents=opp, seed=7), steps=100_000,
                           seed=9, until_episodes=max(1, games_needed // 20))
        rows.append({"players": 3, "opponents": "expert,random", "episodes": t.episodes, "steps": t.steps,
                     "seconds": round(time.perf_counter() - start, 1)})
        print(f"equal: {name} expert opponent: {t.episodes} episodes", flush=True)
        kw = {"players": 2, "opponents": "self", "seed": 11}
        t2 = against_device(device.DeviceVecEnv(small, device="cpu", **kw),
                            device.DeviceVecEnv(small, device="cuda", **kw), steps=200, seed=5)
        rows.append({"players": 2, "opponents": "self", "episodes": t2.episodes, "steps": t2.steps})
        print(f"equal: {name} self-play: {t2.episodes} episodes", flush=True)
        result[name] = {"episodes": episodes, "decisions": decisions, "configs": rows,
                        "expert_episodes": t.episodes, "self_play_episodes": t2.episodes}
    return result


def benchmark(seconds: float, batches: list[int]) -> dict[str, Any]:
    """Section 2 (module docstring), the GPU's rows (they need no CPU kernel: run while numba warms up)."""
    from krypenv.bench_device import run_device

    return run_device(batches, seconds=seconds, cpu=False)


def benchmark_cpu(seconds: float) -> dict[str, Any]:
    """Section 2's CPU twins in the same run: the engines' CPU drivers at 4096 deals, the CPU backend's env."""
    from krypenv.bench_device import env_row, players
    from krypenv.games import GAMES

    out: dict[str, Any] = {}
    for game in GAMES:
        _, cpu_rate, _ = GAMES[game].part("bench").gpu_engine_setup(_NoArrays(), 1, players(game), 1)
        out[f"{game}_cpu_engine"] = [{"batch": 4096, "players": players(game), "decisions_per_s": cpu_rate(seconds)}]
        out[f"{game}_cpu_env"] = [env_row(game, 4096, seconds, device="cpu")]
    return out


class _NoArrays:
    """Stands in for the device arrays when only a benchmark's CPU twin is wanted."""

    def empty(self, shape: Any, dtype: Any) -> None:
        """No device array."""

    def to_device(self, a: Any) -> None:
        """No device array."""


def ppo(seconds: float, envs: int = 65536) -> dict[str, Any]:
    """Section 3 (module docstring): a fixed budget of the tutorial's loop at ``envs`` games."""
    sys.path.insert(0, str(ROOT / "docs" / "tutorials"))
    import cleanrl_ppo_device as tut

    out = {}
    for game, players in (("krypkasino", 2), ("kungsholmskille", 4)):
        args = tut.Args(game=game, players=players, device="cuda", num_envs=envs, num_steps=16,
                        total_timesteps=envs * 16 * 2)
        tut.main(args)  # warm-up: two iterations (compiles nothing if the kernels came ahead)
        args.total_timesteps = int(envs * 16 * max(2, seconds * 8))
        out[game] = tut.main(args)
    return out


def main() -> int:
    """Run the sections, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "results")))
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--skip", default="", help="comma-separated sections to skip")
    parser.add_argument("--batch", type=int, default=BATCH, help="games per equality configuration")
    parser.add_argument("--bench-batches", default="1024,16384,131072,1048576")
    parser.add_argument("--ppo-envs", type=int, default=65536)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"versions": versions(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(json.dumps(report["versions"]), flush=True)
    batches = [int(b) for b in args.bench_batches.split(",")]
    warm = None
    if "warm" not in args.skip.split(","):  # CPU kernels for the equality's references, on every core meanwhile
        import subprocess

        warm = subprocess.Popen([sys.executable, str(ROOT / "experiments" / "warm_numba.py")])
    sections = (("benchmark", lambda: benchmark(args.seconds, batches)),
                ("warm", lambda: {"exit": warm.wait() if warm else None}),
                ("equality", lambda: equality(args.games, args.batch)),
                ("benchmark_cpu", lambda: benchmark_cpu(args.seconds)),
                ("ppo", lambda: ppo(args.seconds, args.ppo_envs)))
    for name, section in sections:
        if name in args.skip.split(","):
            continue
        start = time.perf_counter()
        try:
            report[name] = section()
            report[f"{name}_seconds"] = round(time.perf_counter() - start, 1)
        except Exception as e:  # noqa: BLE001  (a section fails alone; the table says so)
            report[f"{name}_error"] = f"{type(e).__name__}: {e}"[:2000]
            traceback.print_exc()
        (args.out / "device_check.json").write_text(json.dumps(report, indent=1, default=str))
    print(table(report))
    return 0 if not any(k.endswith("_error") for k in report) else 1


def table(report: dict[str, Any]) -> str:
    """The short table printed last."""
    lines = [(f"device check {report['date']} on {report['versions'].get('gpu')} "
             f"(numba-cuda {report['versions'].get('numba_cuda')}, torch {report['versions'].get('torch')})")]
    for key in ("equality", "benchmark", "benchmark_cpu", "ppo"):
        if f"{key}_error" in report:
            lines.append(f"{key}: FAILED {report[f'{key}_error'][:300]}")
    for game, r in report.get("equality", {}).items():
        lines.append(f"equal {game}: {r['episodes']:,} episodes ({r['decisions']:,} decisions) + "
                     f"{r['expert_episodes']:,} vs expert + {r['self_play_episodes']:,} self-play")
    for key, rows in {**report.get("benchmark", {}), **report.get("benchmark_cpu", {})}.items():
        if isinstance(rows, list):
            for row in rows:
                rate = row.get("decisions_per_s", row.get("steps_per_s"))
                lines.append(f"{key:28s} batch {row['batch']:>8,} {rate:>16,.0f}/s  "
                             f"regs {row.get('regs_per_thread', '-')} {row.get('device', '')}")
    for game, r in report.get("ppo", {}).items():
        lines.append(f"ppo {game}: {r['steps_per_s']:,.0f} steps/s ({r['steps']:,} steps in {r['seconds']:.0f} s)")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
