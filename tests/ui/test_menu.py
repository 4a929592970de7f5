"""The agents ``krypenv serve`` offers and accepts, on their own: names, bounded options, checkpoints by name.

Quick (no server, no game), so that a mutation run (docs/results/mutation.md) runs them for every
mutant of ``krypenv/ui/menu.py``; the hostile-client tests send the same specs over HTTP.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from krypenv.agents.base import find_entry
from krypenv.agents.checkpoint import SHIPPED

from krypenv import agents
from krypenv.ui.krypkasino import rules_of
from krypenv.ui.kungsholmskille import rules_of as kille_rules_of
from krypenv.ui.menu import MAX_SPEC, AgentMenu, Checkpoint, _fits, is_tabular_file, read_checkpoint

TWO = rules_of(2, {})
THREE = rules_of(3, {})
TINY = rules_of(2, {"preset": "tiny"})


@pytest.fixture(scope="module")
def menu() -> AgentMenu:
    """The menu of a server started without --checkpoint."""
    return AgentMenu.build()


def offered(menu: AgentMenu, game: str) -> dict[str, dict[str, Any]]:
    """The page's offer for ``game`` by spec."""
    return {item["spec"]: item for item in menu.offer(game)}


# ---------------------------------------------------------------- what the page is offered
def test_the_offer_is_every_registered_name_and_each_shipped_checkpoint(menu: AgentMenu) -> None:
    """Every registered agent of the game that takes no path, for any table; each shipped checkpoint of the game by
    name, for its players and preset; never a path, never another game's checkpoint."""
    kasino = offered(menu, "krypkasino")
    for name, summary in agents.known("krypkasino").items():
        entry = find_entry(name, "krypkasino")
        if entry is not None and not entry.takes_path:
            assert kasino[name]["summary"] == summary and kasino[name]["players"] is None
    assert kasino["expert"]["presets"] is None and kasino["champion"]["presets"] == ["standard"]
    assert "ppo" not in kasino and not any("/" in spec for spec in kasino)
    for players in (2, 3, 4, 6):
        item = kasino[f"ppo:ppo-{players}p"]
        assert item["players"] == [players] and item["presets"] == ["standard"]
        assert item["summary"] == f"learned policy from checkpoint ppo-{players}p (krypkasino, {players} players)"
    kille = offered(menu, "kungsholmskille")
    assert all(kille[name]["summary"] == summary for name, summary in agents.known("kungsholmskille").items()
               if name in kille)
    assert kille["ppo:kille-4p"]["players"] == [4] and "ppo:ppo-2p" not in kille and "ppo:kille-4p" not in kasino
    assert "timid" in kille and "timid" not in kasino


def test_offered_at_names_what_fits_a_table(menu: AgentMenu, monkeypatch: pytest.MonkeyPatch) -> None:
    """The specs offered at a table of given players and preset; "none" when nothing fits."""
    at_two = menu.offered_at("krypkasino", TWO).split(", ")
    assert "ppo:ppo-2p" in at_two and "ppo:ppo-3p" not in at_two and "champion" in at_two
    assert "champion" not in menu.offered_at("krypkasino", TINY).split(", ")
    empty = AgentMenu([])
    monkeypatch.setattr(empty, "offer", lambda game: [{"spec": "ppo:x", "players": [5], "presets": None}])
    assert empty.offered_at("krypkasino", TWO) == "none"


@given(players=st.integers(2, 6), offer_players=st.none() | st.lists(st.integers(2, 6), max_size=3),
       preset=st.sampled_from(["standard", "tiny", "small"]),
       offer_presets=st.none() | st.lists(st.sampled_from(["standard", "tiny", "small"]), max_size=2))
def test_fits_is_players_and_preset_each_none_for_any(players: int, offer_players: list[int] | None, preset: str,
                                                      offer_presets: list[str] | None) -> None:
    """An offer fits a table when its players (None: any) hold the table's count and its presets (None: any) its
    preset."""

    class Table:
        pass

    table = Table()
    table.players, table.preset_name = players, preset  # type: ignore[attr-defined]
    expected = ((offer_players is None or players in offer_players)
                and (offer_presets is None or preset in offer_presets))
    assert _fits({"players": offer_players, "presets": offer_presets}, table) is expected


# ---------------------------------------------------------------- what a request may name
@pytest.mark.parametrize("spec,resolved", [
    ("expert", "expert"), (" random ", "random"), ("pimc", "pimc"), ("pimc:samples=16", "pimc:samples=16"),
    ("pimc:samples=256,rollouts=4,z=10", "pimc:samples=256,rollouts=4,z=10"), ("pimc:z=0.5", "pimc:z=0.5"),
    ("pimc:voids=true", "pimc:voids=true"), ("pimc:samples=1", "pimc:samples=1"), ("champion", "champion"),
])
def test_registered_names_with_bounded_options_resolve_to_themselves(menu: AgentMenu, spec: str,
                                                                    resolved: str) -> None:
    """A registered name, with options within their declared bounds, is the spec ``agents.load`` builds."""
    assert menu.resolve(spec, "krypkasino", TWO) == resolved


def test_checkpoints_resolve_by_name_to_their_paths(menu: AgentMenu) -> None:
    """``ppo:NAME`` and ``pimc:policy=ppo:NAME`` become the shipped file's path, at the table it was trained for."""
    path = (SHIPPED / "ppo-2p.zip").resolve()
    assert menu.resolve("ppo:ppo-2p", "krypkasino", TWO) == f"ppo:{path}"
    assert menu.resolve("pimc:policy=ppo:ppo-2p,samples=4", "krypkasino", TWO) == f"pimc:policy=ppo:{path},samples=4"
    kille = (SHIPPED / "kille-4p.zip").resolve()
    assert menu.resolve("ppo:kille-4p", "kungsholmskille", kille_rules_of(4, {})) == f"ppo:{kille}"


@pytest.mark.parametrize("spec,words", [
    (None, "an agent must be a non-empty spec string, got null"), ("", "non-empty"), ("   ", "non-empty"),
    (7, "got 7"), (["expert"], "non-empty spec string"),
    ("x" * (MAX_SPEC + 1), f"agent spec of {MAX_SPEC + 1} characters is over the limit of {MAX_SPEC}"),
    ("x" * MAX_SPEC, f"unknown agent '{'x' * MAX_SPEC}'"), (["a" * 100], f"got {json.dumps(['a' * 100])[:80]}"),
    ("pimc:samples", "agent spec 'pimc:samples': options must be key=value pairs"),
    ("nobody", "unknown agent 'nobody' for krypkasino; the server plays only the agents it offers: "),
    ("timid", "unknown agent 'timid' for krypkasino (it plays another game)"),
    ("os:system", "unknown agent 'os'"), ("krypenv.agents.base:RandomAgent", "unknown agent"),
    ("pimc:samples=0", "option samples must be an integer from 1 to 256, got 0"),
    ("pimc:samples=257", "samples must be"), ("pimc:rollouts=5", "rollouts must be"), ("pimc:z=11", "z must be"),
    ("pimc:threads=2", "option 'threads' cannot be set over the network (options pimc takes here: samples, "),
    ("pimc:device=cuda", "option 'device' cannot be set over the network (options pimc takes here: samples, "),
    ("expert:depth=2", "option 'depth' cannot be set over the network (options expert takes here: none)"),
    ("ppo:/tmp/evil.zip", "the server has no ppo checkpoint named '/tmp/evil.zip' for krypkasino"),
    ("ppo:ppo-9p", ("(it loads only the shipped checkpoints and those named with --checkpoint at start-up, by name, "
                    "never a path; offered: ppo:ppo-2p, ppo:ppo-3p, ppo:ppo-4p-teams02+13, ppo:ppo-4p, ppo:ppo-6p)")),
    ("ppo:kille-4p", "agent 'ppo:kille-4p': the server has no ppo checkpoint named 'kille-4p' for krypkasino"),
    ("ppo:ppo-3p", ("agent 'ppo:ppo-3p': checkpoint ppo-3p was trained for 3 players and the standard preset, not "
                    "this table's 2 players and standard preset; offered at this table: champion, creeper, expert, "
                    "greedy, pimc, random, ppo:ppo-2p")),
    ("pimc:policy=ppo:ppo-3p", "agent 'pimc:policy=ppo:ppo-3p': checkpoint ppo-3p was trained for 3 players"),
    ("pimc:policy=ppo:/etc/passwd", "never a path"),
    ("pimc:policy=champion", "option policy must be one of random, greedy, creeper, expert, ppo:NAME, got 'champion'"),
])
def test_anything_else_is_refused_naming_why(menu: AgentMenu, spec: Any, words: str) -> None:
    """Not a string, too long, not registered (a module:attr included: nothing is imported), an option out of
    bounds or not declared for outside use, a checkpoint that is not the server's or does not fit the table."""
    modules = set(sys.modules)
    with pytest.raises(ValueError) as info:
        menu.resolve(spec, "krypkasino", TWO)
    assert words in str(info.value), str(info.value)
    assert "os" not in set(sys.modules) - modules


def test_an_unknown_name_lists_every_offer_of_the_game(menu: AgentMenu) -> None:
    """The refusal of an unknown agent names what the server plays instead, for that game."""
    offers = ", ".join(item["spec"] for item in menu.offer("kungsholmskille"))
    with pytest.raises(ValueError) as info:
        menu.resolve("greedy", "kungsholmskille", kille_rules_of(4, {}))
    assert str(info.value) == (f"unknown agent 'greedy' for kungsholmskille (it plays another game); the server plays "
                               f"only the agents it offers: {offers}")
    with pytest.raises(ValueError, match=r"offered: none\)"):
        AgentMenu([]).resolve("ppo:x", "krypkasino", TWO)


def test_an_agent_for_other_presets_is_refused_at_this_one(menu: AgentMenu) -> None:
    """``champion`` plays the standard preset only: at a tiny table a 400 naming both presets and what fits."""
    with pytest.raises(ValueError, match=r"champion plays only the standard preset, not this table's tiny one; "
                                         r"offered at this table: "):
        menu.resolve("champion", "krypkasino", TINY)
    with pytest.raises(ValueError, match="trained for 2 players and the standard preset, not this table's 2 players "
                                         "and tiny preset"):
        menu.resolve("ppo:ppo-2p", "krypkasino", TINY)


def test_the_refusal_names_every_preset_an_agent_plays(menu: AgentMenu, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent of two presets, at a third: both are named."""
    from dataclasses import replace

    from krypenv.agents import base

    entries = [replace(e, presets=("standard", "small")) for e in base._REGISTRY["champion"]]
    monkeypatch.setitem(base._REGISTRY, "champion", entries)
    with pytest.raises(ValueError, match="champion plays only the standard or small preset, not this table's tiny"):
        menu.resolve("champion", "krypkasino", TINY)


def test_a_checkpoint_of_unknown_players_or_preset_fits_any_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint whose metadata gives no preset (None), or an RLlib one of no player count (0), is offered for any
    table and plays at any."""
    menu = AgentMenu([Checkpoint("odd", "ppo", Path("/x/odd.zip"), "krypkasino", 2, None),
                      Checkpoint("rl", "rllib", Path("/x/rl"), "krypkasino", 0, "standard")])
    odd = offered(menu, "krypkasino")["ppo:odd"]
    assert odd["players"] == [2] and odd["presets"] is None
    assert menu.resolve("ppo:odd", "krypkasino", TINY) == "ppo:/x/odd.zip"
    assert menu.resolve("rllib:rl", "krypkasino", THREE) == "rllib:/x/rl"


# ---------------------------------------------------------------- the server's table of checkpoints
def card(name: str, path: str = "/x/a.zip", kind: str = "ppo") -> Checkpoint:
    """A checkpoint of the table (nothing read)."""
    return Checkpoint(name, kind, Path(path), "krypkasino", 2)


def test_the_table_refuses_names_that_cannot_stand_in_a_spec() -> None:
    """Two checkpoints of one name, a name with other characters than letters, digits and -_+., a path with a
    comma: refused when the server starts, naming the file."""
    with pytest.raises(ValueError, match=r"two checkpoints are named 'a' \(/x/a.zip and /y/a.zip\); rename one"):
        AgentMenu([card("a"), card("a", "/y/a.zip")])
    for name in ("a b", "a:b", "a,b", "", "a/b"):
        with pytest.raises(ValueError, match="may hold only letters, digits and -_"):
            AgentMenu([card(name)])
    every = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+."
    assert set(AgentMenu([card(every)]).checkpoints) == {every}  # every allowed character at once
    with pytest.raises(ValueError, match="a path with a comma cannot stand in an agent spec"):
        AgentMenu([card("a", "/x,y/a.zip")])
    menu = AgentMenu([card("A-b_c+1.2"), card("rl", "/x/rl", "rllib")])
    assert set(menu.checkpoints) == {"A-b_c+1.2", "rl"} and menu.tabulars == {}


def test_named_checkpoints_join_and_replace_the_shipped_ones(tmp_path: Path) -> None:
    """``--checkpoint FILE`` adds it by its file name, replacing a shipped one of that name; a file that is not a
    checkpoint stops the start, naming it."""
    mine = tmp_path / "ppo-2p.zip"
    shutil.copy(SHIPPED / "ppo-2p.zip", mine)
    shutil.copy(SHIPPED / "ppo-3p.zip", tmp_path / "extra.zip")
    menu = AgentMenu.build([str(mine), str(tmp_path / "extra.zip")])
    assert menu.checkpoints["ppo-2p"].path == mine.resolve() and menu.checkpoints["extra"].players == 3
    assert menu.checkpoints["ppo-4p"].path == (SHIPPED / "ppo-4p.zip").resolve()
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"--checkpoint .*junk.zip: "):
        AgentMenu.build([str(tmp_path / "junk.zip")])
    empty = AgentMenu.build(shipped=tmp_path / "none")
    assert empty.checkpoints == {} and empty.offered_at("krypkasino", TWO) != "none"


def test_a_named_checkpoints_path_keeps_its_case(tmp_path: Path) -> None:
    """The path a name resolves to is the file's, capitals and all (only boolean options are written lower-case)."""
    mine = tmp_path / "MyPolicy.zip"
    shutil.copy(SHIPPED / "ppo-2p.zip", mine)
    menu = AgentMenu.build([str(mine)])
    assert menu.resolve("pimc:policy=ppo:MyPolicy,voids=True", "krypkasino", TWO) == (
        f"pimc:policy=ppo:{mine.resolve()},voids=true")


def test_an_rllib_folder_is_read_by_its_metadata(tmp_path: Path) -> None:
    """An RLlib checkpoint folder: its name is the folder's (dots kept), its game and players from krypenv.json
    (players 0 when absent); nothing else is read."""
    from krypenv.agents.rllib_agent import FORMAT, META_NAME

    folder = tmp_path / "run.v2"
    folder.mkdir()
    (folder / META_NAME).write_text(json.dumps({"format": FORMAT, "game": "kungsholmskille", "players": 4}))
    c = read_checkpoint(folder, ("krypkasino", "kungsholmskille"))
    assert (c.name, c.kind, c.path, c.game, c.players) == ("run.v2", "rllib", folder.resolve(), "kungsholmskille", 4)
    (folder / META_NAME).write_text(json.dumps({"format": FORMAT, "game": "krypkasino"}))
    assert read_checkpoint(folder, ("krypkasino",)).players == 0


def test_read_checkpoint_reads_metadata_only(tmp_path: Path) -> None:
    """A ppo zip's name, game, players and preset from its metadata; one of a game not served is refused."""
    c = read_checkpoint(SHIPPED / "ppo-4p.zip", ("krypkasino", "kungsholmskille"))
    assert (c.name, c.kind, c.game, c.players, c.preset) == ("ppo-4p", "ppo", "krypkasino", 4, "standard")
    assert c.path == (SHIPPED / "ppo-4p.zip").resolve()
    with pytest.raises(ValueError, match=r"trained for kungsholmskille, not one of the games served \(krypkasino, x\)"):
        read_checkpoint(SHIPPED / "kille-4p.zip", ("krypkasino", "x"))
    tiny = read_checkpoint(SHIPPED / "tiny" / "ppo-tiny.zip", ("krypkasino",))
    assert tiny.preset == "tiny" and "preset tiny" in tiny.summary()


@pytest.mark.parametrize("path,tabular", [("a.json", True), ("a.json.gz", True), ("a.zip", False),
                                          ("a.json.zip", False), ("json", False), ("dir/", False)])
def test_tabular_files_are_told_by_their_suffix(path: str, tabular: bool) -> None:
    """``.json`` and ``.json.gz`` are tabular policies (JSON, no pickle); anything else a ppo or rllib checkpoint."""
    assert is_tabular_file(path) is tabular


def test_tabular_refusals_name_the_policies_and_every_difference(menu: AgentMenu) -> None:
    """An unknown tabular policy lists the game's (none for a game without one); at another table every rule key that
    differs is named, here and in the policy, and the tables it is offered at."""
    pytest.importorskip("pyspiel", reason="the tabular policies need the extra openspiel")
    [item] = [o for o in menu.offer("krypkasino") if o["spec"] == "tabular:cfr-tiny"]
    assert item["summary"] == menu.tabulars["cfr-tiny"].summary() and item["presets"] == ["tiny"]
    with pytest.raises(ValueError) as info:
        menu.resolve("tabular:nope", "krypkasino", TINY)
    assert str(info.value) == ("agent 'tabular:nope': the server has no tabular policy named 'nope' for krypkasino (it "
                               "plays only the shipped policies and those named with --checkpoint at start-up, by "
                               "name, never a path; offered: tabular:cfr-tiny)")
    with pytest.raises(ValueError, match=r"offered: none\)"):
        menu.resolve("tabular:cfr-tiny", "kungsholmskille", kille_rules_of(4, {}))
    from dataclasses import replace

    two = AgentMenu([], [menu.tabulars["cfr-tiny"], replace(menu.tabulars["cfr-tiny"], name="cfr-b")])
    with pytest.raises(ValueError, match=r"offered: tabular:cfr-tiny, tabular:cfr-b\)"):
        two.resolve("tabular:nope", "krypkasino", TINY)
    with pytest.raises(ValueError) as info:
        menu.resolve(" tabular:cfr-tiny ", "krypkasino", THREE)
    mine, theirs = THREE.to_dict(), menu.tabulars["cfr-tiny"].rules().to_dict()
    differ = [k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    what = "; ".join(f"{k} {mine.get(k)!r} here, {theirs.get(k)!r} in the policy" for k in differ)
    assert len(differ) > 1 and str(info.value) == (
        f"agent 'tabular:cfr-tiny': tabular policy cfr-tiny was solved for 2 players and the tiny preset, not this "
        f"table (3 players, standard preset; {what}); offered at this table: {menu.offered_at('krypkasino', THREE)}")


def test_messages_quote_what_was_sent_cut_short(menu: AgentMenu) -> None:
    """A spec that is not a string is quoted as JSON, 80 characters at most; a preset refusal lists the offers of
    the table's game."""
    with pytest.raises(ValueError) as info:
        menu.resolve(["a" * 100], "krypkasino", TWO)
    assert str(info.value) == f"an agent must be a non-empty spec string, got {json.dumps(['a' * 100])[:80]}"
    with pytest.raises(ValueError) as info:
        menu.resolve("champion", "krypkasino", TINY)
    assert str(info.value).endswith(f"; offered at this table: {menu.offered_at('krypkasino', TINY)}")


def test_the_endgame_wrapper_is_not_served(menu: AgentMenu) -> None:
    """``endgame:SPEC`` wraps any spec, so the server neither offers it nor resolves it: a request for it is refused
    as a checkpoint name it does not hold."""
    assert not any(item["spec"].startswith("endgame") for item in menu.offer("krypkasino"))
    for spec in ("endgame:expert", "endgame:pimc:samples=100000", "endgame:mlp:/etc/passwd"):
        with pytest.raises(ValueError, match=r"the server has no endgame checkpoint named"):
            menu.resolve(spec, "krypkasino", TWO)
