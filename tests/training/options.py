"""A trainer's option check as a user meets it: the ``Args`` dataclass and the command line that parses into it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def assert_refused(args_class: type, parse: Callable[[list[str]], Any], field: str, value: object) -> None:
    """``args_class(field=value)`` raises a ValueError naming ``field``; ``--field value`` is a usage error (exit 2)."""
    with pytest.raises(ValueError, match=field):
        args_class(**{field: value})
    with pytest.raises(SystemExit) as exc:
        parse([f"--{field.replace('_', '-')}", str(value)])
    assert exc.value.code == 2
