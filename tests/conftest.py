"""Session hooks for the whole suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first, the rest in their order (a stable sort): under ``-n 2`` the longest ones start
    while the other worker takes the many short ones, so the two workers finish together."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_the_sessions_temp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SB3's default logger (a ``learn()`` without a logger of its own, as in the tutorials) makes an empty
    ``SB3-<date>`` folder in the system's temp directory; for the suite and its subprocesses it goes under pytest's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
        yield
