"""Device kernels compiled ahead of time, for machines whose GPU time is short (batch jobs, leased GPUs).

numba-cuda compiles a device env's kernel the first time it is launched: numba's typing and NVVM,
then the assembler, a minute or more per kernel of one CPU core (two with a compiled baseline in
the kernel; docs/results/gpu.md has the figures).  ``python -m krypenv.envs.cuda_ahead OUT [--cc
9.0]`` compiles every game's kernels (random seats only, and with each game's compiled baselines)
and the engine benchmark's, on any machine with numba-cuda's NVVM and CUDA's ``ptxas`` — no GPU
needed — into the folder OUT, one file per kernel.  A process with ``KRYPENV_CUDA_AHEAD=OUT`` in its
environment then loads a kernel from there instead of compiling it (:func:`install`), when the
file was built from the same sources (a digest of every compiled module of krypenv and its agents)
for its GPU's compute capability, and compiles as usual otherwise.

The files hold numba's argument types and the cubin, read back with pickle: load only files you
built yourself (``docs/SECURITY.md``).  The assembler's PTX version must be one the GPU's driver
accepts: build with the CUDA release of that driver or older (``--ptxas``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import pickle
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ENV_VAR", "compile_kernels", "install", "sources_digest"]

ENV_VAR = "KRYPENV_CUDA_AHEAD"
POLICIES = {"krypkasino": ("expert",), "kungsholmskille": ("expert",)}  # agents whose device policies get kernels


def sources_digest() -> str:
    """A digest of every module of krypenv and its agents that holds compiled code (what a kernel is built from),
    by path within the package: the same in a checkout (``agents/`` beside ``krypenv/``) and an installed wheel
    (``krypenv/agents/``)."""
    import krypenv
    import krypenv.agents

    files: dict[str, bytes] = {}
    top, agents = Path(krypenv.__file__).parent, Path(krypenv.agents.__file__).parent
    for root, prefix in ((top, ""), (agents, "agents/")):
        for path in krypenv.compiled_sources(root):
            rel = prefix + path.relative_to(root).as_posix()
            if prefix or rel.split("/")[0] not in ("agents", "eval", "checkpoints"):
                files[rel] = path.read_bytes()
    digest = hashlib.sha1()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + files[rel])
    return digest.hexdigest()[:16]


def kernel_file(folder: Path, name: str, cc: tuple[int, int]) -> Path:
    """Where the kernel ``name`` compiled for ``cc`` lives in ``folder``."""
    return folder / f"{name}.sm{cc[0]}{cc[1]}.krn"


def install(dispatcher: Any, name: str) -> bool:
    """Give ``dispatcher`` its kernel compiled ahead of time as ``name``, if ``KRYPENV_CUDA_AHEAD`` names a folder
    holding one built from these sources for this GPU; True if it did (the kernel then launches without compiling)."""
    from krypenv.envs.cuda import SIMULATOR

    folder = os.environ.get(ENV_VAR)
    if not folder or SIMULATOR or getattr(dispatcher, "overloads", None):  # unset, simulated, or already there
        return False
    from numba import cuda
    from numba.cuda.codegen import CUDACodeLibrary
    from numba.cuda.dispatcher import _Kernel

    cc = cuda.get_current_device().compute_capability
    path = kernel_file(Path(folder), name, cc)
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        saved = pickle.load(fh)  # our own build's file (module docstring)
    if saved["digest"] != sources_digest():
        print(f"krypenv: {path} was built from other sources; compiling {name}", file=sys.stderr)
        return False
    lib = CUDACodeLibrary._rebuild(None, name, saved["entry"], [], {cc: [saved["ptx"]]}, {cc: saved["cubin"]}, {},
                                   None, {}, False, False, False, False)
    kernel = _Kernel._rebuild(False, saved["entry"], saved["signature"], lib, False, False, None, [])
    try:
        kernel._codelibrary.get_cufunc()  # load the cubin now: a driver that refuses it means we compile instead
    except Exception as e:  # noqa: BLE001  (any refusal of the driver: fall back to compiling)
        print(f"krypenv: the driver refused {path} ({e}); compiling {name}", file=sys.stderr)
        return False
    dispatcher.add_overload(kernel, tuple(saved["signature"].args))
    return True


def _layout(a: Any) -> Any:
    """numba's type of a kernel argument as the device envs pass it (arrays of two or more axes column-major)."""
    from numba import typeof

    return typeof(np.asfortranarray(a)) if isinstance(a, np.ndarray) and a.ndim >= 2 else typeof(a)


def env_kernel_args(env: Any, policy: Any) -> list[Any]:
    """Example arguments of a game's ``run`` kernel (the CPU device env's arrays have the GPU env's dtypes)."""
    b, P = env._buf, env.players
    ki = len(policy.iparams) if policy else 1
    kf = len(policy.fparams) if policy else 1
    return [0, *env.core._arrays(), b["base"], b["active"], b["actions"], False, np.zeros((4, 8), np.int64),
            b["status"], b["act_status"], b["rew"], b["over"], b["final"], b["obs"], b["masks"], b["seats"],
            b["term_obs"], b["term_masks"], np.zeros(P, np.int64), np.zeros((P, ki), np.int64), np.zeros((P, kf)),
            env._gx()]


def targets() -> list[tuple[str, Any, list[Any]]]:
    """(name, dispatcher, example arguments) of every kernel to build: each game's env kernel per policy, the engine
    benchmark's kernels, the action check and pick."""
    from krypenv import agents
    from krypenv.envs import cuda_util
    from krypenv.games import GAMES
    from krypenv.krypkasino.engine import DealBatch
    from krypenv.krypkasino.rules import Rules

    out = []
    for game in GAMES.values():
        env = game.part("device").DeviceVecEnv(2, device="cpu")
        module = importlib.import_module(f"krypenv.{game.name}.cuda_kernels")
        for spec in (None, *POLICIES.get(game.name, ())):
            policy = None if spec is None else agents.load(spec, game=game.name).device_policy(env.core.rules)
            key = None if policy is None else policy.build_key
            out.append((kernel_name(game.name, key), module.build(key), env_kernel_args(env, policy)))
    d = DealBatch(Rules(players=2), 2)
    (ik, isz), (lk, lsz) = d._initial, d._later
    rng, dec = np.zeros(2, np.uint64), np.zeros(2, np.int64)
    scr = np.zeros((2, 8), np.int64)
    from krypenv.krypkasino import cuda_kernels as kk
    from krypenv.kungsholmskille import cuda_kernels as lk_
    from krypenv.kungsholmskille.engine import DealBatch as KilleDeals
    from krypenv.kungsholmskille.rules import Rules as KilleRules

    out.append(("krypkasino-engine", kk.engine_play(), [d.state, rng, 2, 104, ik, isz, lk, lsz, False, scr, 1, dec]))
    k = KilleDeals(KilleRules(2), 2)
    out.append(("kungsholmskille-engine", lk_.engine_play(), [k.state, k.cash, rng, 2, 1, scr, dec]))
    masks, acts = np.zeros((2, 3), np.int8), np.zeros(2, np.int64)
    out.append(("check-actions", cuda_util.check, [masks, acts, np.zeros(1, np.int64)]))
    out.append(("pick-actions", cuda_util.pick, [masks, np.zeros(2), acts]))
    return out


def kernel_name(game: str, key: Any) -> str:
    """The file name of a game's env kernel for a policy's build key (None: random seats only)."""
    if key is None:
        return f"{game}-env"
    fn = key[0]
    return f"{game}-env-{fn.py_func.__module__.rsplit('.', 1)[-1]}.{fn.__name__}-{'-'.join(map(str, key[1:]))}"


def compile_kernels(out: Path, cc: tuple[int, int] = (9, 0), ptxas: str = "ptxas") -> list[Path]:
    """Build every kernel of :func:`targets` for ``cc`` into ``out`` (module docstring); return the files written."""
    from numba import cuda
    from numba.core import types as nt

    from krypenv.envs.cuda import no_fma

    try:
        cuda.get_current_device()
    except Exception:  # noqa: BLE001  (no GPU here: answer numba-cuda's one question about it ourselves)
        from numba.cuda import dispatcher

        dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    out.mkdir(parents=True, exist_ok=True)
    digest, written = sources_digest(), []
    for name, dispatcher, args in targets():
        signature = nt.void(*[_layout(a) for a in args])
        with no_fma():
            ptx, _ = cuda.compile_ptx(dispatcher.py_func, signature, cc=cc)
        entry = next(line.split()[2].split("(")[0] for line in ptx.splitlines() if line.startswith(".visible .entry"))
        with tempfile.TemporaryDirectory() as tmp:
            source, binary = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
            source.write_text(ptx)
            subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", str(source), "-o", str(binary)], check=True)
            cubin = binary.read_bytes()
        path = kernel_file(out, name, cc)
        with path.open("wb") as fh:
            pickle.dump({"digest": digest, "cc": cc, "entry": entry, "signature": signature, "ptx": ptx,
                         "cubin": cubin}, fh)
        written.append(path)
        print(f"{path.name}: {len(cubin) // 1024} KiB", flush=True)
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m krypenv.envs.cuda_ahead OUT [--cc 9.0] [--ptxas PATH]``."""
    parser = argparse.ArgumentParser(prog="python -m krypenv.envs.cuda_ahead", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the kernel files")
    parser.add_argument("--cc", default="9.0", help="compute capability of the GPU (default 9.0: H100, H200)")
    parser.add_argument("--ptxas", default="ptxas", help="CUDA's assembler (default: the one on PATH)")
    args = parser.parse_args(argv)
    major, minor = (int(x) for x in args.cc.split("."))
    compile_kernels(args.out, (major, minor), args.ptxas)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
