"""krypenv.rng: the vectorised seeding is numpy's SeedSequence exactly; decks drawn without allocating are the old ones.

The oracle of :func:`seed_states` / :func:`seed_range` is ``numpy.random.SeedSequence(seed).generate_state(1,
uint64)`` (what :func:`seed_state` calls), over seeds of one and two 32-bit words, word boundaries, and seeds
past 2**64 (which go through numpy).  The oracle of :func:`draw_deck_into` is the Fisher–Yates of
:func:`shuffle_copies` over the stream's next uniforms, drawn one by one with :func:`rand_float`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krypenv.rng import draw_deck_into, rand_float, seed_range, seed_state, seed_states, shuffle_copies

EDGES = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**70 + 3]


def numpy_state(seed: int) -> int:
    """The oracle: numpy's SeedSequence."""
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**72), min_size=1, max_size=20))
def test_seed_states_is_numpys_seed_sequence(seeds: list[int]) -> None:
    """Every integer seed, one word or two or more, mixes to numpy's state."""
    assert seed_states(seeds).tolist() == [numpy_state(s) for s in seeds]


def test_seed_states_at_the_word_boundaries_and_seed_range() -> None:
    """The edges of one and two 32-bit words; seed_range(s, n) is seed_states of s, s+1, …, across 2**64 too."""
    assert seed_states(EDGES).tolist() == [numpy_state(s) for s in EDGES]
    assert seed_state(2**32) == np.uint64(numpy_state(2**32))
    for start in (0, 2**32 - 3, 2**64 - 2):
        assert seed_range(start, 5).tolist() == [numpy_state(start + k) for k in range(5)]


def test_fresh_entropy_and_bad_seeds() -> None:
    """None draws a different state per env and per call; a negative or non-integer seed names ``seed``."""
    a, b = seed_states([None] * 64), seed_range(None, 64)
    assert len(set(a.tolist()) | set(b.tolist())) == 128
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
            seed_states([bad])


@pytest.mark.parametrize(("size", "kinds"), [(104, 52), (42, 21), (8, 4), (2, 1)])
def test_draw_deck_into_is_the_stream_s_fisher_yates(size: int, kinds: int) -> None:
    """The deck shuffled in place from stream i equals shuffle_copies of the next size − 1 uniforms of that stream,
    the stream moves by exactly size − 1, and the other streams do not move."""
    rng = seed_range(5, 3)
    oracle_rng = rng.copy()
    u = np.array([rand_float(oracle_rng, 1) for _ in range(size - 1)])
    expect = np.empty(size, np.int8)
    shuffle_copies(u, expect, kinds)
    deck = np.full(size + 3, -9, np.int8)
    draw_deck_into(rng, 1, deck[:size], kinds, np.empty(110))
    assert deck[:size].tolist() == expect.tolist() and (deck[size:] == -9).all()
    assert rng.tolist() == oracle_rng.tolist()
    assert sorted(deck[:size].tolist()) == sorted([k % kinds for k in range(size)])
