"""torch's CPU threads, set so that they hold beside numba's parallel kernels.

numba's OpenMP threading layer starts at the first parallel kernel (or the first
``numba.get_num_threads()``) and sets the OpenMP runtime's thread count to numba's own.  torch
shares that runtime (libgomp), so a ``torch.set_num_threads(n)`` made before it, once torch has
run a parallel operation, is silently undone.  Measured on 2 cores: ``torch.set_num_threads(1)``,
a matrix product, a numba parallel kernel, then ``torch.get_num_threads() == 2``.  A training
run's float sums then depended on whether its first numba kernel ran before or after torch's
first operation (docs/results/krypkasino-training.md, "Machines").  :func:`set_torch_threads`
starts numba's layer first, so the setting holds; every torch thread setting of krypenv goes
through it.
"""

from __future__ import annotations

__all__ = ["set_torch_threads"]


def set_torch_threads(threads: int) -> None:
    """torch's intra-op threads set to ``threads`` after numba's threading layer has started (so that they hold)."""
    import numba
    import torch

    numba.get_num_threads()  # starts numba's threading layer, which sets OpenMP's thread count once
    torch.set_num_threads(threads)
