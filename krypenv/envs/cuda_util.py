"""Two small kernels every game's device env uses (imported only where numba-cuda is installed).

* :func:`check`: the check of ``illegal="raise"`` before a step (any game's action against its mask);
* :func:`pick`: a uniform random legal action per row of a mask (:func:`krypenv.rng.pick_legal`, the one
  random policy of every game), for benchmarks and for callers that act at random.

Both are cached on disk like the games' kernels (:func:`krypenv.envs.cuda.cached`).
"""

from __future__ import annotations

from typing import Any

from numba import cuda  # numba-cuda (the simulator swaps this module-level name)

from krypenv.envs.cuda import cached, device_identity, source_digest
from krypenv.rng import pick_legal

__all__ = ["check", "pick"]

unwrap = device_identity()


def _kernels() -> tuple[Any, Any]:
    """The two kernels, their closures holding the digest of the code they call (the disk cache's key)."""
    key = source_digest("krypenv.rng", __name__)

    def check(masks: Any, actions: Any, bad: Any) -> None:
        """Set ``bad[0] = i + 1`` for some env ``i`` whose action is out of range or masked out (any offender will
        do: the host finds the first)."""
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        masks, actions, bad = unwrap(masks), unwrap(actions), unwrap(bad)
        t, g = cuda.grid(1), cuda.gridsize(1)
        for i in range(t, actions.shape[0], g):
            a = actions[i]
            if a < 0 or a >= masks.shape[1] or masks[i, a] == 0:
                bad[0] = i + 1

    def pick(masks: Any, u: Any, out: Any) -> None:
        """``out[i]`` = the ⌊u[i]·n⌋-th of the n legal actions of ``masks[i]``."""
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        masks, u, out = unwrap(masks), unwrap(u), unwrap(out)
        t, g = cuda.grid(1), cuda.gridsize(1)
        for i in range(t, out.shape[0], g):
            out[i] = pick_legal(masks[i], u[i])

    return cached(check), cached(pick)


check, pick = _kernels()
