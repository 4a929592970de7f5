"""``krypenv eval --ray [ADDRESS]``: the harness's chunks of games played by Ray tasks on a cluster.

    krypenv eval --agents expert,greedy --deals 2000 --ray                  # RAY_ADDRESS, else a local Ray
    krypenv eval --agents expert,greedy --deals 2000 --ray 10.0.0.5:6379    # a running cluster's head

Only with the ``ray`` extra (``pip install "krypenv[ray]"``); nothing else in krypenv imports Ray.

**Where.**  ``ADDRESS`` is a cluster's GCS address (``host:port``, what ``ray start --head``
prints), ``auto`` or a Ray Client address (``ray://host:10001``).  ``--ray`` alone takes
``RAY_ADDRESS`` from the environment, and when that is unset starts a new Ray on this machine for
the run (``num_cpus`` = the cores this process may use), stopped when the command ends.  An
unreachable or malformed address is a one-line error before any game is played.

**Work units.**  The chunks of ``--batch`` games are the same as with local processes
(:func:`krypenv.eval.play.chunks`); each is one Ray task (``num_cpus=1``, one numba thread, spread over
the nodes: Ray's default packs short tasks onto the driver's node) running
the harness's own worker functions (``krypenv.eval.play.init_worker`` once per Ray worker process
and agent set, then ``krypenv.eval.play.work`` per chunk, which plays it with the game's
``play_chunk``).  At most two chunks per CPU of the cluster are in flight; results are taken in
game order.  A chunk's outcome depends only on its games' seeds, so the numbers are identical to a
local run with the same seed.

*Tasks, not* ``ray.util.multiprocessing.Pool``: that Pool runs on actors that are not
restarted, so a dead worker fails the map; a task is retried by Ray when its worker process
or node dies (``max_retries=3``; exceptions raised by agents are not retried but re-raised
here as the harness's own one-line errors).  A retried chunk replays the same seeds, so a
run whose worker died gives the same numbers.

**Code on the workers.**  Workers import krypenv, ``agents`` and ``eval`` from their own
Python: a local Ray's workers share the driver's ``sys.path``; on a cluster either install
the same commit on every node (``pip install -e ".[ray]"``) or ship the checkout with a
runtime environment by submitting the command as a Ray job::

    ray job submit --address http://HEAD:8265 --working-dir . -- python -m krypenv.cli eval --ray --agents ...

Every task checks that its worker runs the same source as the driver (a hash of the
``krypenv``, ``agents`` and ``eval`` modules) and fails with a one-line error otherwise.
numba's cache lives in the package folder on each node (``krypenv/__pycache__/numba-<hash>``,
or ``~/.cache/krypenv`` when that is read-only; a shipped working dir is writable and kept per
content by Ray), so each node compiles the kernels once per source version; set
``NUMBA_CACHE_DIR`` on the nodes to put it elsewhere.  Agent checkpoints (``ppo:PATH``) must
exist at the same path on every node (inside the shipped working dir, or a shared disk).
"""

from __future__ import annotations

import collections
import hashlib
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

MAX_RETRIES = 3  # Ray retries of a chunk whose worker process or node died

_STATE: dict[str, Any] = {}  # per worker process: the initializer arguments it last ran
LAST_NODES: collections.Counter[str] = collections.Counter()  # chunks per Ray node id of the latest pool


def source_digest() -> str:
    """A short hash of every Python module the workers run (the same code gives the same numbers).

    Each file is hashed under its module name (``krypenv.agents.base``), so a checkout, an
    editable install and an installed wheel of the same code give the same digest.
    """
    import krypenv.agents
    import krypenv.eval

    import krypenv

    files: dict[str, Path] = {}
    for package in (krypenv, krypenv.agents, krypenv.eval):
        root = Path(package.__file__).resolve().parent
        for path in root.rglob("*.py"):
            files[".".join((package.__name__, *path.relative_to(root).with_suffix("").parts))] = path
    digest = hashlib.sha1()
    for name in sorted(files):
        digest.update(name.encode())
        digest.update(files[name].read_bytes())
    return digest.hexdigest()[:12]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError("--ray needs Ray: pip install \"krypenv[ray]\"") from None
    return ray


def _check_reachable(address: str) -> None:
    """ValueError in one line unless ``host:port`` (after an optional ``ray://``) accepts a connection within 5 s."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"bad Ray address {address!r}: give host:port (e.g. 10.0.0.5:6379), auto or ray://host:port")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ValueError(f"cannot reach the Ray cluster at {address!r}: {exc.strerror or exc}") from None


def connect(address: str | None = "") -> str:
    """Connect to Ray once: ``address``, else ``RAY_ADDRESS``, else a new local Ray; returns what it joined."""
    ray = _import_ray()
    if ray.is_initialized():
        return "connected"
    address = (address or "").strip() or os.environ.get("RAY_ADDRESS", "").strip()
    common = {"log_to_driver": False, "configure_logging": True, "logging_level": "warning"}
    if not address:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, **common)  # never a cluster running here
        return "a local Ray"
    if address != "auto":
        _check_reachable(address)
    try:
        ray.init(address=address, **common)
    except Exception as exc:  # noqa: BLE001 - Ray's errors are long; the command's are one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"cannot connect to the Ray cluster at {address!r}: {first}") from None
    return address


def _run_chunk(func: Callable[[Any], Any], item: Any, initializer: Callable[..., None], initargs: tuple[Any, ...],
               digest: str) -> tuple[Any, str]:
    """On a Ray worker: check the source, run the initializer once per argument set, then ``func(item)``."""
    import ray

    mine = source_digest()
    node = ray.get_runtime_context().get_node_id()
    if mine != digest:
        raise ValueError(f"a Ray worker on node {node[:8]} runs other krypenv code (source {mine}, driver {digest}): "
                         f"install the same commit on every node or submit with --working-dir")
    if _STATE.get("initargs") != initargs:
        initializer(*initargs)
        _STATE["initargs"] = initargs
    return func(item), node


class RayPool:
    """A stand-in for ``multiprocessing.Pool``'s ``imap``: every item is a Ray task; results come in order."""

    def __init__(self, address: str | None, initializer: Callable[..., None], initargs: tuple[Any, ...]) -> None:
        self.ray = _import_ray()
        connect(address)
        self.initializer, self.initargs = initializer, initargs
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        self.in_flight = max(2, 2 * cpus)
        self.nodes = LAST_NODES  # chunks played per node id
        self.nodes.clear()
        self._remote = self.ray.remote(num_cpus=1, max_retries=MAX_RETRIES, scheduling_strategy="SPREAD")(_run_chunk)
        self._pending: collections.deque[Any] = collections.deque()

    def imap(self, func: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``func(item)`` for every item on the cluster, in the order of ``items``."""
        ray, digest = self.ray, source_digest()
        todo = iter(items)
        pending = self._pending
        while True:
            while len(pending) < self.in_flight:
                item = next(todo, None)
                if item is None:
                    break
                pending.append(self._remote.remote(func, item, self.initializer, self.initargs, digest))
            if not pending:
                return
            try:
                result, node = ray.get(pending.popleft())
            except ray.exceptions.RayTaskError as exc:  # an exception raised in the chunk itself
                cause = exc.cause if isinstance(exc.cause, Exception) else None
                if isinstance(cause, (ValueError, RuntimeError, OSError)):
                    raise cause from None
                raise RuntimeError(f"a chunk failed on a Ray worker: {type(cause).__name__}: {cause}") from None
            except ray.exceptions.RayError as exc:  # retries used up: workers or nodes kept dying
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                raise RuntimeError(f"a chunk failed {MAX_RETRIES + 1} times on Ray workers "
                                   f"({type(exc).__name__}: {first})") from None
            self.nodes[node] += 1
            yield result

    def terminate(self) -> None:
        """Cancel the chunks still in flight (after an error or an interrupt)."""
        while self._pending:
            self.ray.cancel(self._pending.popleft(), force=True)

    def join(self) -> None:
        """Nothing to wait for: results are fetched by :meth:`imap`."""
