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


WAITING = """
import time
import numpy as np
from numba import cuda
from numba.cuda.simulator.kernel import BlockThread
from krypenv.envs import cuda as C

polls = [0]
spinning = BlockThread.is_alive

def counted(thread):
    polls[0] += 1
    return spinning(thread)

BlockThread.is_alive = counted  # the launch's waiting wraps this one, and puts it back after

@cuda.jit
def slow(out):
    if cuda.threadIdx.x == 0:
        time.sleep(0.3)  # the simulator runs a kernel's body as Python: one thread works while the manager polls
    out[cuda.threadIdx.x] = 1

out = np.zeros(4, np.int64)
C.launch(slow, 3, out)
print("ran", out.tolist(), "polls", polls[0], "restored", BlockThread.is_alive is counted)

@cuda.jit
def neighbours(out):
    i = cuda.threadIdx.x
    out[0, i] = i + 1
    cuda.syncthreads()  # every thread's write is seen after the barrier
    out[1, i] = out[0, (i + 1) % 5]

out = np.zeros((2, 5), np.int64)
C.launch(neighbours, 4, out)
print("synced", out[1].tolist())

@cuda.jit
def fails(out):
    if cuda.threadIdx.x == 2:
        raise ValueError("planted")
    out[cuda.threadIdx.x] = 1

try:
    C.launch(fails, 3, np.zeros(4, np.int64))
except ValueError as e:
    print("raised", e)
print("restored", BlockThread.is_alive is counted)
"""


@needs_numba_cuda
def test_the_simulator_waits_on_working_threads_with_the_same_results() -> None:
    """A launch makes numba-cuda's block manager wait on each thread before polling it (a thread working 0.3 s is
    polled a few hundred times at most, not in a busy loop: hundreds of thousands), and only for the launch; threads
    still meet at ``syncthreads`` and a thread's exception still ends the launch with its message."""
    out = run("-c", WAITING, sim=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n")
    ran = lines[0].split()
    assert ran[:5] == ["ran", "[1,", "1,", "1,", "1]"] and ran[-2:] == ["restored", "True"], lines[0]
    assert int(ran[6]) <= 5000, lines[0]  # a round waits 0.5 ms on the working thread: ~600; spinning, ~500,000
    assert lines[1] == "synced [2, 3, 4, 5, 1]"
    assert lines[2] == "raised tid=[2, 0, 0] ctaid=[0, 0, 0]: planted"
    assert lines[3] == "restored True"
