"""The server's menu and tabular policies: offered with the players and preset they were solved for, refused elsewhere.

Issue 26: ``tabular:cfr-tiny`` (checkpoints/cfr-tiny.json.gz, solved for
``python_krypkasino(players=2,preset=tiny)``) plays in the web app at a tiny 2-player table, by
name only; every other table, a path, an unknown name, a file too big or of another game is a
ValueError (the API's 400) naming what is wrong and what is offered, before anything is built.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from krypenv.agents.checkpoint import SHIPPED

from krypenv.ui import tabulars
from krypenv.ui.krypkasino import rules_of
from krypenv.ui.menu import AgentMenu
from krypenv.ui.tabulars import game_params, read_tabular

pytest.importorskip("pyspiel", reason="the tabular policies need the extra openspiel")

from krypenv.openspiel.policy import TabularPolicyFile

TINY = rules_of(2, {"preset": "tiny"})  # K22


@pytest.fixture(scope="module")
def menu() -> AgentMenu:
    """The menu of the shipped checkpoints and policies."""
    return AgentMenu.build()


def offered(menu: AgentMenu, game: str = "krypkasino") -> dict[str, dict[str, Any]]:
    """The menu's offer for ``game`` by spec."""
    return {item["spec"]: item for item in menu.offer(game)}


def test_cfr_tiny_is_offered_with_the_table_it_was_solved_for(menu: AgentMenu) -> None:
    """Players and preset come from the policy's game string; every item carries ``presets``."""
    items = offered(menu)
    assert items["tabular:cfr-tiny"]["players"] == [2] and items["tabular:cfr-tiny"]["presets"] == ["tiny"]
    assert items["expert"]["presets"] is None and items["ppo:ppo-2p"]["presets"] == ["standard"]
    assert items["champion"]["presets"] == ["standard"]  # champion.py: measured on the standard deck only
    assert not any(s.startswith("tabular:") for s in offered(menu, "kungsholmskille"))
    assert all("presets" in item and "players" in item for g in ("krypkasino", "kungsholmskille")
               for item in menu.offer(g))


def test_cfr_tiny_resolves_to_its_file_at_a_tiny_table(menu: AgentMenu) -> None:
    """By name at the table it was solved for: the shipped file's path, for agents.load."""
    assert menu.resolve("tabular:cfr-tiny", "krypkasino", TINY) == f"tabular:{SHIPPED / 'cfr-tiny.json.gz'}"


@pytest.mark.parametrize("spec,rules,words", [
    ("tabular:cfr-tiny", rules_of(2, {}), "not this table (2 players, standard preset;"),
    ("tabular:cfr-tiny", rules_of(3, {}), "players 3 here, 2 in the policy"),
    ("tabular:cfr-tiny", rules_of(2, {"preset": "tiny", "last_capture_point": True}),
     "last_capture_point True here, False in the policy"),
    ("tabular:checkpoints/cfr-tiny.json.gz", TINY, "no tabular policy named 'checkpoints/cfr-tiny.json.gz'"),
    ("tabular:/etc/passwd", TINY, "by name, never a path"),
    ("tabular:cfr-huge", TINY, "no tabular policy named 'cfr-huge' for krypkasino"),
    ("ppo:ppo-2p", TINY, "trained for 2 players and the standard preset, not this table's 2 players and tiny"),
    ("champion", TINY, "champion plays only the standard preset, not this table's tiny one"),
])
def test_refused_elsewhere_naming_what_is_wrong(menu: AgentMenu, spec: str, rules: Any, words: str) -> None:
    """Another preset, player count or rule key, a path, an unknown name: ValueError naming it and what is offered."""
    with pytest.raises(ValueError) as err:
        menu.resolve(spec, "krypkasino", rules)
    assert words in str(err.value) and "offered" in str(err.value), str(err.value)
    if spec.startswith("tabular:cfr-tiny") and rules.players == 2 and rules.preset_name == "standard":
        assert str(err.value).endswith("ppo:ppo-2p") and "tabular:cfr-tiny" not in str(err.value).split("offered")[-1]


def test_without_openspiel_no_policy_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the extra (``import pyspiel`` fails) the menu builds, offers no ``tabular:`` and refuses one by name."""
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # makes ``import pyspiel`` raise ImportError
    menu = AgentMenu.build()
    assert not any(s.startswith("tabular:") for s in offered(menu)) and "expert" in offered(menu)
    with pytest.raises(ValueError, match=r"no tabular policy named 'cfr-tiny' .*offered: none\)"):
        menu.resolve("tabular:cfr-tiny", "krypkasino", TINY)


def tiny_policy_copy(folder: Path, name: str, game: str | None = None) -> Path:
    """A copy of the shipped policy under ``name`` (``.json``), its game string replaced by ``game`` if given."""
    data = json.loads(gzip.decompress((SHIPPED / "cfr-tiny.json.gz").read_bytes()))
    if game is not None:
        data["game"] = game
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_checkpoint_option_adds_a_policy_by_name(tmp_path: Path) -> None:
    """``krypenv serve --checkpoint FILE.json`` offers it by its file name; a bad file stops the start, named."""
    menu = AgentMenu.build([str(tiny_policy_copy(tmp_path, "mine"))])
    assert offered(menu)["tabular:mine"]["presets"] == ["tiny"] and "tabular:cfr-tiny" in offered(menu)
    assert menu.resolve("tabular:mine", "krypkasino", TINY) == f"tabular:{tmp_path / 'mine.json'}"
    other = tiny_policy_copy(tmp_path, "other", "python_poker(players=2)")
    with pytest.raises(ValueError, match=r"--checkpoint .*other.json: .*OpenSpiel game 'python_poker', not one"):
        AgentMenu.build([str(other)])
    (tmp_path / "bad.json").write_text('{"format": "pickle"}')
    with pytest.raises(ValueError, match="format must be 'krypenv-tabular/1'"):
        AgentMenu.build([str(tmp_path / "bad.json")])
    packed = gzip.compress(b'{"format": "krypenv-tabular/1"}' * 50)
    (tmp_path / "corrupt.json.gz").write_bytes(packed[:10] + bytes(b ^ 0x55 for b in packed[10:40]) + packed[40:])
    for load in (lambda: AgentMenu.build([str(tmp_path / "corrupt.json.gz")]),  # a corrupt deflate stream
                 lambda: TabularPolicyFile.load(tmp_path / "corrupt.json.gz")):
        with pytest.raises(ValueError, match=r"corrupt.json.gz: cannot read it .*decompressing"):
            load()


def test_policy_files_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file, or a gzip file's text, over MAX_TABULAR_BYTES is refused before it is parsed."""
    path = tmp_path / "big.json.gz"
    path.write_bytes(gzip.compress(b" " * 5000 + b"{}"))
    monkeypatch.setattr(tabulars, "MAX_TABULAR_BYTES", 4096)
    assert path.stat().st_size < 4096
    with pytest.raises(ValueError, match="JSON text is over the limit of 4096 bytes"):
        read_tabular(path, ("krypkasino",))
    path.write_bytes(b" " * 5000)
    with pytest.raises(ValueError, match="5000 bytes, over the limit of 4096"):
        read_tabular(path, ("krypkasino",))


def test_game_string_parameters() -> None:
    """``python_G(k=v,...)`` as the name and parameters; anything else a ValueError."""
    assert game_params("python_krypkasino(players=2,preset=tiny,ranks=)") == (
        "python_krypkasino", {"players": "2", "preset": "tiny", "ranks": ""})
    assert game_params("python_krypkasino") == ("python_krypkasino", {})
    with pytest.raises(ValueError, match="is not key=value"):
        game_params("python_krypkasino(players)")
    with pytest.raises(ValueError, match=r"is not NAME\(key=value"):
        game_params("python_krypkasino(players=2")
