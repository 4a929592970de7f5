"""Every CUDA kernel's registers, stack and spills on Hopper, measured without a GPU: ``python -m krypenv.eval.ptxas``.

A GPU thread's registers decide how many threads an SM holds at once (65,536 registers per SM, at most
2,048 threads: 32 registers per thread fill it, 128 leave 512 threads, 255 only 256); a value that
finds no register is *spilled* to local memory (slow, off-chip).  Both are fixed when the kernel is
assembled, before it runs, so they are measured here on any machine:

1. numba-cuda compiles the kernel to PTX on the CPU (typing, lowering, NVVM), exactly as on first
   launch on an H100 or H200: for compute capability (9, 0, "a") (numba-cuda 0.30 adds the "a" from
   9.0 on), with NVVM's ``-fma=0`` (:func:`krypenv.envs.cuda.no_fma`) and the kernel's own
   ``max_registers``;
2. ``ptxas -v -arch=sm_90a`` assembles it (the ``nvidia-cuda-nvcc`` wheel, ``pip install
   "krypenv[ptxas]"``; on a GPU machine nvJitLink, the same assembler as a library, does this step on
   the host's CPU and the driver loads the result) and reports, per kernel, its registers, its stack
   frame (local arrays and spills) and the bytes spilled.

Each kernel has a stated budget (:data:`KERNELS`: registers, spilled bytes); tests/cuda/test_registers.py
fails when one is exceeded.  ``python -m krypenv.eval.ptxas [--json] [NAME ...]`` prints every
kernel's figures and the seconds each stage took (the PTX stage and ptxas; first use on a GPU adds
the driver's load).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import re
import subprocess
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CC", "KERNELS", "Kernel", "Resources", "assemble", "compile_ptx", "measure", "ptxas_path"]

CC = (9, 0, "a")  # the target numba-cuda compiles for on an H100/H200 (CUDACodeLibrary._ensure_cc)
ARCH = "sm_90a"


@dataclass(frozen=True)
class Resources:
    """What ptxas reports for a kernel's entry function."""

    registers: int
    stack_bytes: int  # stack frame: local arrays and spill slots
    spill_stores: int  # bytes
    spill_loads: int  # bytes
    seconds: float  # ptxas's wall time

    @property
    def spilled(self) -> int:
        """Spill traffic in bytes (stores + loads): zero means every value found a register."""
        return self.spill_stores + self.spill_loads

    @property
    def threads_per_sm(self) -> int:
        """Threads one SM holds at once with these registers (:func:`krypenv.envs.cuda.threads_per_sm`)."""
        from krypenv.envs.cuda import threads_per_sm

        return threads_per_sm(self.registers)


@dataclass(frozen=True)
class Kernel:
    """A kernel to measure: how to get it and its argument types, and its budget."""

    game: str | None
    what: str  # "env" (the device env's kernels), "engine" (the engine benchmark's), "search" (pimc's) or "util"
    policy: str | None  # the built-in policy compiled into an env kernel (an agent spec), or None
    part: str | None  # which of the env's kernels (a name of its EnvKernels.parts), or None
    registers: int  # budget: most registers per thread
    spilled: int = 0  # budget: most spilled bytes (stores + loads)


def _kernels() -> dict[str, Kernel]:
    """Every kernel with its budget: each game's (its ``bench`` part's ``REGISTER_BUDGETS``), then cuda_util's."""
    from krypenv.games import GAMES

    kernels = {f"{game}.{what}": Kernel(game, what.split(".")[0], policy, part, registers, spilled)
               for game in GAMES
               for what, (policy, part, registers, spilled) in GAMES[game].part("bench").REGISTER_BUDGETS.items()}
    return {**kernels, "util.check": Kernel(None, "util", "check", None, 32),
            "util.pick": Kernel(None, "util", "pick", None, 32)}


KERNELS: dict[str, Kernel] = _kernels()  # the budgets: what the kernels use today (ptxas 13.5, 2026-11-27)


def ptxas_path() -> str | None:
    """The ptxas of the ``nvidia-cuda-nvcc`` wheel (the version numba-cuda's NVVM writes PTX for), or None."""
    try:
        dist = importlib.metadata.distribution("nvidia-cuda-nvcc")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == "ptxas":
            path = Path(dist.locate_file(f))
            return str(path) if path.exists() else None
    return None


class HostArrays:
    """Host stand-ins for :class:`krypenv.envs.cuda.Arrays`: arrays of the device arrays' dtypes and layouts (the
    benchmarks' setups build their launch arguments from these, and the signature is read off them)."""

    device = "cpu"

    def empty(self, shape: Any, dtype: Any) -> np.ndarray:
        """A column-major host array."""
        return np.zeros(shape, dtype, order="F")

    def to_device(self, a: np.ndarray) -> np.ndarray:
        """A column-major copy."""
        return np.asfortranarray(a)


def _types(args: list[Any]) -> Any:
    """numba's signature of a kernel launched with host stand-ins of ``args`` (2-D arrays column-major)."""
    from numba import typeof
    from numba.core import types as nt

    return nt.void(*[typeof(np.asfortranarray(a) if isinstance(a, np.ndarray) and a.ndim >= 2 else a)
                     for a in args])


def env_arguments(env: Any, policy: Any) -> list[Any]:
    """Host stand-ins of the arguments a device env passes its kernel (``DeviceVecEnv._run``), from a CPU env."""
    b, P = env._buf, env.players
    ki = len(policy.iparams) if policy else 1
    kf = len(policy.fparams) if policy else 1
    return [0, *env.core._arrays(), b["base"], b["active"], b["actions"], False, 4,
            b["status"], b["act_status"], b["rew"], b["over"], b["final"], b["obs"], b["masks"], b["seats"],
            b["term_obs"], b["term_masks"], np.zeros(P, np.int64), np.zeros((P, ki), np.int64), np.zeros((P, kf)),
            env._gx()]


def kernel_and_signature(name: str) -> tuple[Any, Any]:
    """The dispatcher of kernel ``name`` (:data:`KERNELS`) and its signature as the env or benchmark launches it."""
    spec = KERNELS[name]
    if spec.what == "util":
        from krypenv.envs import cuda_util

        masks, n = np.zeros((4, 8), np.int8, order="F"), np.zeros(4, np.int64)
        args = [masks, n, np.zeros(1, np.int64)] if spec.policy == "check" else [masks, np.zeros(4), n]
        return getattr(cuda_util, spec.policy), _types(args)
    if spec.what == "search":
        from krypenv.agents.krypkasino import pimc, pimc_cuda
        from numba import typeof
        from numba.core import types as nt

        from krypenv.krypkasino.rules import Rules

        agent = pimc.PIMCAgent()
        args = pimc_cuda.example_args(pimc.game_vector(Rules(players=2)), agent.opts, agent.z, agent.weights,
                                      agent.later_kinds, agent.later_sizes)
        return pimc_cuda.values_kernel(pimc.action_values), nt.void(*[typeof(a) for a in args])
    from krypenv import agents
    from krypenv.games import GAMES

    device, module = GAMES[spec.game].part("device"), GAMES[spec.game].part("cuda_kernels")
    if spec.what == "engine":
        bench = GAMES[spec.game].part("bench")
        launch = bench.gpu_engine_setup(HostArrays(), 4, bench.GPU_PLAYERS, 4)[0]["launch"]
        return module.engine_play(), _types(list(launch(1)))
    env = device.DeviceVecEnv(2, device="cpu")
    policy = None if spec.policy is None else agents.load(spec.policy, game=spec.game).device_policy(env.core.rules)
    kernels = module.build(policy.build_key if policy else None)
    return kernels.parts[spec.part], _types(env_arguments(env, policy))


@contextlib.contextmanager
def _hopper() -> Iterator[None]:
    """numba-cuda asks the current device for its compute capability when a kernel's callees compile: answer 9.0."""
    from numba.cuda import dispatcher

    original = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC[:2])
    try:
        yield
    finally:
        dispatcher.get_current_device = original


def compile_ptx(name: str) -> tuple[str, float]:
    """Kernel ``name``'s PTX for Hopper as numba-cuda makes it on first launch, and the seconds it took."""
    from numba import cuda

    from krypenv.envs.cuda import no_fma

    kernel, sig = kernel_and_signature(name)
    start = time.perf_counter()
    with _hopper(), no_fma():
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=CC)
    return ptx, time.perf_counter() - start


_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)'")
_FRAME = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, "
                    r"(?P<loads>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<regs>\d+) registers")


def parse(log: str) -> Resources:
    """The entry function's figures from ``ptxas -v`` output, with the spills of every function it calls added (a
    non-inlined device function spills in its own frame, on the same thread's local memory)."""
    lines = log.splitlines()
    entry = next((k for k, line in enumerate(lines) if _ENTRY.search(line)), None)
    if entry is None:
        raise ValueError(f"ptxas -v reported no entry function:\n{log[-2000:]}")
    regs = next((int(m["regs"]) for line in lines[entry:] if (m := _USED.search(line))), None)
    frames = [m for line in lines if (m := _FRAME.search(line))]
    if regs is None or not frames:
        raise ValueError(f"ptxas -v reported no registers or stack frame:\n{log[-2000:]}")
    first = next(m for line in lines[entry:] if (m := _FRAME.search(line)))
    return Resources(registers=regs, stack_bytes=int(first["stack"]),
                     spill_stores=sum(int(m["stores"]) for m in frames),
                     spill_loads=sum(int(m["loads"]) for m in frames), seconds=0.0)


def assemble(ptx: str, max_registers: int | None = None, ptxas: str | None = None) -> Resources:
    """``ptxas -v`` on ``ptx`` for sm_90a (with ``-maxrregcount`` when the kernel sets ``max_registers``)."""
    ptxas = ptxas or ptxas_path()
    if ptxas is None:
        raise FileNotFoundError("ptxas is not installed: pip install 'krypenv[ptxas]' (the nvidia-cuda-nvcc wheel)")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        cmd = [ptxas, "-v", f"-arch={ARCH}", str(src), "-o", str(Path(tmp) / "kernel.cubin")]
        if max_registers:
            cmd.insert(1, f"-maxrregcount={max_registers}")
        start = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"ptxas failed ({out.returncode}): {out.stderr[-2000:]}")
    r = parse(out.stdout + out.stderr)
    return Resources(r.registers, r.stack_bytes, r.spill_stores, r.spill_loads, seconds)


def measure(name: str, ptx_of: Callable[[str], tuple[str, float]] = compile_ptx,
            max_registers: int | None = None) -> dict[str, Any]:
    """One kernel's row: its resources, budget and the seconds of each stage (assembled with ``-maxrregcount`` =
    ``max_registers`` if given, else the kernel's own ``max_registers``, if any)."""
    spec = KERNELS[name]
    ptx, ptx_seconds = ptx_of(name)
    kernel, _ = kernel_and_signature(name)
    r = assemble(ptx, max_registers or kernel.targetoptions.get("max_registers"))
    return {"kernel": name, "registers": r.registers, "stack_bytes": r.stack_bytes, "spill_stores": r.spill_stores,
            "spill_loads": r.spill_loads, "threads_per_sm": r.threads_per_sm, "budget_registers": spec.registers,
            "budget_spilled": spec.spilled, "ptx_kib": len(ptx) // 1024, "ptx_seconds": round(ptx_seconds, 2),
            "ptxas_seconds": round(r.seconds, 2), "within_budget": over_budget(name, r) is None}


def over_budget(name: str, r: Resources) -> str | None:
    """Why kernel ``name`` exceeds its budget, or None."""
    spec = KERNELS[name]
    if r.registers > spec.registers:
        return f"{name}: {r.registers} registers > budget {spec.registers}"
    if r.spilled > spec.spilled:
        return f"{name}: {r.spilled} bytes spilled > budget {spec.spilled}"
    return None


def main(argv: list[str] | None = None) -> int:
    """Print every kernel's row (or ``--json``); exit status 1 if a kernel is over its budget."""
    parser = argparse.ArgumentParser(prog="python -m krypenv.eval.ptxas", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"kernels (default: all of {', '.join(KERNELS)})")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--max-registers", type=int, default=None, metavar="N",
                        help="assemble with -maxrregcount=N (what a register cap would cost in spills)")
    args = parser.parse_args(argv)
    bad = [n for n in args.names if n not in KERNELS]
    if bad:
        parser.error(f"unknown kernel {bad[0]!r}; known: {', '.join(KERNELS)}")
    rows = []
    if not args.json:
        print(f"{'kernel':28} {'regs':>5} {'stack B':>8} {'spill st/ld B':>14} {'thr/SM':>7} {'budget':>10} "
              f"{'PTX s':>6} {'ptxas s':>7}")
    for name in args.names or list(KERNELS):
        row = measure(name, max_registers=args.max_registers)
        rows.append(row)
        if not args.json:
            print(f"{name:28} {row['registers']:5d} {row['stack_bytes']:8d} "
                  f"{row['spill_stores']:6d}/{row['spill_loads']:<7d} {row['threads_per_sm']:7d} "
                  f"{row['budget_registers']:5d}/{row['budget_spilled']:<4d} {row['ptx_seconds']:6.1f} "
                  f"{row['ptxas_seconds']:7.1f}{'' if row['within_budget'] else '  OVER BUDGET'}", flush=True)
    if args.json:
        print(json.dumps({"arch": ARCH, "ptxas": ptxas_path(), "kernels": rows}, indent=1))
    return 0 if all(r["within_budget"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
