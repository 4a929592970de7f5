"""Compile every device env's CUDA kernel to PTX for a Hopper GPU (sm_90) on a machine without one: ``python -m
tests.cuda.ptx_check`` (tests/cuda/test_ptx.py runs it in a subprocess; it needs NVVM, which ``krypenv[cuda]``
brings as a wheel).

numba-cuda compiles a kernel's callees (the per-env ``@njit`` functions) for the GPU when they are first called
from it, asking the current device for its compute capability; with no GPU here that one question is answered
"9.0" (the H100 and H200).  Everything else is numba-cuda's own pipeline: typing for the CUDA target (no
allocation, no exception messages, no array returned but an argument), lowering, NVVM.  What the simulator
cannot show, this does: that the rules code compiles for CUDA threads as it is.
"""

from __future__ import annotations

import sys
import time
import types
from typing import Any

import numpy as np

CC = (9, 0)


def _layout(a: Any) -> Any:
    """numba's type of a kernel argument as the device env passes it (2-D arrays column-major)."""
    from numba import typeof

    if isinstance(a, np.ndarray) and a.ndim >= 2:
        return typeof(np.asfortranarray(a))
    return typeof(a)


def kernel_signature(env: Any, policy: Any) -> Any:
    """The ``run`` kernel's signature for a CPU device env's arrays (the GPU env's have the same dtypes)."""
    from numba.core import types as nt

    b, P = env._buf, env.players
    ki = len(policy.iparams) if policy else 1
    kf = len(policy.fparams) if policy else 1
    args = [0, *env.core._arrays(), b["base"], b["active"], b["actions"], False, np.zeros((4, 8), np.int64),
            b["status"], b["act_status"], b["rew"], b["over"], b["final"], b["obs"], b["masks"], b["seats"],
            b["term_obs"], b["term_masks"], np.zeros(P, np.int64), np.zeros((P, ki), np.int64),
            np.zeros((P, kf)), env._gx()]
    return nt.void(*[_layout(a) for a in args])


def compile_all(specs: list[str]) -> list[tuple[str, int, float]]:
    """PTX of each ``game:policy`` kernel (policy ``none`` or an agent spec): (spec, KiB, seconds)."""
    from numba import cuda
    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)
    from krypenv import agents
    from krypenv.games import GAMES

    out = []
    for spec in specs:
        game, pol = spec.split(":")
        env = GAMES[game].part("device").DeviceVecEnv(2, device="cpu")
        policy = None if pol == "none" else agents.load(pol, game=game).device_policy(env.core.rules)
        run = type(env).cuda_kernels().build(policy.build_key if policy else None)
        start = time.perf_counter()
        ptx, _ = cuda.compile_ptx(run.py_func, kernel_signature(env, policy), cc=CC)
        assert ".entry" in ptx and "sm_90" in ptx
        out.append((spec, len(ptx) // 1024, time.perf_counter() - start))
        print(f"{spec}: {out[-1][1]} KiB of PTX in {out[-1][2]:.1f} s", flush=True)
    return out


if __name__ == "__main__":
    compile_all(sys.argv[1:] or ["kungsholmskille:none", "kungsholmskille:expert", "krypkasino:none",
                                 "krypkasino:expert"])
