"""The CUDA kernels without a GPU: run in numba's CUDA simulator against the CPU, and compiled to PTX for sm_90.

Both run in subprocesses (the simulator is chosen when numba.cuda is first imported, and the PTX check answers
numba-cuda's question about the current device itself); each prints what it checked.
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


def run(module: str, *args: str, sim: bool = False) -> subprocess.CompletedProcess:
    """``python -m module args`` from the repository root (in the CUDA simulator if ``sim``)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1" if sim else "0"}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)


def nvvm_available() -> bool:
    """Whether NVVM (libnvvm) loads here, which compiling PTX needs."""
    if importlib.util.find_spec("numba_cuda") is None:
        return False
    probe = ("from numba.cuda.cudadrv import nvvm; nvvm.NVVM()")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False).returncode == 0


@pytest.mark.slow
@needs_numba_cuda
def test_kernels_in_the_simulator_equal_the_cpu() -> None:
    """Every game and player count, compiled opponents, self-play, the action check and the engine kernels (module
    docstring of tests/cuda/sim_check.py) give the CPU's results at every step."""
    out = run("tests.cuda.sim_check", sim=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "all simulator checks passed" in out.stdout
    assert out.stdout.count("equal") >= 16


@pytest.mark.slow
@pytest.mark.skipif(not nvvm_available(), reason="NVVM is not installed (pip install 'krypenv[cuda]')")
def test_kernels_compile_to_ptx_for_hopper() -> None:
    """Both games' kernels, with the random policy only and with the compiled expert, compile for CUDA as they are."""
    out = run("tests.cuda.ptx_check")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert out.stdout.count("KiB of PTX") == 4
