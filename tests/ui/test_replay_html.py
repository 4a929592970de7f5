"""``krypenv replay FILE --html OUT.html``: one self-contained page with every legal record's replay."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from krypenv.cli import main
from krypenv.ui.session import Session


def records_file(folder: Path) -> Path:
    """A JSON Lines file with a whole deal of each game between random agents (the first move always)."""
    path = folder / "games.jsonl"
    lines = []
    for game, players in (("krypkasino", 2), ("kungsholmskille", 3)):
        s = Session(game, players, ["random"], seed=5, record=folder / f"{game}.jsonl")
        while not s.over:
            s.play(0)
        lines += [json.dumps(r) for r in s.records()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two finished deals, one per game."""
    return records_file(tmp_path_factory.mktemp("html"))


def test_writes_one_self_contained_page(records: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The page inlines its CSS, JS and both deals' frames; it loads nothing from a server or the network."""
    out = tmp_path / "share.html"
    assert main(["replay", str(records), "--html", str(out)]) == 0
    assert "2 deal(s)" in capsys.readouterr().out
    html = out.read_text()
    assert "/static/" not in html and not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    data = json.loads(html.split("window.KRYPENV_INLINE = ", 1)[1].split(";</script>", 1)[0].replace("<\\/", "</"))
    assert [d["game"] for d in data["deals"]] == ["krypkasino", "kungsholmskille"]
    assert all(len(f["frames"]) == len(f["moves"]) + 1 for f in data["frames"])


def test_bad_records_are_reported_and_none_legal_writes_nothing(records: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """A bad line is named on stderr (exit 1, the good deals still written); a file of no legal record: no page."""
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(records.read_text() + "not json\n")
    out = tmp_path / "mixed.html"
    assert main(["replay", str(mixed), "--html", str(out)]) == 1
    assert ":3: bad JSON" in capsys.readouterr().err and out.is_file()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"game": "krypkasino"}\n')
    out = tmp_path / "bad.html"
    assert main(["replay", str(bad), "--html", str(out)]) == 1
    assert "no legal game record" in capsys.readouterr().err and not out.exists()
