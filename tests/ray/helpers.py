"""Agents shared by the Ray tests, and the reason they skip without Ray."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from krypenv.agent_api import DecisionBatch
from krypenv.rng import k_pick_legal

NO_RAY = "Ray is not installed: the Ray tests need the ray extra (pip install -e \".[ray]\")"


def _in_ray_worker() -> bool:
    """True inside a Ray worker process (not the driver)."""
    if "ray" not in sys.modules:
        return False
    import ray

    return ray.is_initialized() and ray._private.worker.global_worker.mode == ray.WORKER_MODE


def death_marker() -> Path:
    """The file a :class:`DieOnce` leaves when it has killed its worker, one per Ray job."""
    import ray

    return Path(tempfile.gettempdir()) / f"krypenv-die-once-{os.getuid()}-{ray.get_runtime_context().get_job_id()}"


class DieOnce:
    """``random``'s choices, but the first call in a Ray job kills its worker process (``os._exit``)."""

    name = "die-once"

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """Uniform over the legal actions from the games' streams, as ``random``."""
        if _in_ray_worker():
            marker = death_marker()
            if not marker.exists():
                marker.write_text("died\n")
                os._exit(1)
        out = np.empty(len(batch), np.int64)
        k_pick_legal(batch.mask, batch.uniforms(1)[:, 0], out)
        return out


class Broken:
    """An agent whose ``act`` raises (a user's bug)."""

    name = "broken"

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """Fails."""
        raise KeyError("no such thing")
