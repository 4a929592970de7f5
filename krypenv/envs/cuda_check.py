"""The device envs' check of ``illegal="raise"`` on the GPU (imported only where numba-cuda is installed)."""

from __future__ import annotations

from typing import Any

from numba import cuda  # numba-cuda (the simulator swaps this module-level name)

from krypenv.envs.cuda import device_identity

__all__ = ["check"]

unwrap = device_identity()


@cuda.jit
def check(masks: Any, actions: Any, bad: Any) -> None:
    """Set ``bad[0] = i + 1`` for some env ``i`` whose action is out of range or masked out (any offender will do:
    the host finds the first)."""
    masks, actions, bad = unwrap(masks), unwrap(actions), unwrap(bad)
    t, g = cuda.grid(1), cuda.gridsize(1)
    for i in range(t, actions.shape[0], g):
        a = actions[i]
        if a < 0 or a >= masks.shape[1] or masks[i, a] == 0:
            bad[0] = i + 1
