"""Cards, rules and the action space of Kungsholmskille (KILLE.md L1, L2, L3, L17)."""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.kungsholmskille import actions as A
from krypenv.kungsholmskille.cards import (
    DECK_SIZE,
    N_RANKS,
    RANKS,
    counts_from_names,
    names_from_counts,
    ordered_deck,
    parse_deck,
    rank_index,
    rank_name,
    shuffled_deck,
    shuffled_decks,
)  # fmt: skip
from krypenv.kungsholmskille.rules import Rules


# ----------------------------------------------------------------------------- L1
def test_L1_rank_names_in_index_order() -> None:
    """L1: 21 ranks, blaren lowest … kille highest; 3 is index 5, 12 is index 14."""
    assert N_RANKS == 21 and DECK_SIZE == 42
    assert RANKS[:3] == ("blaren", "blompotta", "krans")
    assert RANKS[3:15] == tuple(str(k) for k in range(1, 13))
    assert RANKS[15:] == ("vardshus", "kavall", "svin", "husar", "gok", "kille")
    assert rank_index("3") == 5 and rank_index("12") == 14 and rank_index("kille") == 20
    assert [rank_name(i) for i in range(21)] == list(RANKS)


@pytest.mark.parametrize("bad", ["Kille", "13", "0", "", "knave", None, 3])
def test_L1_unknown_rank_name_is_a_clear_error(bad: object) -> None:
    """L1: an unknown rank name raises ValueError naming it and listing the ranks."""
    with pytest.raises(ValueError, match="unknown rank name .*blaren, blompotta"):
        rank_index(bad)  # type: ignore[arg-type]


def test_L1_rank_index_range() -> None:
    """L1: rank indices are 0..20."""
    for bad in (-1, 21, True):
        with pytest.raises(ValueError, match="outside 0..20"):
            rank_name(bad)


def test_L1_deck_is_21_ranks_twice() -> None:
    """L1: parse_deck accepts 21 ranks twice in any order and rejects anything else."""
    names = [RANKS[r] for r in ordered_deck()]
    assert parse_deck(names[::-1]).tolist() == list(ordered_deck()[::-1])
    with pytest.raises(ValueError, match="must list 42 rank names, got 41 cards"):
        parse_deck(names[:-1])
    with pytest.raises(ValueError, match="not 21 ranks twice.*blaren x3.*kille x1"):
        parse_deck(names[:-1] + ["blaren"])
    with pytest.raises(ValueError, match="unknown rank name 'joker'"):
        parse_deck(names[:-1] + ["joker"])
    with pytest.raises(ValueError, match="got str"):
        parse_deck("blaren " * 42)  # type: ignore[arg-type]


def test_L1_counts_and_names_round_trip() -> None:
    """L1: two copies of a rank are indistinguishable: a hand is a count vector."""
    c = counts_from_names(["gok", "3", "gok"])
    assert c[19] == 2 and c[5] == 1 and c.sum() == 3
    assert names_from_counts(c) == ["3", "gok", "gok"]


def test_L1_shuffled_decks_do_not_depend_on_batch_size() -> None:
    """L1: row i of shuffled_decks depends only on row i of the uniforms, so on the seed, not on n."""
    a = shuffled_decks(np.random.default_rng(7), 5)
    b = shuffled_decks(np.random.default_rng(7), 9)
    assert a.dtype == np.int8 and a.shape == (5, 42)
    u = np.random.default_rng(7).random((9, 41))
    assert np.array_equal(a[0], b[0])  # the first row uses the first 41 uniforms either way
    for row in a:
        assert sorted(row.tolist()) == sorted(list(range(21)) * 2)
    assert u.shape == (9, 41)
    one = shuffled_deck(np.random.default_rng(7))
    assert np.array_equal(one, a[0])
    assert len({tuple(r) for r in b}) == 9  # distinct shuffles


# ----------------------------------------------------------------------------- L2, L3
def test_L2_players_2_to_6() -> None:
    """L2: 2 to 6 players; anything else is a ValueError naming the field."""
    for p in range(2, 7):
        r = Rules(p)
        assert r.default_dealer == p - 1 and r.max_moves == 9 * p - 1
        assert r.talon_size == 42 - 5 * p >= 2 * p  # L8: the talon always suffices
    for bad in (1, 7, 0, "4", 4.0, True, None):
        with pytest.raises(ValueError, match="players must be an integer from 2 to 6"):
            Rules(bad)  # type: ignore[arg-type]


def test_L3_first_pot_is_two_each() -> None:
    """L3: before the first deal every player puts 2 into the pot."""
    assert [Rules(p).initial_pot for p in range(2, 7)] == [4, 6, 8, 10, 12]


def test_L18_rules_object_round_trips() -> None:
    """L18: the record's rules object is exactly {"players": P}."""
    assert Rules(5).to_dict() == {"players": 5}
    assert Rules.from_dict({"players": 3}) == Rules(3)
    with pytest.raises(ValueError, match="unknown rules key"):
        Rules.from_dict({"players": 3, "teams": None})
    with pytest.raises(ValueError, match="must give players"):
        Rules.from_dict({})
    with pytest.raises(ValueError, match="must be an object"):
        Rules.from_dict([4])


# ----------------------------------------------------------------------------- L17 action space
def test_L17_action_layout() -> None:
    """L17: the fixed Discrete(279) layout: calls 0–5, discard:X 6+x, pairs 27+pair(x,y), play:X 258+x."""
    assert A.N_ACTIONS == 279
    assert [A.action_name(a) for a in range(6)] == ["bud", "knacka", "fold", "stay", "stand", "show"]
    assert A.action_name(6) == "discard:blaren" and A.action_name(26) == "discard:kille"
    assert A.action_name(27) == "discard:blaren,blaren"
    assert A.action_name(28) == "discard:blaren,blompotta"
    assert A.action_name(47) == "discard:blaren,kille"
    assert A.action_name(48) == "discard:blompotta,blompotta"
    assert A.action_name(257) == "discard:kille,kille"
    assert A.action_name(258) == "play:blaren" and A.action_name(278) == "play:kille"
    assert A.action_name(258 + 5) == "play:3"


def test_L17_pairs_in_lexicographic_order() -> None:
    """L17: the 231 pairs x ≤ y are numbered in lexicographic order."""
    pairs = [(x, y) for x in range(21) for y in range(x, 21)]
    assert len(pairs) == 231
    for k, (x, y) in enumerate(pairs):
        assert A.action_name(27 + k) == f"discard:{RANKS[x]},{RANKS[y]}"
        assert A.discard_action(y, x) == A.discard_action(x, y) == 27 + k
    assert A.parse_move("discard:7,gok") == 27 + pairs.index((9, 19))


def test_L8_discard_ranks_inverts_discard_action() -> None:
    """L8: the ranks an exchange move discards: none for stand, one or two (lower first) for a discard."""
    assert A.discard_ranks(A.STAND) == []
    for x in range(21):
        assert A.discard_ranks(A.discard_action(x)) == [x]
        for y in range(x, 21):
            assert A.discard_ranks(A.discard_action(y, x)) == [x, y]
    for other in (A.BUD, A.SHOW, A.play_action(3)):
        with pytest.raises(ValueError, match="not an exchange move"):
            A.discard_ranks(other)


def test_L17_every_name_parses_back() -> None:
    """L17: parse_move inverts action_name for all 279 actions; names are distinct."""
    names = [A.action_name(a) for a in range(279)]
    assert len(set(names)) == 279
    assert [A.parse_move(n) for n in names] == list(range(279))


@pytest.mark.parametrize("text, message", [
    ("discard:gok,7", "lists the higher rank first; write 'discard:7,gok'"),
    ("play:joker", "unknown rank name 'joker'"),
    ("discard:7,joker", "unknown rank name 'joker'"),
    ("knock", "unknown move 'knock'"),
    ("Bud", "unknown move 'Bud'"),
    ("play:7,8", "play takes one rank"),
    ("discard:1,2,3", "discard takes one or two ranks"),
    ("play: 7", "unknown rank name ' 7'"),
    ("", "unknown move ''"),
])  # fmt: skip
def test_L17_bad_move_strings(text: str, message: str) -> None:
    """L17: a bad move string is a ValueError saying what is wrong (lower rank first in a pair)."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        A.parse_move(text)


def test_L17_non_string_move() -> None:
    """L17: a move is a string."""
    with pytest.raises(ValueError, match="a move must be a string"):
        A.parse_move(3)  # type: ignore[arg-type]
    for bad in (-1, 279, 2.0, True):
        with pytest.raises(ValueError, match="outside 0..278"):
            A.action_name(bad)  # type: ignore[arg-type]


def test_L17_action_kinds() -> None:
    """L17: action_kind names the kind of each index range."""
    assert [A.action_kind(a) for a in (0, 1, 2, 3, 4, 5, 6, 27, 257, 258, 278)] == [
        "bud", "knacka", "fold", "stay", "stand", "show", "discard", "discard", "discard", "play", "play"]
