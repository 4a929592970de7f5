"""The GPU's plumbing, written once for every game's device env (:mod:`krypenv.envs.device`).

A game's CUDA kernels (``krypenv.<game>.cuda_kernels``) are thin: each GPU thread runs the very
per-env functions the CPU drivers run (numba-cuda compiles an ``@njit`` function called from a
kernel as a CUDA device function), so no rule is written twice.  What is the same for every game
lives here:

* **What the CUDA backend needs**, and one clear error when something is missing
  (:func:`cuda_problem`, :func:`require_cuda`): the ``numba-cuda`` package (``pip install
  "krypenv[cuda]"``), a CUDA driver with a GPU, and a PyTorch built with CUDA.  ``import
  krypenv`` never imports any of them.
* **Arrays on the device** (:class:`Arrays`): every per-env array is *column-major* (env index
  fastest, ``order="F"``), so the 32 threads of a warp, which work on 32 neighbouring envs,
  read and write neighbouring bytes.  Tensors handed to PyTorch are views of these arrays
  (the CUDA array interface: no copy), shaped ``(N, ...)`` with strides ``(1, N, ...)``;
  PyTorch reads them as they are (``x.float()`` keeps the layout, a linear layer takes it without
  a copy); ``.contiguous()`` makes a row-major copy where a caller needs one.
* **Launching** (:func:`launch`): a *grid-stride* loop, thread ``t`` of ``G`` handling envs
  ``t, t + G, …``, with ``G`` at most the threads the GPU holds at once, passed to the kernel as an int
  (on a GPU the launch rounds up to whole blocks; threads from ``G`` on idle).  Each thread's scratch is its own
  local array, set up at every launch (the CPU drivers own one per chunk): in local memory every offset is
  a constant, where a row of a column-major array costs a 64-bit address per offset (issue 42).  Kernels run
  on PyTorch's current stream, so they are ordered with the caller's tensor work.
* **Float arithmetic like the CPU's** (:func:`no_fma`): NVVM contracts ``a * b + c`` into fused
  multiply-adds by default, which rounds differently from the CPU; the kernels are compiled
  with ``-fma=0``, so a compiled baseline's expected costs, ties included, are the CPU's bit for bit.
* **Compiled once per machine** (:func:`cached`): every kernel is compiled with numba-cuda's own disk cache
  (``cuda.jit(cache=True)``: typing, NVVM and the assembler on first launch, about a minute for
  Krypkasino's; the cubin is saved beside the module, or under ``NUMBA_CACHE_DIR``), so a second process
  loads it.  numba-cuda keys an entry by the kernel's signature, the CUDA version and compute capability,
  its own version, the kernel's bytecode and the pickled values of its closure; a kernel's closure
  therefore holds plain values only (its sizes and :func:`source_digest` of the code it calls, so an
  edited rule recompiles), and the functions it calls are bound as globals (:func:`rebind`): a compiled
  function in a closure pickles with a random per-process id, and no second process would find the entry.
* **The simulator** (``NUMBA_ENABLE_CUDASIM=1``; :data:`SIMULATOR`): numba runs the kernels in
  Python threads on the CPU, which is how CI runs them without a GPU.  There a kernel hands the
  per-env functions the NumPy arrays under the simulator's wrappers (:func:`host_view`), so
  they run compiled for the CPU, and tensors are CPU tensors.  numba-cuda's block manager polls its threads in a
  loop that never waits, so it held the GIL for about half the time while a kernel's threads worked (compiling the
  per-env functions for column-major arrays, most of all); :func:`launch` makes it wait briefly on each thread
  before polling it (:func:`waiting_simulator`), the same checks in the same order.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import math
import os
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

__all__ = ["ACT", "AGAIN", "FINISH", "OBS", "OBSERVE", "ORDER", "PARTS", "POLICY_PARTS", "RESET", "SEATS", "SIMULATOR",
           "STATUS_POLICY", "STEP", "Arrays", "CudaUnavailableError", "EnvKernels", "cached", "cuda_problem",
           "device_identity", "env_kernels", "grid_threads", "host_view", "kernel_builder", "launch", "no_fma",
           "rebind", "require_cuda", "set_status", "sits_out", "source_digest", "threads_per_sm", "torch_stream",
           "waiting_simulator"]

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"  # numba's CUDA simulator (CI has no GPU)
BLOCK = 128  # threads per block
THREADS_PER_SM = 2048  # most threads an SM holds at once (compute capability 7.0 to 9.0)
REGISTERS_PER_SM = 65536  # (compute capability 7.0 to 9.0)


class CudaUnavailableError(RuntimeError):
    """The CUDA backend was asked for and something it needs is missing (the message says what)."""


def cuda_problem() -> str | None:
    """What the CUDA backend lacks here, in words (with how to get it), or None if it can run."""
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed (pip install 'krypenv[rl]' for the CPU build, or a CUDA build of torch)"
    if importlib.util.find_spec("numba_cuda") is None:
        return "the numba-cuda package is not installed (pip install 'krypenv[cuda]')"
    if SIMULATOR:
        return None
    from numba import cuda

    if not cuda.is_available():
        return "no CUDA driver or GPU is available to numba (numba.cuda.is_available() is False)"
    if not torch.cuda.is_available():
        return f"PyTorch {torch.__version__} was built without CUDA or sees no GPU (torch.cuda.is_available() is False)"
    return None


def require_cuda(what: str = "device='cuda'") -> None:
    """Raise :class:`CudaUnavailableError` naming what is missing, unless the CUDA backend can run."""
    problem = cuda_problem()
    if problem is not None:
        raise CudaUnavailableError(f"{what} needs a GPU with CUDA: {problem}")


def host_view(a: Any) -> Any:
    """In the simulator, the NumPy array under a simulated device array (kernels hand these to ``@njit`` code)."""
    return getattr(a, "_ary", a)


def _identity_device() -> Callable[[Any], Any]:
    """``host_view`` for kernels: the identity as a device function on a GPU, the unwrapping in the simulator."""
    if SIMULATOR:
        return host_view
    from numba import njit

    return njit(lambda a: a)


def torch_stream() -> Any:
    """PyTorch's current CUDA stream as a numba stream (numba's default stream when PyTorch's is the default)."""
    from numba import cuda

    if SIMULATOR:
        return cuda.default_stream()
    import torch

    handle = torch.cuda.current_stream().cuda_stream
    return cuda.default_stream() if handle == 0 else cuda.external_stream(handle)


@contextlib.contextmanager
def no_fma() -> Iterator[None]:
    """Compile the kernels launched inside with NVVM's ``-fma=0`` (float results equal to the CPU's)."""
    if SIMULATOR:
        yield
        return
    from numba.cuda.cudadrv import nvvm

    original = nvvm.compile_ir

    def compile_ir(llvmir: Any, **options: Any) -> Any:
        return original(llvmir, **{**options, "fma": False})

    nvvm.compile_ir = compile_ir
    try:
        yield
    finally:
        nvvm.compile_ir = original


SIMULATOR_WAIT = 0.0005  # seconds the simulator's block manager waits on each live thread before polling it


@contextlib.contextmanager
def waiting_simulator() -> Iterator[None]:
    """In the simulator, numba-cuda's ``BlockManager`` waits up to :data:`SIMULATOR_WAIT` on each thread before asking
    whether it is alive, instead of spinning; elsewhere nothing changes.

    The manager's loop (numba-cuda 0.30) checks every live thread's ``syncthreads`` flag and exception, then keeps
    the threads whose ``is_alive()`` is true, with no wait between rounds: while the kernel's threads ran, it took
    the GIL from them at every switch interval.  Here ``is_alive`` first joins the thread with a timeout, which
    releases the GIL; what it returns, and so what the manager does, is unchanged."""
    if not SIMULATOR:
        yield
        return
    from numba.cuda.simulator.kernel import BlockThread

    original = BlockThread.is_alive

    def is_alive(thread: Any) -> bool:
        thread.join(SIMULATOR_WAIT)  # returns at once for a finished thread
        return original(thread)

    BlockThread.is_alive = is_alive
    try:
        yield
    finally:
        BlockThread.is_alive = original


def rebind(func: Callable[..., Any], **names: Any) -> Callable[..., Any]:
    """A copy of ``func`` (same code, same closure) whose global ``names`` are the given objects."""
    g = {**func.__globals__, **names}
    f = types.FunctionType(func.__code__, g, func.__name__, func.__defaults__, func.__closure__)
    f.__qualname__, f.__module__ = func.__qualname__, func.__module__
    return f


def source_digest(*modules: str) -> int:
    """A 62-bit digest of the Python sources of ``modules`` (dotted names; a package: every file below it), and of
    this module (the compile options): a kernel's closure holds it, so that numba-cuda's disk cache misses when a
    function the kernel calls changes."""
    h = hashlib.sha256(b"fma=0")
    for name in (*modules, __name__):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"source_digest: no module {name!r}")
        origin = Path(spec.origin)
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            h.update(str(f.relative_to(origin.parent)).encode() + b"\0" + f.read_bytes())
    return int.from_bytes(h.digest()[:8], "little") >> 2


PLAIN = (bool, int, float, str)  # what a cached kernel's closure may hold (pickled the same in every process)


def cached(func: Callable[..., Any], device: bool = False, **callees: Any) -> Any:
    """``cuda.jit`` of ``func`` with the functions it calls (``callees``) bound as its globals (:func:`rebind`); a
    kernel (not a ``device`` function) is cached on disk (module docstring).  ValueError if the closure holds
    anything but plain values, which would make the cache's key differ from process to process."""
    from numba import cuda

    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        if not isinstance(cell.cell_contents, PLAIN):
            raise ValueError(f"{func.__qualname__}: its closure holds {name}={cell.cell_contents!r}; a kernel's "
                             "closure may hold only plain values (bind functions as globals)")
    return cuda.jit(device=device, cache=not device)(rebind(func, **callees))


def grid_threads(n: int) -> int:
    """How many threads to launch for ``n`` envs: all of them, or as many as the GPU holds at once."""
    if SIMULATOR:
        return min(n, 64)
    from numba import cuda

    return max(1, min(n, cuda.get_current_device().MULTIPROCESSOR_COUNT * THREADS_PER_SM))


def threads_per_sm(registers: int) -> int:
    """Threads of one kernel an SM holds at once with ``registers`` per thread: registers are allocated per warp in
    units of 8 per thread, warps in whole blocks of :data:`BLOCK` threads (the occupancy registers allow)."""
    warps = REGISTERS_PER_SM // (32 * max(8, -(-registers // 8) * 8))
    return min(THREADS_PER_SM, warps // (BLOCK // 32) * BLOCK)


def launch(kernel: Any, threads: int, *args: Any) -> None:
    """Launch ``kernel`` on ``threads`` threads (a grid-stride kernel: see the module docstring) on PyTorch's stream.

    In the simulator each CUDA thread is a Python thread, so a block there holds the threads asked for and one idle
    one (the kernels' ``t >= g`` guard), up to :data:`BLOCK`: not a whole block of idle Python threads per launch."""
    started = threads + 1 if SIMULATOR else threads
    block = min(BLOCK, started) if SIMULATOR else BLOCK
    with no_fma(), waiting_simulator():
        kernel[max(1, math.ceil(started / block)), block, torch_stream()](*args)


# Every game's device env steps with the same four kernels (issue 42: each assembled with the registers its own
# part needs), their launches per operation the same; a game's cuda_kernels module supplies the kernel of each part.
RESET, STEP, OBSERVE = 0, 1, 2  # the device env's operations (krypenv.envs.device)
AGAIN = 3  # a kernel's mode in STEP's second ``seats`` launch: only the envs whose episode just ended (``over``)
ACT, SEATS, FINISH, OBS = 0, 1, 2, 3  # the parts (a kernel's closure holds its part: the others are dead code)
PARTS = ("act", "seats", "finish", "observe")  # the kernels by part (the names of EnvKernels.parts)
POLICY_PARTS = ("seats",)  # the parts compiled per built-in policy
STATUS_POLICY = 2  # an env's status bit: a built-in policy's action was illegal (the step's results are void)
ORDER = {RESET: (("act", RESET), ("seats", RESET), ("observe", RESET)),  # operation -> launches (part, mode)
         STEP: (("act", STEP), ("seats", STEP), ("finish", STEP), ("seats", AGAIN), ("observe", STEP)),
         OBSERVE: (("observe", OBSERVE),)}


@njit(cache=True, inline="always")  # inlined where a kernel calls it: its tests fold and short-circuit there
def sits_out(mode: int, active: np.ndarray, over: np.ndarray, i: int) -> bool:
    """Whether env ``i`` sits a launch out: in RESET the envs not ``active`` (not being reset), in AGAIN those whose
    episode did not just end (``over`` 0, whatever the game's code for an ended one).  Each array is read only in
    its mode (a load less to hold in the other modes)."""
    return (mode == RESET and not active[i]) or (mode == AGAIN and over[i] == 0)


@njit(cache=True, inline="always")
def set_status(status: np.ndarray, i: int, part: int, mode: int, bits: int) -> None:
    """Env ``i``'s status after a launch: the operation's first launch (ACT, or OBSERVE alone) writes ``bits``, the
    later ones add theirs."""
    if part == ACT or mode == OBSERVE:
        status[i] = bits
    else:
        status[i] |= bits


class EnvKernels:
    """A device env's kernels by part, and the launches of each of its operations (RESET, STEP, OBSERVE), in order:
    ``order[operation]`` = ((part, mode), ...).  Every kernel takes ``mode`` and then the same arguments; launched on
    one stream, each sees what the one before it wrote (the per-env state stays in global memory between them)."""

    def __init__(self, parts: dict[str, Any], order: dict[int, tuple[tuple[str, int], ...]]) -> None:
        self.parts, self.order = parts, order

    def launch(self, operation: int, threads: int, *args: Any) -> None:
        """Launch ``operation``'s kernels in turn on ``threads`` threads, each with its mode and ``args``."""
        for part, mode in self.order[operation]:
            launch(self.parts[part], threads, mode, *args)


def env_kernels(kernel: Callable[[int, Any], Any], policy_key: Any, no_policy: Any) -> EnvKernels:
    """A game's device-env kernels for one built-in policy's build key (or None): ``kernel(part, key)`` gives each
    part's kernel, ``seats`` (:data:`POLICY_PARTS`) compiled with the policy, the others with ``no_policy``'s key and
    so shared by every policy; launched in :data:`ORDER`."""
    key = policy_key if policy_key is not None else no_policy
    return EnvKernels({name: kernel(part, key if name in POLICY_PARTS else no_policy)
                       for part, name in enumerate(PARTS)}, ORDER)


def kernel_builder(kernel: Callable[[int, Any], Any], no_policy: Any) -> Callable[[Any], EnvKernels]:
    """A game's ``build(policy_key)`` (``cuda_kernels.build``): its device-env kernels for one built-in policy's build
    key (``DevicePolicy.build_key``: function, uniforms, scratch, moves, keys) or for none (None), made by
    :func:`env_kernels` from the game's ``kernel(part, key)`` once per key and process."""

    @functools.cache
    def build(policy_key: Any) -> EnvKernels:
        return env_kernels(kernel, policy_key, no_policy)

    return build


class Arrays:
    """Device arrays, column-major, and their zero-copy exchange with PyTorch (CUDA or the simulator)."""

    def __init__(self) -> None:
        from numba import cuda

        self.cuda = cuda
        self.device = "cpu" if SIMULATOR else "cuda"  # where the tensors live

    def to_device(self, a: np.ndarray) -> Any:
        """A column-major device copy of a host array."""
        return self.cuda.to_device(np.asfortranarray(a))

    def empty(self, shape: tuple[int, ...] | int, dtype: Any) -> Any:
        """A column-major device array, filled with zeros."""
        return self.to_device(np.zeros(shape, dtype))

    def to_host(self, a: Any) -> np.ndarray:
        """A host copy of a device array (for messages and tests)."""
        return a.copy_to_host()

    def tensor(self, a: Any) -> Any:
        """The PyTorch tensor over a device array (no copy)."""
        import torch

        if SIMULATOR:
            return torch.from_numpy(host_view(a))
        return torch.as_tensor(a, device="cuda")

    def from_tensor(self, t: Any, dtype: Any) -> Any:
        """A device array over a tensor of ``dtype`` (converted on the device first if it has another dtype)."""
        import torch

        t = t.to(getattr(torch, np.dtype(dtype).name))
        if SIMULATOR:  # the simulator's device array over the tensor's memory, as on a GPU
            from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

            return FakeCUDAArray(t.detach().numpy())
        return self.cuda.as_cuda_array(t.detach())


def device_identity() -> Callable[[Any], Any]:
    """``host_view`` as the game kernels use it (see :func:`_identity_device`)."""
    return _identity_device()
