"""Fixtures of the Ray tests (each test module skips itself, with the reason, when Ray is not installed)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A Ray on this machine with two CPUs for the module's tests."""
    import ray

    ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="warning")
    yield
    ray.shutdown()
    os.environ.pop("RAY_ADDRESS", None)  # ray.init leaves the address behind for later ray.init() calls


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[str]:
    """A real two-node Ray cluster on this machine (a head and a second node, one CPU each); yields its address."""
    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, logging_level="warning")
    yield cluster.address
    ray.shutdown()
    cluster.shutdown()
    os.environ.pop("RAY_ADDRESS", None)
