"""The argument types each device-env kernel is launched with, recorded in numba's CUDA simulator: run as
``NUMBA_ENABLE_CUDASIM=1 python -m tests.cuda.launch_signatures`` (tests/cuda/test_ptxas_report.py does, in a
subprocess, since the simulator is chosen when numba.cuda is first imported).

Prints one JSON object: ``"game policy part"`` -> numba's signature of the arguments the env's kernel ``part`` was
launched with (``policy`` is ``none`` or ``expert``), over a reset, a step and an observation.  The register report
(:func:`krypenv.eval.ptxas.kernel_and_signature`) must compile each kernel for exactly these types.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from numba import typeof
from numba.core.types import void

from krypenv import agents
from krypenv.envs import cuda as C
from krypenv.games import GAMES


def record(game: str, policy: str | None) -> dict[str, str]:
    """Each of the env's kernel parts -> the signature of its launch arguments (the same at every launch)."""
    kw = {"opponents": agents.load(policy, game=game)} if policy else {}
    env = GAMES[game].part("device").DeviceVecEnv(2, device="cuda", seed=3, **kw)
    names = {id(k): part for part, k in env._kernels.parts.items()}
    seen: dict[str, str] = {}
    original = C.launch  # replaced by a recorder that launches nothing (the types are all it needs; fast)

    def recording(kernel: Any, threads: int, *args: Any) -> None:
        sig = str(void(*[typeof(a.copy_to_host() if hasattr(a, "copy_to_host") else a) for a in args]))
        part = names.get(id(kernel)) or f"util.{kernel.py_func.__name__}"  # cuda_util's check and pick
        assert seen.setdefault(part, sig) == sig, (part, seen[part], sig)

    C.launch = recording
    try:
        env.reset(seed=1)
        env.step(np.zeros(env.num_envs, np.int64))  # nothing ran, so nothing checks the action
    finally:
        C.launch = original
    return seen


def main() -> None:
    """Print every game's kernels' launch signatures, without and with the compiled expert."""
    assert C.SIMULATOR and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run me with NUMBA_ENABLE_CUDASIM=1"
    out = {f"{game} {policy or 'none'} {part}": sig
           for game in GAMES for policy in (None, "expert") for part, sig in record(game, policy).items()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
