"""Session hooks for the whole suite."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first, the rest in their order (a stable sort): under ``-n 2`` the longest ones start
    while the other worker takes the many short ones, so the two workers finish together."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
