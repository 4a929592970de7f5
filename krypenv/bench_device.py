"""``krypenv bench --device cuda``: the device envs' and engines' throughput on the GPU, beside the CPU's.

Two benchmarks per game, each a row per batch size (``--device-batches``, default 2^10, 2^14, 2^17
and 2^20 games), run after the CPU benchmarks of the same command:

* ``<game>_gpu_engine``: the engine under uniformly random legal play, one CUDA thread per deal:
  every thread deals ``deals`` deals from its own stream and plays them out (the game's
  ``engine_play`` kernel: ``play_deals_one``, also the CPU twin's unit of work).  A decision is a
  card played (Krypkasino, 2 players) or a move (Kungsholmskille, 4 players).  ``cpu_decisions_per_s``
  is the CPU twin (``play_deals_par``, every core) on 4096 deals in the same run.
* ``<game>_gpu_env``: the device env (:mod:`krypenv.envs.device`) with built-in random opponents, a
  uniform random legal action per game from its mask each step (the ``pick`` kernel), observations
  and masks left on the GPU: env steps/s, a step being one learner decision in one game (the SB3
  VecEnv's unit).  ``cpu_steps_per_s`` is the same loop on the CPU backend at 4096 games.

GPU timing follows the measuring rules of a lent GPU: untimed warm-up (compilation and loading
included), ``torch.cuda.synchronize()`` around every timed region, the median of ``repeats``
measurements.  Each row also names the kernel's registers per thread, local memory per thread and
the threads an SM can hold at once with them (what bounds occupancy; for an env whose step is several
kernels, the most registers and local memory and the fewest threads of any), and the bytes of state per game.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from krypenv.games import GAMES

__all__ = ["DEVICE_BATCHES", "engine_row", "env_row", "kernel_resources", "players", "run_device"]

DEVICE_BATCHES = (2**10, 2**14, 2**17, 2**20)


def players(game: str) -> int:
    """The table a game's GPU rows are measured at: its bench module's ``GPU_PLAYERS``."""
    return int(GAMES[game].part("bench").GPU_PLAYERS)


def _sync() -> None:
    """Wait for the GPU (nothing to wait for in the simulator)."""
    import torch

    from krypenv.envs.cuda import SIMULATOR

    if not SIMULATOR:
        torch.cuda.synchronize()


def kernel_resources(dispatcher: Any) -> dict[str, int]:
    """Registers and local memory per thread of a compiled kernel, and the threads an SM holds with them."""
    try:
        kernel = next(iter(dispatcher.overloads.values()))
        func = kernel._codelibrary.get_cufunc()
        regs, local = int(func.attrs.regs), int(func.attrs.local)
    except Exception:  # noqa: BLE001  (the simulator or an unknown driver: no attributes to report)
        return {}
    from krypenv.envs.cuda import threads_per_sm

    return {"regs_per_thread": regs, "local_bytes_per_thread": local, "threads_per_sm": threads_per_sm(regs)}


def _median_time(work: Callable[[], Any], repeats: int) -> float:
    """Median seconds of ``work`` over ``repeats`` synchronized runs, after one untimed run."""
    work()
    _sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        _sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def engine_row(game: str, batch: int, seconds: float, repeats: int = 5, cpu: bool = True) -> dict[str, Any]:
    """One ``<game>_gpu_engine`` row: random play of ``batch`` deals on the GPU, and (``cpu``) the CPU twin's rate."""
    from krypenv.envs.cuda import Arrays, grid_threads, launch
    from krypenv.rng import seed_range

    module = GAMES[game].part("cuda_kernels")
    kernel, setup = module.engine_play(), GAMES[game].part("bench").gpu_engine_setup
    arrays = Arrays()
    P = players(game)
    threads = grid_threads(batch)
    args, cpu_play, bytes_per_deal = setup(arrays, batch, P, threads)
    rng = args["rng"]
    rng.copy_to_device(seed_range(0, batch))
    decisions = args["decisions"]
    deals = 1

    def play() -> None:
        launch(kernel, threads, *args["launch"](deals))

    t = _median_time(play, 1)  # size the work to about seconds / repeats per measurement
    deals = max(1, min(64, int(seconds / repeats / max(t, 1e-6))))
    t = _median_time(play, repeats)
    made = int(arrays.tensor(decisions).sum())
    row = {"batch": batch, "players": P, "deals_per_thread": deals, "decisions_per_s": made / t,
           "deals_per_s": batch * deals / t, "bytes_per_deal": bytes_per_deal, **kernel_resources(kernel)}
    if cpu:
        row["cpu_decisions_per_s"] = cpu_play(seconds)
    return row


def env_row(game: str, batch: int, seconds: float, repeats: int = 5, device: str = "cuda",
            opponents: Any = "random") -> dict[str, Any]:
    """One ``<game>_gpu_env`` row: device-env steps/s with random legal actions picked on the device."""
    import torch

    env = GAMES[game].part("device").DeviceVecEnv(batch, device=device, players=players(game), seed=0,
                                                  opponents=opponents)
    env.reset()
    on_gpu = env.on_gpu
    u = torch.rand(batch, dtype=torch.float64, device=env._arrays.device if on_gpu else "cpu")
    actions = torch.zeros(batch, dtype=torch.int64, device=u.device)
    if on_gpu:
        from krypenv.envs import cuda_util
        from krypenv.envs.cuda import launch

        act_arr, u_arr = env._arrays.from_tensor(actions, np.int64), env._arrays.from_tensor(u, np.float64)

    def pick() -> Any:
        if not on_gpu:
            from krypenv.rng import k_pick_legal

            k_pick_legal(env.action_masks().numpy(), np.random.default_rng().random(batch), actions.numpy())
            return actions
        u.uniform_()
        launch(cuda_util.pick, env._threads, env._dev["masks"], u_arr, act_arr)
        return actions

    steps = 1

    def run() -> None:
        for _ in range(steps):
            env.step(pick())

    t = _median_time(run, 1) if on_gpu else None
    if on_gpu:
        steps = max(1, int(seconds / repeats / max(t, 1e-6)))
        t = _median_time(run, repeats)
    else:
        env.step(pick())  # warm-up: compiles what this loop runs
        start, steps_done = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            env.step(pick())
            steps_done += 1
        t, steps = (time.perf_counter() - start), steps_done
    row = {"batch": batch, "players": players(game), "steps_per_s": batch * steps / t, "device": device}
    if on_gpu:
        kernels = [kernel_resources(k) for k in env._kernels.parts.values()]
        if all(kernels):  # the most registers and local memory of the env's kernels (Krypkasino launches four)
            row.update({key: max(k[key] for k in kernels) for key in ("regs_per_thread", "local_bytes_per_thread")})
            row["threads_per_sm"] = min(k["threads_per_sm"] for k in kernels)
    return row


def run_device(batches: tuple[int, ...] | list[int] = DEVICE_BATCHES, seconds: float = 3.0,
               out: Any = None, cpu: bool = True) -> dict[str, Any]:
    """Both GPU benchmarks of every game at every batch size, and (``cpu``) the CPU twins: the engine's rate beside
    each engine row, the CPU backend's env at 4096 games."""
    import sys

    import torch

    from krypenv.envs.cuda import require_cuda

    require_cuda("krypenv bench --device cuda")
    out = sys.stdout if out is None else out
    result: dict[str, Any] = {}
    for game in GAMES:
        result[f"{game}_gpu_engine"] = rows = []
        for b in batches:
            rows.append(engine_row(game, b, seconds, cpu=cpu))
            print(f"{game}_gpu_engine " + _line(rows[-1]), file=out, flush=True)
        result[f"{game}_gpu_env"] = rows = []
        for b in batches:
            rows.append(env_row(game, b, seconds))
            print(f"{game}_gpu_env " + _line(rows[-1]), file=out, flush=True)
        if cpu:
            rows.append(env_row(game, 4096, seconds, device="cpu"))
            print(f"{game}_gpu_env " + _line(rows[-1]), file=out, flush=True)
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        result["gpu"] = {"name": props.name, "multiprocessors": props.multi_processor_count,
                         "memory_gib": round(props.total_memory / 2**30, 1), "torch": torch.__version__}
    return result


def _line(row: dict[str, Any]) -> str:
    """A row as ``key value`` pairs, rates with thousands separators."""
    def fmt(v: Any) -> str:
        return f"{v:,.0f}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k} {fmt(v)}" for k, v in row.items())
