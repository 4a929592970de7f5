"""``krypenv eval --game kungsholmskille --preset small`` (KILLE.md L20–L22): bounded pots, records, folders."""

from __future__ import annotations

import json

from krypenv.eval.kungsholmskille import EvalConfig, default_out, run_eval

from krypenv.cli import main
from krypenv.kungsholmskille.config import POT_OUT
from krypenv.kungsholmskille.records import check_record


def test_small_preset_evaluation_ends_every_pot_within_three_deals(tmp_path) -> None:
    """L21: every episode's pot goes out or is settled within 3 deals, money sums to 0, records replay; the
    results and the command name the preset, the standard ones do not."""
    cfg = EvalConfig(agents=("expert", "random"), players=3, deals=4, seed=1, preset="small", workers=1)
    r = run_eval(cfg, tmp_path, progress=False)
    p = r.played
    assert (p.over == POT_OUT).all() and (p.deals <= 3).all() and (p.money.sum(axis=1) == 0).all()
    assert ((p.winner == -1) == (p.deals == 3) & (p.winner == -1)).all()  # no winner only in a settled pot
    for line in (tmp_path / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        assert rec["rules"] == {"players": 3, "ranks": 11, "max_deals": 3} and len(rec["deck"]) == 22
        assert check_record(rec).ok
    assert json.loads((tmp_path / "results.json").read_text())["config"]["preset"] == "small"
    assert "--preset small" in (tmp_path / "run.json").read_text()
    assert "preset" not in EvalConfig(agents=("expert", "random")).games_dict()
    assert default_out(cfg).name.endswith("-small")


def test_cli_preset_small_and_a_bad_preset_is_one_line(tmp_path, capsys) -> None:
    """``--preset small`` runs; an unknown preset, or small at four players, is one error line naming the field."""
    out = tmp_path / "o"
    assert main(["eval", "--game", "kungsholmskille", "--preset", "small", "--agents", "timid,random", "--players",
                 "2", "--deals", "2", "--out", str(out), "--no-records", "--no-progress", "--workers", "1"]) == 0
    assert "small preset" in capsys.readouterr().out
    for argv, field in ((["--preset", "huge", "--players", "2"], "preset"), (["--preset", "small", "--players", "4"],
                                                                            "ranks")):
        code = main(["eval", "--game", "kungsholmskille", "--agents", "timid,random", "--deals", "2", "--out",
                     str(out), "--no-progress", *argv])
        err = capsys.readouterr().err.strip()
        assert code != 0 and len(err.splitlines()) == 1 and field in err, err


def test_pot_deals_bounds_the_pot_of_every_episode(tmp_path) -> None:
    """``EvalConfig.pot_deals`` (L21, the benchmark's one-deal pots): every pot is settled after that many deals,
    money sums to 0, the records and results carry the bound; a bound outside 1..max is refused by name."""
    import pytest

    cfg = EvalConfig(agents=("expert", "random"), players=2, deals=30, seed=2, preset="small", pot_deals=1, workers=1)
    r = run_eval(cfg, tmp_path, progress=False)
    p = r.played
    assert (p.deals == 1).all() and (p.money.sum(axis=1) == 0).all() and (p.over == POT_OUT).all()
    assert (p.winner == -1).any()  # some pots were settled without a winner: the bound, not the play, ended them
    rec = json.loads((tmp_path / "records.jsonl").read_text().splitlines()[0])
    assert rec["rules"]["max_deals"] == 1 and check_record(rec).ok
    assert cfg.games_dict() == {"game": "kungsholmskille", "agents": ["expert", "random"], "players": 2, "deals": 30,
                                "seed": 2, "max_deals": 50, "seatings": "rotations", "preset": "small", "pot_deals": 1}
    assert "pot_deals" not in EvalConfig(agents=("expert", "random"), players=2, preset="small").games_dict()
    with pytest.raises(ValueError, match="pot_deals"):
        EvalConfig(agents=("expert", "random"), players=2, preset="small", pot_deals=0)
