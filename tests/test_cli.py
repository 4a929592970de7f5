"""The ``krypenv`` command: ``demo``, ``bench``, one-line errors, and the README / .ci/run quick start."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from krypenv import bench
from krypenv.cli import main
from krypenv.krypkasino.cards import card_name
from krypenv.krypkasino.demo import run_demo
from krypenv.krypkasino.engine import DealBatch, shuffled_deck
from krypenv.krypkasino.records import check_record
from krypenv.krypkasino.rules import Rules

ROOT = Path(__file__).parent.parent
MOVE = re.compile(r"^seat (\d) \[([^\]]*)\] plays +(\S+), (?:takes (.+?)|creeps)(?:  (dubbel)?tabbe på (\S+) .*)?$")
ROW = re.compile(r"^ +(\d) +(\d+) +(\d+) +(-?\d+)$")


def command() -> list[str]:
    """The installed ``krypenv`` command, or the module when it is not on PATH."""
    exe = shutil.which("krypenv")
    return [exe] if exe else [sys.executable, "-m", "krypenv.cli"]


def parse_demo(text: str) -> tuple[list[dict[str, Any]], list[int], list[list[int]]]:
    """The demo's moves as record moves, the seat of each tabbe, and the final rows [seat, points, tabbes, score]."""
    moves, tabbe_seats, rows = [], [], []
    for line in text.splitlines():
        if m := MOVE.match(line):
            seat, hand, card, taken, dubbel, rank = m.groups()
            assert card in hand.split(), line
            moves.append({"card": card, "capture": taken.split() if taken else []})
            if rank is not None:
                assert rank == card[:-1], line
                tabbe_seats += [int(seat)] * (2 if dubbel else 1)
        elif m := ROW.match(line):
            rows.append([int(x) for x in m.groups()])
    return moves, tabbe_seats, rows


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_demo_prints_a_full_legal_deal(players: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Every printed move replays legally from the seed's deck, and the printed table is the deal's result."""
    seed = 10 + players
    assert main(["demo", "--players", str(players), "--seed", str(seed)]) == 0
    out = capsys.readouterr().out
    rules = Rules(players=players)
    moves, tabbe_seats, rows = parse_demo(out)
    assert len(moves) == rules.decisions_per_deal
    assert len(re.findall(r"^-- round \d+ of \d+", out, re.MULTILINE)) == rules.rounds
    assert "sistan" in out and "(K15)" in out
    deck = [card_name(int(c)) for c in shuffled_deck(np.random.default_rng(seed))]
    record = {"game": "krypkasino", "rules": rules.to_dict(), "dealer": players - 1, "deck": deck, "moves": moves}
    outcome = check_record(record)
    assert outcome.ok, outcome.error
    assert [r[0] for r in rows] == list(range(players))
    assert [r[1] for r in rows] == outcome.result["card_points"]
    assert [r[2] for r in rows] == outcome.result["tabbes"] == [tabbe_seats.count(s) for s in range(players)]
    assert [r[3] for r in rows] == outcome.result["scores"]
    assert sum(r[3] for r in rows) == 42
    assert f"total 42 (K16); lowest score: seat {np.argmin(outcome.result['scores'])}" in out


def test_demo_default_is_three_players_and_reproducible() -> None:
    """No arguments: a 3-player deal from seed 0; the same seed prints the same deal, another seed another."""
    first, again, other = io.StringIO(), io.StringIO(), io.StringIO()
    scores = run_demo(out=first)
    run_demo(seed=0, out=again)
    run_demo(seed=1, out=other)
    assert first.getvalue().startswith("Krypkasino: 3 players, seed 0;")
    assert scores.shape == (3,) and int(scores.sum()) == 42
    assert first.getvalue() == again.getvalue() != other.getvalue()


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["demo", "--players", "7"], "argument --players: invalid choice: 7"),
        (["demo", "--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
        (["bench", "--seconds", "0"], "argument --seconds: expected a positive number of seconds, got '0'"),
        (["bench", "--batches", "1,x"], "argument --batches: expected comma-separated positive integers"),
        (["bench", "--batches", "0"], "argument --batches: expected comma-separated positive integers"),
        (["fly"], "invalid choice: 'fly'"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], complaint: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad argument: exit status 2 and a single stderr line naming it."""
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert len(err.splitlines()) == 1 and err.startswith("krypenv") and complaint in err, err


def test_installed_command_error_has_no_traceback() -> None:
    """The real command: ``krypenv demo --players 7`` is one stderr line and a non-zero exit status."""
    proc = subprocess.run([*command(), "demo", "--players", "7"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.startswith("krypenv demo: error: argument --players: invalid choice: 7")
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_closed_output_pipe_is_quiet() -> None:
    """``krypenv demo | head -1``: a reader that goes away ends the command without a traceback."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block-buffered, as for most users
    proc = subprocess.Popen([*command(), "demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # before the command prints anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == ""


def test_replay_unreadable_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``krypenv replay`` exits 0 only when every record is good; a file that cannot be read is status 1."""
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 1
    assert "missing.jsonl" in capsys.readouterr().err


def test_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    """``bench --json``: one JSON object: engine rows per batch size, the env benchmarks, the machine."""
    assert main(["bench", "--json", "--seconds", "0.2", "--batches", "1,64"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1
    result = json.loads(out)
    assert list(result) == ["engine", "kille_engine", "aec", "vec", "vec_2p", "kille_aec", "kille_vec", "eval",
                            "machine"]
    assert list(result["eval"]["deals_per_s"]) == ["random", "greedy", "creeper", "expert"]
    assert all(rate > 0 for rate in result["eval"]["deals_per_s"].values())
    for key in ("aec", "vec", "vec_2p", "kille_aec", "kille_vec"):
        assert result[key]["steps_per_s"] > 0
    assert result["kille_vec"]["batch"] == 4096 and result["kille_vec"]["players"] == 4
    assert [row["batch"] for row in result["kille_engine"]] == [1, 64]
    for row in result["kille_engine"]:
        assert list(row) == ["batch", "players", "decisions_per_s", "deals_per_s", "bytes_per_deal"]
        assert row["decisions_per_s"] > row["deals_per_s"] > 0
    assert result["vec"]["batch"] == 4096 and result["vec"]["players"] == 3
    assert [row["batch"] for row in result["engine"]] == [1, 64]
    for row in result["engine"]:
        assert list(row) == ["batch", "decisions_per_s", "deals_per_s", "bytes_per_deal"]
        assert row["decisions_per_s"] > row["deals_per_s"] > 0
        assert row["bytes_per_deal"] == DealBatch(Rules(), 1).nbytes_per_deal > 0
    machine = result["machine"]
    assert machine["cpus"] >= 1 and machine["numba_threads"] >= 1


def test_bench_registered_benchmarks_add_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered benchmark runs after the engine's and reports under its own key, in JSON and text."""
    bench.load_games()  # Krypkasino's benchmarks registered (engine among them) before the others are set aside
    monkeypatch.setattr(bench, "BENCHMARKS", {})
    bench.register("fake", lambda seconds: {"steps_per_s": 1234.5, "seconds": seconds})
    with pytest.raises(ValueError, match="already taken"):
        bench.register("engine", lambda seconds: {})
    out = io.StringIO()
    result = bench.run(as_json=True, seconds=0.01, batches=[1], out=out)
    assert json.loads(out.getvalue()) == result
    assert list(result) == ["engine", "kille_engine", "fake", "machine"]
    assert result["fake"] == {"steps_per_s": 1234.5, "seconds": 0.01}
    text = io.StringIO()
    bench.run(seconds=0.01, batches=[1], out=text)
    assert "fake: steps_per_s 1,234, seconds 0.01" in text.getvalue().splitlines()


def ci_commands() -> list[str]:
    """The commands of .ci/run: its lines other than blanks, comments, shell options and the cd to the root."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [ln for ln in lines if ln.strip() and not ln.startswith(("#", "set ", "cd "))
            and not ln.endswith((BROWSER, LINT, RAY, DOCS))]


BROWSER = "# browser for the UI tests"  # .ci/run's lines that install Chromium for tests/ui/test_browser.py
LINT = "# lint, before the tests"  # .ci/run's lines that install the extras (ruff among them) and run ruff
RAY = "# Ray's tests in their own environment"  # .ci/run's line that installs the ray extra and runs tests/ray
DOCS = "# the documentation site: a broken page fails CI"  # .ci/run's line that builds docs/ with -W


def test_ci_lints_before_the_tests() -> None:
    """.ci/run (``set -euo pipefail``: a finding fails CI) installs the extras, then runs ``ruff check .``, before the
    README's test command; ruff is pinned in the test extra, so that a new release cannot turn CI red by itself."""
    lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip()]
    assert "set -euo pipefail" in lines
    lint = [k for k, ln in enumerate(lines) if ln.endswith(LINT)]
    assert [lines[k].removesuffix(LINT).rstrip() for k in lint] == ['pip install -e ".[all]"', "ruff check ."]
    assert lint[1] == lint[0] + 1 and lint[1] < lines.index(ci_commands()[-1])
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (ruff,) = [r for r in meta["project"]["optional-dependencies"]["test"] if r.startswith("ruff")]
    assert re.fullmatch(r"ruff==[\d.]+", ruff), ruff


def test_ci_runs_the_ray_tests_in_their_own_environment() -> None:
    """After the README's test command, .ci/run installs the ray extra into a venv and runs tests/ray there."""
    lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip()]
    ray_lines = [k for k, ln in enumerate(lines) if ln.endswith(RAY)]
    assert len(ray_lines) == 1 and ray_lines[0] > lines.index(ci_commands()[-1])
    line = lines[ray_lines[0]]
    assert '.venv-ray/bin/pip install -e ".[all,ray]"' in line
    assert ".venv-ray/bin/python -m pytest -n 2 tests/ray" in line


def test_ci_builds_the_docs_site_with_warnings_as_errors() -> None:
    """After the README's test command, .ci/run builds the Sphinx site offline with -W (a broken page fails CI)."""
    lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip()]
    docs = [k for k, ln in enumerate(lines) if ln.endswith(DOCS)]
    assert len(docs) == 1 and docs[0] > lines.index(ci_commands()[-1])
    build = "python -m sphinx -W --keep-going -b html docs docs/_build/html"
    assert lines[docs[0]].removesuffix(DOCS).rstrip() == build


def test_ci_installs_the_browser_before_the_tests() -> None:
    """.ci/run installs Chromium (as root, when missing, never fatally) before the README's test command."""
    lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip()]
    browser = [k for k, ln in enumerate(lines) if ln.endswith(BROWSER)]
    assert browser and max(browser) < lines.index(ci_commands()[-1])
    assert all("apt-get install -y chromium" in lines[k] and "|| " in lines[k] for k in browser)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    """.ci/run is executable and its one command is the README's test command, copied exactly."""
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK)
    (cmd,) = ci_commands()
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", quick_start, re.DOTALL)
    commands = [ln for block in blocks for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(commands) == 2 and commands[1] == cmd, commands
    assert "pytest" in cmd and "python train.py" in commands[0]  # the main job: train, then evaluate


def test_pyproject_license_is_an_spdx_expression() -> None:
    """``project.license`` is the SPDX string, not the deprecated TOML table; setuptools>=77 builds it."""
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "MIT"
    (setuptools,) = [req for req in meta["build-system"]["requires"] if req.startswith("setuptools")]
    assert re.fullmatch(r"setuptools>=(\d+)", setuptools) and int(setuptools.split(">=")[1]) >= 77
