"""The rules configuration: players, deal patterns, variants, teams (RULES.md K5–K8, K17, K18)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from krypenv.krypkasino.rules import Rules, alternating_teams, parse_teams, teams_tag

# K6, copied by hand from the table in RULES.md: pattern, hand, table, rounds.
K6_TABLE: dict[int, tuple[tuple[tuple[str, int], ...], int, int, int]] = {
    2: ((("P", 3), ("T", 2), ("P", 3), ("T", 2)), 6, 4, 12),
    3: ((("P", 3), ("T", 3), ("P", 2), ("T", 2)), 5, 5, 8),
    4: ((("P", 3), ("T", 2), ("P", 2), ("T", 2)), 5, 4, 6),
    5: ((("P", 2), ("T", 2), ("P", 2), ("T", 2)), 4, 4, 5),
    6: ((("P", 3), ("T", 2), ("P", 2)), 5, 2, 4),
}


def test_defaults_match_the_game_record_example() -> None:
    """Defaults: 3 players, no teams, 6+4, court cards set aside, no last-capture point."""
    r = Rules()
    got = (r.players, r.teams, r.two_player_deal, r.set_aside, r.last_capture_point)
    assert got == (3, None, "6+4", "court", False)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_k5_k6_deal_table(players: int) -> None:
    """K5/K6: 2..6 players, with the pattern, hand size, table size and rounds of the K6 table."""
    pattern, hand, table, rounds = K6_TABLE[players]
    r = Rules(players=players)
    assert tuple(r.initial_pattern) == pattern
    assert (r.hand_size, r.table_size, r.rounds) == (hand, table, rounds)
    assert r.decisions_per_deal == 104 - table


def test_k6_five_plus_six_variant() -> None:
    """K6: two_player_deal='5+6' is P3 T3 P2 T3: 5 in hand, 6 on the table, 12 rounds."""
    r = Rules(players=2, two_player_deal="5+6")
    assert tuple(r.initial_pattern) == (("P", 3), ("T", 3), ("P", 2), ("T", 3))
    assert (r.hand_size, r.table_size, r.rounds) == (5, 6, 12)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_k6_five_plus_six_only_for_two_players(players: int) -> None:
    """K6: the 5+6 variant needs exactly 2 players; the message names the field."""
    with pytest.raises(ValueError, match="two_player_deal"):
        Rules(players=players, two_player_deal="5+6")


@pytest.mark.parametrize("players", [0, 1, 7, 8, -2, True, 3.0, "3", None])
def test_k5_bad_player_counts(players: Any) -> None:
    """K5: players must be an integer 2..6; the message names 'players'."""
    with pytest.raises(ValueError, match="players"):
        Rules(players=players)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("two_player_deal", "7+3"),
        ("two_player_deal", "6+4 "),
        ("two_player_deal", None),
        ("set_aside", "aces"),
        ("set_aside", "Court"),
        ("set_aside", None),
        ("last_capture_point", "yes"),
        ("last_capture_point", 1),
        ("last_capture_point", None),
    ],
)
def test_unknown_variant_values(field: str, value: Any) -> None:
    """K6/K8/K17 variants: an unknown value is a ValueError naming the field."""
    kwargs: dict[str, Any] = {"players": 2, field: value}
    with pytest.raises(ValueError, match=field):
        Rules(**kwargs)


@pytest.mark.parametrize(
    ("players", "teams", "normalised", "team_of"),
    [
        (4, [[0, 2], [1, 3]], ((0, 2), (1, 3)), [0, 1, 0, 1]),
        (4, [[3, 1], [2, 0]], ((0, 2), (1, 3)), [0, 1, 0, 1]),
        (6, [[0, 2, 4], [1, 3, 5]], ((0, 2, 4), (1, 3, 5)), [0, 1, 0, 1, 0, 1]),
        (6, [[0, 3], [1, 4], [2, 5]], ((0, 3), (1, 4), (2, 5)), [0, 1, 2, 0, 1, 2]),
        (6, [[5, 2], [4, 1], [3, 0]], ((0, 3), (1, 4), (2, 5)), [0, 1, 2, 0, 1, 2]),
    ],
)
def test_k18_valid_teams(
    players: int, teams: list[list[int]], normalised: tuple[tuple[int, ...], ...], team_of: list[int]
) -> None:
    """K18: alternating teams are accepted (any order), normalised, and every seat's neighbours are opponents."""
    r = Rules(players=players, teams=teams)
    assert r.teams == normalised
    assert [r.team_of(s) for s in range(players)] == team_of
    assert r.n_teams == len(normalised)
    for s in range(players):
        assert r.team_of(s) != r.team_of((s + 1) % players)


def test_no_teams_each_seat_is_its_own_side() -> None:
    """K18: without teams every seat scores for itself."""
    r = Rules(players=5)
    assert [r.team_of(s) for s in range(5)] == [0, 1, 2, 3, 4]
    assert r.n_teams == 5


def test_teams_tag_names_the_sides() -> None:
    """K18 teams as a file and folder tag: seats of each team, teams joined by '+'; empty without teams."""
    assert teams_tag(Rules(players=4, teams=[[2, 0], [3, 1]]).teams) == "02+13"
    assert teams_tag(Rules(players=6, teams=[[0, 3], [1, 4], [2, 5]]).teams) == "03+14+25"
    assert teams_tag(Rules(players=6, teams=[[1, 3, 5], [0, 2, 4]]).teams) == "024+135"
    assert teams_tag(Rules(players=4).teams) == teams_tag(None) == ""


def test_teams_by_number_alternate_seats() -> None:
    """K18 by a number of teams: seat s in team s mod k, only where the rules allow that seating."""
    assert alternating_teams(2, 4) == ((0, 2), (1, 3))
    assert alternating_teams(2, 6) == ((0, 2, 4), (1, 3, 5)) and alternating_teams(3, 6) == ((0, 3), (1, 4), (2, 5))
    for k, players, words in [(1, 4, "a number of teams is 2 or 3"), (4, 6, "a number of teams is 2 or 3"),
                              (True, 4, "a number of teams is 2 or 3"), (2, 3, "teams need 4 or 6 players"),
                              (2, 2, "teams need 4 or 6 players"), (3, 4, "do not alternate seats")]:
        with pytest.raises(ValueError, match=words):
            alternating_teams(k, players)


def test_teams_parsing() -> None:
    """K18 teams from a command line (krypenv eval, play, train.py): none, a number of teams or seat lists."""
    assert parse_teams(None, 4) is None and parse_teams("none", 4) is None
    assert parse_teams("2", 4) == ((0, 2), (1, 3))
    assert parse_teams("2", 6) == ((0, 2, 4), (1, 3, 5))
    assert parse_teams("3", 6) == ((0, 3), (1, 4), (2, 5))
    assert parse_teams("1,3/0,2", 4) == ((0, 2), (1, 3))
    for bad, players in [("2", 3), ("0,1/2,3", 4), ("x", 4), ("3", 4)]:
        with pytest.raises(ValueError, match="teams"):
            parse_teams(bad, players)


@pytest.mark.parametrize(
    ("players", "teams"),
    [
        (4, [[0, 1], [2, 3]]),  # neighbours on the same team
        (4, [[0, 3], [1, 2]]),
        (4, [[0, 2], [1]]),  # seat 3 missing
        (4, [[0, 2], [1, 3], []]),
        (4, [[0, 2], [1, 3, 3]]),
        (4, [[0, 2, 1, 3]]),
        (4, [[0], [1], [2], [3]]),
        (6, [[0, 1, 2], [3, 4, 5]]),
        (6, [[0, 2], [1, 4], [3, 5]]),  # neighbours are opponents, but not the K18 seating
        (6, [[0, 1], [2, 3], [4, 5]]),
        (6, [[0, 2, 4], [1, 3]]),
        (6, [[0, 2, 4], [1, 3, 5, 6]]),
        (2, [[0], [1]]),
        (3, [[0], [1], [2]]),
        (5, [[0, 2], [1, 3, 4]]),
        (4, "ab"),
        (4, 5),
        (4, [["a"], ["b"]]),
    ],
)
def test_k18_invalid_teams(players: int, teams: Any) -> None:
    """K18: non-alternating seatings, wrong player counts and malformed teams raise ValueError naming teams."""
    with pytest.raises(ValueError, match="teams"):
        Rules(players=players, teams=teams)


def test_k18_seven_players_with_teams() -> None:
    """K5/K18: 7 players are rejected even with an alternating-looking seating."""
    with pytest.raises(ValueError, match="players"):
        Rules(players=7, teams=[[0, 2, 4, 6], [1, 3, 5]])


def test_rules_are_frozen() -> None:
    """A Rules object is immutable."""
    r = Rules(players=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.players = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"players": 2, "two_player_deal": "5+6"},
        {"players": 3, "set_aside": "spades"},
        {"players": 4, "teams": [[0, 2], [1, 3]], "last_capture_point": True},
        {"players": 6, "teams": [[0, 3], [1, 4], [2, 5]], "set_aside": "spades"},
        {"players": 6, "teams": [[0, 2, 4], [1, 3, 5]]},
        {"players": 5, "last_capture_point": True},
    ],
)
def test_to_dict_from_dict_round_trip(kwargs: dict[str, Any]) -> None:
    """Game record 'rules': to_dict is JSON-able with exactly the record keys, and from_dict restores it."""
    r = Rules(**kwargs)
    d = r.to_dict()
    assert set(d) == {"players", "teams", "two_player_deal", "set_aside", "last_capture_point"}
    text = json.dumps(d)
    back = Rules.from_dict(json.loads(text))
    assert back == r
    assert back.to_dict() == d
    if r.teams is not None:
        assert d["teams"] == [list(t) for t in r.teams]


def test_to_dict_exact() -> None:
    """to_dict writes the record format of RULES.md exactly."""
    assert Rules(players=4, teams=[[1, 3], [0, 2]]).to_dict() == {
        "players": 4,
        "teams": [[0, 2], [1, 3]],
        "two_player_deal": "6+4",
        "set_aside": "court",
        "last_capture_point": False,
    }


def test_from_dict_errors() -> None:
    """from_dict: unknown keys are named; a non-object is rejected; bad values still validated."""
    with pytest.raises(ValueError, match="colour"):
        Rules.from_dict({"players": 3, "colour": "red"})
    with pytest.raises(ValueError):
        Rules.from_dict([("players", 3)])
    with pytest.raises(ValueError, match="players"):
        Rules.from_dict({"players": 9})
