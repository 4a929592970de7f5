"""numba-cuda's disk cache of the device env's kernels, across processes, without a GPU: ``python -m
tests.cuda.cache_check save|load KERNEL...`` with ``NUMBA_CACHE_DIR`` set (tests/cuda/test_cache.py runs both).

Only the GPU is faked: a context whose device has compute capability 9.0 and whose module loader keeps the cubin
it is handed.  Everything else is numba-cuda 0.30's own first launch, ``CUDADispatcher.compile``: the disk cache's
lookup, and on a miss typing, NVVM, the linker (nvJitLink, the assembler as a library: it needs no GPU) and the
cache's save.  ``save`` compiles KERNEL (a name of :data:`krypenv.eval.ptxas.KERNELS`) in a fresh process and must
miss the cache; ``load``, in another fresh process, must hit it and bind the kernel without running the linker:
the cubin found under the key numba-cuda looks it up by, (9, 0, "a") on an H100.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class FakeModule:
    """A loaded module: the kernel's function, nothing to set up."""

    initialized = True

    def __init__(self, cubin: bytes) -> None:
        self.cubin = cubin

    def get_function(self, name: str) -> Any:
        """A stand-in function object of this module."""
        return types.SimpleNamespace(module=self, name=name)


class FakeContext:
    """The current CUDA context of an H100: compute capability 9.0; modules are kept, not loaded."""

    def __init__(self) -> None:
        self.device = types.SimpleNamespace(compute_capability=(9, 0), id=0)
        self.loaded: list[bytes] = []

    def create_module_image(self, cubin: bytes, setup: Any = None, teardown: Any = None) -> FakeModule:
        """Keep the cubin, as the driver would load it."""
        self.loaded.append(bytes(getattr(cubin, "code", cubin)))  # cuda.core ObjectCode or bytes
        return FakeModule(cubin)


def fake_hopper() -> FakeContext:
    """Answer numba-cuda's questions about the current device and context as an H100 would."""
    from numba.cuda import codegen, dispatcher
    from numba.cuda.cudadrv import devices

    ctx = FakeContext()
    devices.get_context = lambda devnum=None: ctx
    codegen.devices.get_context = devices.get_context
    dispatcher.get_current_device = lambda: ctx.device
    return ctx


def main(argv: list[str]) -> int:
    """``save`` or ``load`` one kernel; print what happened (the test reads it)."""
    phase, *names = argv
    ctx = fake_hopper()
    from krypenv.eval.ptxas import kernel_and_signature
    from numba.cuda.cudadrv import driver

    from krypenv.envs.cuda import no_fma

    if phase == "load":
        class NoLinker:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                raise AssertionError("the linker ran: no cubin for this device in the cached kernel")

        driver._Linker = NoLinker
    for name in names:
        kernel, sig = kernel_and_signature(name)
        loaded = len(ctx.loaded)
        with no_fma():
            kernel.compile(sig.args).bind()
        hits, misses = sum(kernel._cache_hits.values()), sum(kernel._cache_misses.values())
        print(f"{phase} {name}: cache hits {hits}, misses {misses}, cubins loaded {len(ctx.loaded) - loaded} "
              f"({len(ctx.loaded[-1])} bytes)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
