"""Kungsholmskille's duplicate evaluation (krypenv.eval.kungsholmskille, ``krypenv eval --game kungsholmskille``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from krypenv.eval.kungsholmskille import EvalConfig, default_out, evaluate, run_eval
from krypenv.eval.kungsholmskille.play import play_chunk
from krypenv.eval.play import chunks, load_agents

from krypenv.cli import main
from krypenv.kungsholmskille.config import POT_OUT, TRUNCATED
from krypenv.kungsholmskille.records import check_record

AGENTS = ("expert", "timid", "random")


def _results(**kw):
    cfg = EvalConfig(agents=AGENTS, players=4, deals=6, seed=3, **kw)
    return evaluate(cfg)


def test_every_table_of_a_deck_set_gets_the_same_first_deal():
    cfg = EvalConfig(agents=AGENTS, players=4, deals=3, seed=1, records=False)
    agents = load_agents(list(cfg.agents), "kungsholmskille")
    T = len(cfg.tables)
    assert T >= 3
    played = [play_chunk(c, cfg, agents) for c in chunks(cfg.schedule, cfg.batch)]
    decks = [d for p in played for d in p.first_decks]
    for d in range(cfg.deals):
        assert all(decks[d * T + t] == decks[d * T] for t in range(T))
    assert decks[0] != decks[T]  # another deck set, another deck


def test_second_deals_are_shared_too_and_seatings_differ_only_by_choices():
    """A mirror match of one agent: every seating plays the same episode (same decks, same uniforms stream aside)."""
    cfg = EvalConfig(agents=("timid", "timid"), players=4, deals=4, seed=2, records=True)
    agents = load_agents(list(cfg.agents), "kungsholmskille")
    for c in chunks(cfg.schedule, cfg.batch):
        p = play_chunk(c, cfg, agents)
        recs = [json.loads(r) for r in p.records]
        assert len(recs) == int(p.deals.sum())
    # timid is deterministic: each deck set's tables are identical episodes
    r = evaluate(cfg)
    T = len(cfg.tables)
    money = r.played.money.reshape(cfg.deals, T, 4)
    assert (money == money[:, :1]).all()


def test_results_do_not_depend_on_workers_or_batch():
    a = _results(workers=1, batch=64, records=False)
    b = _results(workers=2, batch=3, records=False)
    assert a.to_dict() == b.to_dict()
    assert np.array_equal(a.played.money, b.played.money)


def test_money_sums_to_zero_per_finished_episode_and_minus_the_pot_when_truncated():
    r = evaluate(EvalConfig(agents=("random", "random"), players=4, deals=30, seed=4, max_deals=1, records=False))
    p = r.played
    assert (p.over == TRUNCATED).any() and (p.over == POT_OUT).any()
    fin = p.over == POT_OUT
    assert (p.money[fin].sum(axis=1) == 0).all()
    assert (p.money[~fin].sum(axis=1) == -p.pot_left[~fin]).all()
    assert (p.pot_left[~fin] > 0).all() and (p.winner[~fin] == -1).all()


def test_records_replay_ok_and_results_folder(tmp_path, capsys):
    cfg = EvalConfig(agents=AGENTS, players=4, deals=3, seed=5, batch=5)
    r = run_eval(cfg, tmp_path, progress=False)
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(lines) == int(r.played.deals.sum())
    for line in lines:
        outcome = check_record(json.loads(line))
        assert outcome.ok, outcome.error
    for name in ("results.csv", "results.json", "head_to_head.csv", "games.csv", "money.png", "run.json"):
        assert (tmp_path / name).stat().st_size > 0
    assert main(["replay", str(tmp_path / "records.jsonl")]) == 0


def test_cli_runs_and_bad_specs_are_one_line(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["eval", "--game", "kungsholmskille", "--agents", "expert,random", "--players", "3", "--deals", "2",
                 "--out", str(out), "--no-records", "--no-progress", "--workers", "1"]) == 0
    assert "Kungsholmskille, 3 players" in capsys.readouterr().out
    for argv in (["--agents", "greedy,expert"], ["--agents", "expert,random", "--teams", "2"],
                 ["--agents", "expert,random", "--max-deals", "5000"], ["--agents", "nosuch,random"]):
        code = main(["eval", "--game", "kungsholmskille", "--players", "4", "--deals", "2", "--out", str(out),
                     "--no-progress", *argv])
        err = capsys.readouterr().err.strip()
        assert code != 0 and err and len(err.splitlines()) == 1, (argv, err)
    code = main(["eval", "--agents", "expert,random", "--max-deals", "3", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1


def test_default_output_folder_names_max_deals_and_seatings():
    """Episodes of another length or other seatings never overwrite the default evaluation's folder."""
    names = [default_out(EvalConfig(agents=("expert", "timid"), players=4, deals=10, seed=3, **kw)).name
             for kw in ({}, {"max_deals": 20}, {"seatings": "permutations"})]
    assert names == ["kille-expert_timid-4p-10d-s3", "kille-expert_timid-4p-10d-s3-m20",
                     "kille-expert_timid-4p-10d-s3-permutations"]


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="max_deals"):
        EvalConfig(agents=AGENTS, max_deals=0)
    with pytest.raises(ValueError, match="players"):
        EvalConfig(agents=AGENTS, players=7)


def test_a_shipped_policy_plays_at_the_duplicate_tables():
    """The harness's core (a subclass of the game's core) is Kungsholmskille's to a ppo:NAME checkpoint."""
    pytest.importorskip("torch")
    r = evaluate(EvalConfig(agents=("ppo:kille-4p", "expert"), players=4, deals=2, seed=9, max_deals=3, records=False))
    assert [row.agent for row in r.rows] == ["ppo:kille-4p", "expert"] and all(row.episodes > 0 for row in r.rows)
