"""``krypenv eval`` for Krypkasino: its options, its output folder and :func:`run_eval` writing the results folder.

See :mod:`krypenv.eval.krypkasino` for the format and :mod:`krypenv.eval` for the command.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TextIO

from krypenv.eval.krypkasino.config import GAME, EvalConfig
from krypenv.eval.krypkasino.duplicate import Results, evaluate
from krypenv.eval.krypkasino.report import plot, text, write_tables
from krypenv.eval.play import cores, load_agents
from krypenv.eval.report import finish, play_into, prepare_out, ray_words, run_info
from krypenv.eval.schedule import out_folder

from krypenv.krypkasino.rules import parse_teams, teams_tag

# this game's own options of ``krypenv eval`` (argparse dest -> the values that mean "not given"); another
# game's command refuses them when given
OPTIONS = {"teams": (None, "none"), "independent": (False,), "two_player_deal": ("6+4",), "set_aside": ("court",),
           "last_capture_point": (False,), "preset": ("standard",)}
OUTPUTS = ("results.csv", "head_to_head.csv", "results.json", "games.csv", "games-independent.csv",
           "records.jsonl", "records-independent.jsonl", "scores.png", "run.json")


def variant_tags(config: EvalConfig) -> list[str]:
    """Name tags of the game-defining fields that differ from the defaults (preset, teams, rule variants,
    seatings)."""
    r, tags = config.rules, []
    if config.preset != EvalConfig.preset:
        tags.append(config.preset)  # K22: tiny, small
    if r.teams:
        tags.append("teams" + teams_tag(r.teams))  # teams02+13
    if r.players == 2 and r.two_player_deal != EvalConfig.two_player_deal:
        tags.append("deal" + r.two_player_deal)
    if r.set_aside != EvalConfig.set_aside:
        tags.append("aside-" + r.set_aside)
    if r.last_capture_point:
        tags.append("lastpoint")
    if config.seatings != EvalConfig.seatings:
        tags.append(config.seatings)
    if config.independent:
        tags.append("independent")
    return tags


def default_out(config: EvalConfig) -> Path:
    """``evals/<agents>-<P>p-<deals>d-s<seed>[-<variant tags>]``: one folder per configuration.

    The tags (:func:`variant_tags`) keep, e.g., a 2v2 evaluation from overwriting the same
    agents' evaluation without teams."""
    return out_folder(config.labels,
                      [f"{config.players}p", f"{config.deals}d", f"s{config.seed}", *variant_tags(config)])


def config_from_args(args: argparse.Namespace, agents: tuple[str, ...]) -> EvalConfig:
    """The evaluation configuration of parsed ``krypenv eval`` arguments and the agent specs they name."""
    return EvalConfig(agents=agents, players=args.players, deals=args.deals, seed=args.seed,
                      teams=parse_teams(args.teams, args.players), two_player_deal=args.two_player_deal,
                      set_aside=args.set_aside, last_capture_point=args.last_capture_point, seatings=args.seatings,
                      independent=args.independent, workers=args.workers or cores(), batch=args.batch,
                      records=not args.no_records, ray=getattr(args, "ray", None),
                      preset=getattr(args, "preset", EvalConfig.preset))


def command_line(config: EvalConfig, out: Path) -> str:
    """The ``krypenv eval`` command that repeats this evaluation, every option spelt out."""
    r = config.rules
    words = ["krypenv", "eval", "--agents", ",".join(config.agents), "--players", str(r.players),
             "--deals", str(config.deals), "--seed", str(config.seed),
             "--teams", "/".join(",".join(map(str, t)) for t in r.teams) if r.teams else "none",
             "--seatings", config.seatings, "--workers", str(config.workers), "--batch", str(config.batch),
             "--out", str(out), "--two-player-deal", r.two_player_deal, "--set-aside", r.set_aside]
    if config.preset != EvalConfig.preset:  # K22 (a standard run's command line stays as it was)
        words += ["--preset", config.preset]
    flags = {"--independent": config.independent, "--no-records": not config.records,
             "--last-capture-point": r.last_capture_point}
    return shlex.join(words + [flag for flag, on in flags.items() if on] + ray_words(config.ray))


def run_eval(config: EvalConfig, out: Path, progress: bool = True, stdout: TextIO | None = None) -> Results:
    """Evaluate, write every output file into ``out`` and print the report."""
    agents = load_agents(list(config.agents), GAME)  # bad specs fail before any file is touched
    prepare_out(out, OUTPUTS)
    total = config.schedule.n_games * (2 if config.independent else 1)
    record_files = {False: "records.jsonl", True: "records-independent.jsonl"} if config.records else {}
    if not config.independent:
        record_files.pop(True, None)
    results, elapsed = play_into(out, record_files, total, "deal", progress,
                                 lambda bar, on_chunk: evaluate(config, agents, progress=bar, on_chunk=on_chunk))
    names = write_tables(results, out)
    plot(results, out / "scores.png")
    names += [*record_files.values(), "scores.png", "run.json"]
    info = run_info(command_line(config, out), config, {"games": total}, ("deals_per_s", total), elapsed, names)
    finish(out, info, text(results, elapsed), stdout)
    return results
