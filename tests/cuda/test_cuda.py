"""The CUDA kernels without a GPU: run in numba's CUDA simulator against the CPU (in a subprocess: the simulator is
chosen when numba.cuda is first imported).  That they compile for Hopper, and within their registers, is
tests/cuda/test_registers.py's.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
needs_numba_cuda = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                      reason="numba-cuda is not installed (pip install 'krypenv[cuda]')")


def run(*args: str, sim: bool = False, timeout: float = 1800) -> subprocess.CompletedProcess:
    """``python args`` from the repository root (in the CUDA simulator if ``sim``), its output captured."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1" if sim else "0"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.mark.slow
@needs_numba_cuda
def test_kernels_in_the_simulator_equal_the_cpu() -> None:
    """Every game and player count, compiled opponents, self-play, the action check and the engine kernels (module
    docstring of tests/cuda/sim_check.py) give the CPU's results at every step."""
    out = run("-m", "tests.cuda.sim_check", sim=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "all simulator checks passed" in out.stdout
    assert out.stdout.count("equal") >= 16


LAUNCH_COUNT = """
import numpy as np
from numba import cuda
from krypenv.envs import cuda as C

@cuda.jit
def count(out):
    cuda.atomic.add(out, 0, 1)

for threads in (1, 3, 127, 128, 200):
    out = np.zeros(1, np.int64)
    C.launch(count, threads, out)
    print(threads, int(out[0]))
"""


@needs_numba_cuda
def test_a_simulated_launch_starts_the_threads_asked_for_and_one_idle() -> None:
    """In the simulator every CUDA thread is a Python thread: a launch starts the threads asked for and one more (the
    kernels' ``t >= g`` guard stays exercised), in blocks of at most 128; not a whole block per launch."""
    out = run("-c", LAUNCH_COUNT, sim=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    started = dict(tuple(map(int, line.split())) for line in out.stdout.split("\n") if line)
    assert started == {1: 2, 3: 4, 127: 128, 128: 256, 200: 256}
