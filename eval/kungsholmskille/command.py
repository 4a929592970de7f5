"""``krypenv eval --game kungsholmskille``: its options, its output folder and :func:`run_eval`.

See :mod:`krypenv.eval.kungsholmskille` for the format and :mod:`krypenv.eval` for the command.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TextIO

from krypenv.eval.kungsholmskille.config import GAME, EvalConfig
from krypenv.eval.kungsholmskille.duplicate import Results, evaluate
from krypenv.eval.kungsholmskille.report import plot, text, write_tables
from krypenv.eval.play import cores, load_agents
from krypenv.eval.report import finish, play_into, prepare_out, ray_words, run_info
from krypenv.eval.schedule import out_folder

# this game's own options of ``krypenv eval`` (argparse dest -> the values that mean "not given"); another
# game's command refuses them when given
OPTIONS = {"max_deals": (None,), "preset": ("standard",)}  # preset: both games take it (L22)
OUTPUTS = ("results.csv", "head_to_head.csv", "results.json", "games.csv", "records.jsonl", "money.png", "run.json")


def default_out(config: EvalConfig) -> Path:
    """``evals/kille-<agents>-<P>p-<deals>d-s<seed>[-m<max deals>][-<seatings>][-<preset>]``: one folder per
    configuration."""
    tags = [f"{config.players}p", f"{config.deals}d", f"s{config.seed}"]
    if config.max_deals != EvalConfig.max_deals:
        tags.append(f"m{config.max_deals}")
    if config.seatings != EvalConfig.seatings:
        tags.append(config.seatings)
    if config.preset != EvalConfig.preset:
        tags.append(config.preset)
    return out_folder(config.labels, tags, prefix="kille-")


def config_from_args(args: argparse.Namespace, agents: tuple[str, ...]) -> EvalConfig:
    """The evaluation configuration of parsed ``krypenv eval --game kungsholmskille`` arguments and agent specs."""
    return EvalConfig(agents=agents, players=args.players, deals=args.deals, seed=args.seed,
                      max_deals=EvalConfig.max_deals if args.max_deals is None else args.max_deals,
                      seatings=args.seatings, workers=args.workers or cores(), batch=args.batch,
                      records=not args.no_records, ray=getattr(args, "ray", None),
                      preset=getattr(args, "preset", None) or EvalConfig.preset)


def command_line(config: EvalConfig, out: Path) -> str:
    """The ``krypenv eval`` command that repeats this evaluation, every option spelt out."""
    words = ["krypenv", "eval", "--game", GAME, "--agents", ",".join(config.agents), "--players", str(config.players),
             "--deals", str(config.deals), "--seed", str(config.seed), "--max-deals", str(config.max_deals),
             "--seatings", config.seatings, "--workers", str(config.workers), "--batch", str(config.batch),
             "--out", str(out)]
    preset = [] if config.preset == EvalConfig.preset else ["--preset", config.preset]
    return shlex.join(words + preset + ([] if config.records else ["--no-records"]) + ray_words(config.ray))


def run_eval(config: EvalConfig, out: Path, progress: bool = True, stdout: TextIO | None = None) -> Results:
    """Evaluate, write the results folder and print the report."""
    agents = load_agents(list(config.agents), GAME)  # bad specs fail before any file is touched
    prepare_out(out, OUTPUTS)
    record_files = {False: "records.jsonl"} if config.records else {}
    results, elapsed = play_into(out, record_files, config.n_episodes, "episode", progress,
                                 lambda bar, on_chunk: evaluate(config, agents, progress=bar, on_chunk=on_chunk))
    names = write_tables(results, out)
    plot(results, out / "money.png")
    names += [*record_files.values(), "money.png", "run.json"]
    deals = int(results.played.deals.sum())
    info = run_info(command_line(config, out), config, {"episodes": config.n_episodes, "deals": deals},
                    ("episodes_per_s", config.n_episodes), elapsed, names)
    finish(out, info, text(results, elapsed), stdout)
    return results
