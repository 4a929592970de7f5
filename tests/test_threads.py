"""torch's thread setting holds beside numba's parallel kernels (krypenv.threads).

numba's OpenMP layer resets the shared OpenMP runtime's thread count when it starts; each case runs in a fresh
process (the layer starts once per process): a torch operation, then a numba parallel kernel, then torch's threads.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

SCRIPT = """
import sys
import numpy as np, numba, torch
from numba import njit, prange
from krypenv.threads import set_torch_threads

@njit(parallel=True)
def total(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i]
    return s

n, how = int(sys.argv[1]), sys.argv[2]
(set_torch_threads if how == "krypenv" else torch.set_num_threads)(n)
a = torch.randn(256, 256)
(a @ a).sum()  # torch's OpenMP pool in use
total(np.ones(1000))  # numba's layer starts here unless it already has
print(torch.get_num_threads(), numba.get_num_threads())
"""


def threads_after(n: int, how: str) -> tuple[int, int]:
    """(torch's threads, numba's threads) after the sequence above in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS")}
    env.update(NUMBA_NUM_THREADS="2", NUMBA_THREADING_LAYER="omp")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(n), how], env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    torch_threads, numba_threads = out.stdout.split()
    return int(torch_threads), int(numba_threads)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="numba's layer needs 2 threads to reset torch's")
@pytest.mark.parametrize("n", [1, 3])
def test_set_torch_threads_holds_after_numbas_layer_starts(n: int) -> None:
    """With set_torch_threads, torch keeps ``n`` threads; numba keeps its own 2."""
    assert threads_after(n, "krypenv") == (n, 2)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="numba's layer needs 2 threads to reset torch's")
def test_the_hazard_is_real() -> None:
    """The plain torch call is undone by numba's layer (what set_torch_threads is for; if torch or numba stop doing
    this, the helper is still right, and this test says the hazard is gone)."""
    assert threads_after(1, "torch") == (2, 2)


def test_krypenv_sets_torchs_threads_only_through_the_helper() -> None:
    """No module of the package, its agents, its evaluation, its experiments or train.py calls torch's setter
    directly."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    dirs = ("krypenv", "agents", "eval", "experiments")
    files = [root / "train.py", *(p for d in dirs for p in (root / d).rglob("*.py"))]
    direct = re.compile(r"(torch|th|\])\.set_num_threads\(|\[\"torch\"\]\.set_num_threads")
    offenders = [str(p.relative_to(root)) for p in files if p.name != "threads.py" and direct.search(p.read_text())]
    assert len(files) > 50 and offenders == []
