"""Cards: deck, names and codes, capture values, card points (RULES.md K1–K4)."""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.krypkasino.cards import (
    HAND_VALUE,
    POINTS,
    TABLE_VALUE,
    card_code,
    card_name,
    counts_from_names,
    names_from_counts,
    ordered_deck,
    parse_deck,
)
from krypenv.krypkasino.engine import shuffled_deck, shuffled_decks

RANK_NAMES = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUIT_NAMES = ["C", "D", "H", "S"]
ALL_52 = [r + s for s in SUIT_NAMES for r in RANK_NAMES]  # in code order (K2)


def full_deck_names() -> list[str]:
    """The 104 card names of two decks, in code order twice (K1)."""
    return ALL_52 + ALL_52


# ----------------------------------------------------------------------------- K1 / K2
@pytest.mark.parametrize(
    ("card", "code"),
    [("AC", 0), ("2C", 1), ("10C", 9), ("KC", 12), ("AD", 13),
     ("10D", 22), ("QH", 37), ("AS", 39), ("2S", 40), ("KS", 51)],
)
def test_k2_card_codes(card: str, code: int) -> None:
    """K2: code = suit_index * 13 + rank_index, suits C D H S, ranks A..K."""
    assert card_code(card) == code
    assert card_name(code) == card


def test_k2_names_round_trip_all_codes() -> None:
    """K2: every code 0..51 has the hand-listed name, and the name parses back."""
    for code, nm in enumerate(ALL_52):
        assert card_name(code) == nm
        assert card_code(nm) == code


@pytest.mark.parametrize("bad", ["1C", "11H", "AX", "A", "10", "ZZ", "JJ", "0S", "AC ", "10DD", "1O0D"])
def test_k2_bad_names_raise_with_name(bad: str) -> None:
    """K2: a bad card name raises ValueError whose message contains the name."""
    with pytest.raises(ValueError) as err:
        card_code(bad)
    assert repr(bad) in str(err.value) or bad in str(err.value)


def test_k2_empty_and_non_string_names_raise() -> None:
    """K2: an empty name or a non-string is a ValueError, not another exception."""
    for bad in ["", None, 5]:
        with pytest.raises(ValueError):
            card_code(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 52, 104])
def test_k2_bad_codes_raise(bad: int) -> None:
    """K2: codes outside 0..51 have no name."""
    with pytest.raises(ValueError, match=str(bad)):
        card_name(bad)


def test_k1_ordered_deck_has_every_card_twice() -> None:
    """K1: two decks, 104 cards, every code exactly twice."""
    deck = ordered_deck()
    assert deck.shape == (104,)
    assert sorted(deck.tolist()) == sorted(list(range(52)) * 2)


def test_k1_shuffled_deck_is_a_permutation_and_seeded() -> None:
    """K1: a shuffled deck holds the same 104 cards; the same seed gives the same order."""
    a = shuffled_deck(np.random.default_rng(7))
    b = shuffled_deck(np.random.default_rng(7))
    c = shuffled_deck(np.random.default_rng(8))
    assert sorted(a.tolist()) == sorted(list(range(52)) * 2)
    assert a.tolist() == b.tolist()
    assert a.tolist() != c.tolist()


def test_k1_shuffled_decks_do_not_depend_on_batch_size() -> None:
    """Row i of a batch of shuffled decks is the same for every batch size (same seed, same deals)."""
    small = shuffled_decks(np.random.default_rng(5), 3)
    big = shuffled_decks(np.random.default_rng(5), 40)
    assert np.array_equal(small, big[:3])
    assert all(sorted(row.tolist()) == sorted(list(range(52)) * 2) for row in big)
    assert len({row.tobytes() for row in big}) == 40


def test_counts_round_trip_with_duplicates() -> None:
    """Count vectors hold copies (0..2); names come back in code order (K1)."""
    v = counts_from_names(["KS", "AC", "10D", "AC"])
    assert v.shape == (52,)
    assert v[0] == 2 and v[22] == 1 and v[51] == 1 and int(v.sum()) == 4
    assert names_from_counts(v) == ["AC", "AC", "10D", "KS"]


# ----------------------------------------------------------------------------- K3
def test_k3_values() -> None:
    """K3: 2–10 face value, J 11, Q 12, K 13; an ace is 14 played and 1 on the table."""
    expected_table = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    expected_hand = [14, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    for s in range(4):
        assert TABLE_VALUE[s * 13 : s * 13 + 13].tolist() == expected_table
        assert HAND_VALUE[s * 13 : s * 13 + 13].tolist() == expected_hand


# ----------------------------------------------------------------------------- K4
def test_k4_points_per_card() -> None:
    """K4: 10D 3, 2S 2, AS 2, other spades 1, other aces 1, everything else 0."""
    expected = {nm: 0 for nm in ALL_52}
    for r in RANK_NAMES:
        expected[r + "S"] = 1
    for s in SUIT_NAMES:
        expected["A" + s] = 1
    expected.update({"10D": 3, "2S": 2, "AS": 2})
    assert {nm: int(POINTS[card_code(nm)]) for nm in ALL_52} == expected


def test_k4_total_points_is_42() -> None:
    """K4: the 104 cards hold exactly 42 points."""
    # one deck: 10D 3 + 2S 2 + AS 2 + 11 other spades + 3 other aces = 21
    assert int(POINTS[ordered_deck().astype(np.int64)].sum()) == 42


# ----------------------------------------------------------------------------- parse_deck
def test_parse_deck_valid_keeps_order() -> None:
    """A valid 104-name deck parses to its codes in the given order."""
    names = full_deck_names()[::-1]
    codes = parse_deck(names)
    assert codes.shape == (104,)
    assert codes[0] == 51 and codes[1] == 50 and codes[-1] == 0
    assert [card_name(c) for c in codes] == names


def test_parse_deck_wrong_length() -> None:
    """parse_deck: 103 or 105 cards is an error naming the count."""
    names = full_deck_names()
    with pytest.raises(ValueError, match="103"):
        parse_deck(names[:-1])
    with pytest.raises(ValueError, match="105"):
        parse_deck(names + ["AC"])


def test_parse_deck_wrong_counts() -> None:
    """parse_deck: a third copy of one card (and a missing one) is an error naming the cards."""
    names = full_deck_names()
    names[names.index("KS")] = "AC"  # AC x3, KS x1
    with pytest.raises(ValueError) as err:
        parse_deck(names)
    assert "AC" in str(err.value) and "KS" in str(err.value)


def test_parse_deck_bad_name() -> None:
    """parse_deck: an unknown card name is a ValueError naming it."""
    names = full_deck_names()
    names[5] = "XX"
    with pytest.raises(ValueError, match="XX"):
        parse_deck(names)


def test_parse_deck_not_a_list() -> None:
    """parse_deck: something that is not a list of names is a ValueError."""
    with pytest.raises(ValueError):
        parse_deck("AC 2C")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        parse_deck(None)  # type: ignore[arg-type]
