"""``krypenv eval`` for every registered game (krypenv.eval.command): dispatch, shared options, one-line errors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from krypenv.eval.command import check_options, split_specs

from krypenv.cli import main
from krypenv.games import GAMES

INTERFACE = ("EvalConfig", "Played", "Results", "evaluate", "OPTIONS", "config_from_args", "default_out", "run_eval")


def test_split_specs() -> None:
    assert split_specs("expert, greedy") == ["expert", "greedy"]
    assert split_specs("pimc:samples=32,rollouts=4,greedy,mod:Cls") == [
        "pimc:samples=32,rollouts=4", "greedy", "mod:Cls"]
    assert split_specs("pimc:samples=8,policy=ppo:c/p.zip,z=1,expert") == [
        "pimc:samples=8,policy=ppo:c/p.zip,z=1", "expert"]


@pytest.mark.parametrize("name", GAMES)
def test_every_game_has_an_eval_part_with_the_interface(name: str) -> None:
    part = GAMES[name].part("eval")
    missing = [attr for attr in INTERFACE if not hasattr(part, attr)]
    assert not missing, missing
    config = part.EvalConfig(agents=("random", "random"), players=4, deals=2)
    assert part.default_out(config).parts[0] == "evals" and config.schedule.n_games > 0


@pytest.mark.parametrize("name", GAMES)
def test_another_games_options_are_refused_by_name(name: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Each option another game declares, given to this game's evaluation, is a one-line error naming it."""
    own = GAMES[name].part("eval").OPTIONS
    for other in GAMES.values():
        for dest in other.part("eval").OPTIONS:
            if other.name == name or dest in own:
                continue
            with pytest.raises(ValueError, match=f"--{dest.replace('_', '-')}: {other.title} option"):
                check_options(argparse.Namespace(**{dest: "given"}), name)
    check_options(argparse.Namespace(), name)  # nothing given: nothing refused


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("module", ["openskill", "matplotlib", "tqdm"])
def test_cli_without_the_eval_extra_fails_before_playing(game: str, module: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A missing module of the eval extra is a one-line error naming the extra, before any deal or file."""
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if the module were not installed
    played = []
    for name in GAMES:
        monkeypatch.setattr(f"{GAMES[name].eval}.command.evaluate", lambda *a, **k: played.append(1))
    argv = ["eval", "--game", game, "--agents", "random,random", "--deals", "2", "--out", str(tmp_path / "x")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err == (f"krypenv eval: error: the eval extra is not installed (no module {module}): "
                   "pip install 'krypenv[eval]'\n")
    assert not played and not (tmp_path / "x").exists()


def test_cli_unwritable_output_and_bad_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["eval", "--agents", "random,random", "--deals", "2", "--out", str(blocker / "sub")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("krypenv eval: error:") and str(blocker) in err and err.count("\n") == 1
    for bad in (["--deals", "1"], ["--players", "7"], ["--workers", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(["eval", "--agents", "random,random", *bad])
        assert exc.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1
