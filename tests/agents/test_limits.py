"""Agent options from outside: ``parse_options`` and ``Limit`` as properties, and every registered limit against its
agent (:mod:`krypenv.agents.base`).

A spec's options are ``k=v`` pairs whose values read as true/false, an integer, a float, or the
text itself; a :class:`Limit` admits a value of the right type inside its range (bounds
included), or one of its choices of the same type, and never a bool where a number is meant.
Every limit an agent registers must describe what it admits, and everything it admits must
build the agent (the server relies on both).
"""

from __future__ import annotations

import math

import krypenv.agents.kungsholmskille  # noqa: F401  (registers the agents of each game)
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from krypenv.agents import base
from krypenv.agents.base import BOOL, Limit, parse_options

from krypenv import agents

keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
texts = st.from_regex(r"[a-zA-Z_/:.][a-zA-Z0-9_/:.\-]{0,10}", fullmatch=True).filter(
    lambda t: t.lower() not in ("true", "false", "inf", "infinity", "nan", "-inf") and not _is_number(t))
values = st.one_of(st.booleans(), st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False).filter(
    lambda f: f != int(f)), texts)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def written(value: object) -> str:
    """A value as a spec writes it."""
    return str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, float) else str(value)


@settings(max_examples=150, deadline=None)
@given(options=st.dictionaries(keys, values, max_size=5), spaces=st.booleans(), empty=st.booleans())
def test_options_round_trip(options: dict, spaces: bool, empty: bool) -> None:
    """Options written as ``k=v`` pairs (spaces around either side, empty pieces) read back as the same values of
    the same types."""
    sep = " , " if spaces else ","
    pieces = [f"{' ' if spaces else ''}{k}{' ' if spaces else ''}={written(v)}" for k, v in options.items()]
    text = ("," if empty else "") + sep.join(pieces) + (",," if empty else "")
    parsed = parse_options("agent:" + text, text)
    assert parsed == options
    assert {k: type(v) for k, v in parsed.items()} == {k: type(v) for k, v in options.items()}


@pytest.mark.parametrize(("text", "value"), [("TRUE", True), ("False", False), ("1", 1), ("-3", -3), ("1.0", 1.0),
                                             ("1e3", 1000.0), ("0.5", 0.5), ("ppo:x.zip", "ppo:x.zip"), ("", ""),
                                             ("a=b", "a=b")])  # a value may hold "=": the key ends at the first
def test_values_read_as_the_docstring_says(text: str, value: object) -> None:
    """true/false in any case, then an integer, then a float, else the text."""
    got = parse_options("a:k=" + text, "k=" + text)["k"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("piece", ["k", "=1", " =1", "k1"])
def test_a_piece_without_key_and_value_is_named(piece: str) -> None:
    """A piece that is not ``key=value`` is a ValueError naming the spec and the piece."""
    with pytest.raises(ValueError, match=f"agent spec 'a:x=1,{piece}'.*got '{piece}'"):
        parse_options(f"a:x=1,{piece}", f"x=1,{piece}")


numbers = st.one_of(st.integers(-1000, 1000), st.floats(-1000, 1000, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(-50, 50), width=st.integers(0, 50), value=numbers, integer=st.booleans())
def test_a_range_admits_numbers_of_its_type_inside_it(lo: int, width: int, value: float, integer: bool) -> None:
    """A range admits a number inside it (both bounds included): an int only for an integer range, and never a
    bool; describe() names the type and both bounds."""
    limit = Limit(lo, lo + width, integer=integer)
    inside = lo <= value <= lo + width
    right_type = isinstance(value, int) or not integer
    assert limit.admits(value) == (inside and right_type)
    assert limit.admits(lo) and limit.admits(lo + width)
    assert not limit.admits(lo - 1) and not limit.admits(lo + width + 1)
    assert not limit.admits(True) and not limit.admits(False) and not limit.admits(str(lo)) and not limit.admits(None)
    assert limit.admits(lo + 0.5) == (not integer and width > 0)
    assert limit.describe() == f"{'an integer' if integer else 'a number'} from {lo:g} to {lo + width:g}"


def test_a_range_refuses_what_is_not_a_finite_number_in_it() -> None:
    """NaN and infinities are outside every finite range; a range without bounds admits nothing."""
    limit = Limit(0, 10, integer=False)
    assert not any(limit.admits(v) for v in (math.nan, math.inf, -math.inf))
    assert limit.admits(10.0) and limit.admits(0) and limit.admits(2.5)
    assert not Limit().admits(1) and not Limit(lo=0).admits(1) and not Limit(hi=3).admits(1)


@pytest.mark.parametrize(("choices", "yes", "no"), [
    ((True, False), [True, False], [1, 0, "true", 1.0]),
    ((1, 2), [1, 2], [True, 1.0, "1", 3]),
    (("expert", "random"), ["expert", "random"], ["Expert", "greedy", 1]),
    ((0.5,), [0.5], [1, "0.5"]),
])
def test_choices_admit_themselves_with_their_type(choices: tuple, yes: list, no: list) -> None:
    """A choice limit admits each of its choices and nothing else, not even an equal value of another type."""
    limit = Limit(choices=choices)
    assert all(limit.admits(v) for v in yes) and not any(limit.admits(v) for v in no)


def test_choices_are_compared_by_value_not_identity() -> None:
    """A choice equal to one of the limit's (same type), built at run time, is admitted (what a request parses)."""
    built = "EXPERT".lower()  # not the interned literal
    assert Limit(choices=("expert",)).admits(built) and Limit(choices=(1000,)).admits(int("1000"))
    assert Limit(choices=(0.25,)).admits(float("0.25"))


def test_describe_choices() -> None:
    """Choices in words: bools lowercased (and nothing else), checkpoint kinds as KIND:NAME."""
    assert Limit(choices=("Expert", "PIMC")).describe() == "one of Expert, PIMC"
    assert BOOL.describe() == "one of true, false"
    assert Limit(choices=("a", "b"), checkpoint="ppo").describe() == "one of a, b, ppo:NAME"
    assert Limit(choices=(1, 2)).describe() == "one of 1, 2"


def registered_limits() -> list[tuple[str, str, str, Limit]]:
    """(name, game, option, limit) of every agent registered with limits, for every game it plays."""
    out = []
    for name, entries in sorted(base._REGISTRY.items()):
        for entry in entries:
            for game in entry.games or ("krypkasino", "kungsholmskille"):
                out.extend((name, game, key, limit) for key, limit in sorted(entry.limits.items()))
    return out


LIMITS = registered_limits()


def test_agents_declare_limits() -> None:
    """Both games' searching agents limit what a request may ask (the grid below is not empty)."""
    assert {(n, g) for n, g, _, _ in LIMITS} >= {("pimc", "krypkasino"), ("pimc", "kungsholmskille")}


@pytest.mark.parametrize(("name", "game", "key", "limit"), LIMITS, ids=[f"{n}-{g}-{k}" for n, g, k, _ in LIMITS])
def test_every_admitted_edge_builds_the_agent(name: str, game: str, key: str, limit: Limit) -> None:
    """Each limit's edges (both bounds, every choice) are admitted and build the agent; just outside is refused."""
    if limit.choices is not None:
        edges = list(limit.choices)
        outside = ["no-such-choice"]
    else:
        edges = [limit.lo, limit.hi]
        if limit.integer:
            edges = [int(limit.lo), int(limit.hi)]
        step = 1 if limit.integer else 1e-9 * max(1.0, abs(limit.hi))
        outside = [limit.lo - step, limit.hi + step, True]
    for value in edges:
        assert limit.admits(value), (key, value)
        spec = f"{name}:{key}={written(value)}"
        assert parse_options(spec, f"{key}={written(value)}")[key] == value  # as a request writes it
        agents.load(spec, game=game)
    for value in outside:
        assert not limit.admits(value), (key, value)
