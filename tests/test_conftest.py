"""The suite's own session hooks (tests/conftest.py)."""

from __future__ import annotations

from tests.conftest import pytest_collection_modifyitems


class Item:
    """A collected test with a name and maybe the ``slow`` marker."""

    def __init__(self, name: str, *markers: str) -> None:
        self.name, self.markers = name, markers

    def get_closest_marker(self, name: str) -> str | None:
        """The marker ``name`` if the test has it."""
        return name if name in self.markers else None


def test_slow_tests_run_first_and_the_rest_keep_their_order() -> None:
    """Tests marked slow move to the front; within each group the collection order stays (a stable sort)."""
    items = [Item("a"), Item("b", "slow"), Item("c", "parametrize"), Item("d", "slow"), Item("e"), Item("f", "slow")]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [i.name for i in items] == ["b", "d", "f", "a", "c", "e"]
