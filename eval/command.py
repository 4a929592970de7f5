"""``krypenv eval``: the command-line front end of :func:`krypenv.eval.duplicate.evaluate`.

See :mod:`eval` for the usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from krypenv.eval.duplicate import EvalConfig, Results, evaluate
from krypenv.eval.play import Played, cores, load_agents
from krypenv.eval.report import plot, text, write_tables
from krypenv.eval.schedule import out_folder

from krypenv.krypkasino.rules import parse_teams, teams_tag

OUTPUTS = ("results.csv", "head_to_head.csv", "results.json", "games.csv", "games-independent.csv",
           "records.jsonl", "records-independent.jsonl", "scores.png", "run.json")


def split_specs(text: str) -> list[str]:
    """Agent specs from ``expert,greedy,pimc:samples=32,rollouts=4``: a ``k=v`` piece whose key has no ``:`` continues
    the previous spec (so does ``policy=ppo:PATH``)."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if specs and "=" in piece and ":" not in piece.partition("=")[0]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def variant_tags(config: EvalConfig) -> list[str]:
    """Name tags of the game-defining fields that differ from the defaults (teams, rule variants, seatings)."""
    r, tags = config.rules, []
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


def config_from_args(args: argparse.Namespace) -> EvalConfig:
    """The evaluation configuration of parsed ``krypenv eval`` arguments."""
    return EvalConfig(agents=tuple(split_specs(args.agents)), players=args.players, deals=args.deals, seed=args.seed,
                      teams=parse_teams(args.teams, args.players), two_player_deal=args.two_player_deal,
                      set_aside=args.set_aside, last_capture_point=args.last_capture_point, seatings=args.seatings,
                      independent=args.independent, workers=args.workers or cores(), batch=args.batch,
                      records=not args.no_records, ray=getattr(args, "ray", None))


def command_line(config: EvalConfig, out: Path) -> str:
    """The ``krypenv eval`` command that repeats this evaluation, every option spelt out."""
    r = config.rules
    words = ["krypenv", "eval", "--agents", ",".join(config.agents), "--players", str(r.players),
             "--deals", str(config.deals), "--seed", str(config.seed),
             "--teams", "/".join(",".join(map(str, t)) for t in r.teams) if r.teams else "none",
             "--seatings", config.seatings, "--workers", str(config.workers), "--batch", str(config.batch),
             "--out", str(out), "--two-player-deal", r.two_player_deal, "--set-aside", r.set_aside]
    flags = {"--independent": config.independent, "--no-records": not config.records,
             "--last-capture-point": r.last_capture_point}
    ray = [] if config.ray is None else ["--ray", config.ray] if config.ray else ["--ray"]
    return shlex.join(words + [flag for flag, on in flags.items() if on] + ray)


def prepare_out(out: Path) -> None:
    """Create the output folder and clear this command's files from an earlier run (OSError if not writable)."""
    out.mkdir(parents=True, exist_ok=True)
    if not out.is_dir():
        raise OSError(f"output folder {out} is not a directory")
    for name in OUTPUTS:
        (out / name).unlink(missing_ok=True)
    probe = out / "run.json"
    probe.write_text("{}\n", encoding="utf-8")  # fails now, not after the games, when the folder is read-only


def run_eval(config: EvalConfig, out: Path, progress: bool = True, stdout: TextIO | None = None) -> Results:
    """Evaluate, write every output file into ``out`` and print the report."""
    stdout = sys.stdout if stdout is None else stdout
    agents = load_agents(list(config.agents))  # bad specs fail before any file is touched
    prepare_out(out)
    total = config.schedule.n_games * (2 if config.independent else 1)
    with contextlib.ExitStack() as open_files:  # the records files, closed after the progress bar
        files: dict[bool, TextIO] = {}
        if config.records:
            files[False] = open_files.enter_context(open(out / "records.jsonl", "w", encoding="utf-8"))
            if config.independent:
                files[True] = open_files.enter_context(open(out / "records-independent.jsonl", "w", encoding="utf-8"))
        from tqdm import tqdm

        bar = tqdm(total=total, unit="deal", disable=not progress, delay=1.0, file=sys.stderr, dynamic_ncols=True)

        def on_chunk(part: Played, independent: bool) -> None:
            if part.records is not None:
                files[independent].write("".join(line + "\n" for line in part.records))

        start = time.perf_counter()
        try:
            results = evaluate(config, agents, progress=bar.update, on_chunk=on_chunk)
        finally:
            bar.close()
    elapsed = time.perf_counter() - start
    names = write_tables(results, out)
    plot(results, out / "scores.png")
    names += [*(["records.jsonl"] if config.records else []),
              *(["records-independent.jsonl"] if config.records and config.independent else []),
              "scores.png", "run.json"]
    (out / "run.json").write_text(json.dumps(run_info(config, out, elapsed, total, names), indent=1) + "\n",
                                  encoding="utf-8")
    print(text(results, elapsed), file=stdout)
    print(f"wrote {out}/: {', '.join(names)}", file=stdout)
    return results


def run_info(config: EvalConfig, out: Path, elapsed: float, games: int, files: list[str]) -> dict[str, Any]:
    """``run.json``: the command line, the full configuration, the time taken and the files written."""
    import numba

    from krypenv.bench import machine

    return {"command": command_line(config, out),
            "config": config.games_dict() | {"workers": config.workers, "batch": config.batch,
                                             "records": config.records, "ray": config.ray},
            "games": games, "elapsed_s": elapsed, "deals_per_s": games / elapsed if elapsed > 0 else None,
            "numba_threads": numba.get_num_threads(), "machine": machine(), "files": files}


def require_extra() -> None:
    """ValueError naming the ``eval`` extra if one of its modules does not import (checked before any game is
    played)."""
    try:
        import matplotlib  # noqa: F401  (the plots)
        import openskill  # noqa: F401  (the ratings)
        import tqdm  # noqa: F401  (the progress bar)
    except ImportError as exc:
        raise ValueError(f"the eval extra is not installed (no module {exc.name}): "
                         "pip install 'krypenv[eval]'") from None


def run(args: argparse.Namespace) -> int:
    """The ``krypenv eval`` handler: ValueError/OSError for the command's one-line errors."""
    require_extra()
    if getattr(args, "game", "krypkasino") == "kungsholmskille":
        return run_kille(args)
    if getattr(args, "max_deals", None) is not None:
        raise ValueError("--max-deals is a kungsholmskille option (L16); Krypkasino plays one deal per game")
    config = config_from_args(args)
    if config.ray is not None:  # a bad address fails before any file is written
        from krypenv.eval.ray_pool import connect

        connect(config.ray)
    run_eval(config, Path(args.out) if args.out else default_out(config), progress=not args.no_progress)
    return 0


def run_kille(args: argparse.Namespace) -> int:
    """``krypenv eval --game kungsholmskille`` (:mod:`krypenv.eval.kille`).

    Krypkasino-only options are one-line errors.
    """
    from krypenv.eval.kille import KilleConfig
    from krypenv.eval.kille_report import default_out as kille_out
    from krypenv.eval.kille_report import run_eval as kille_eval

    wrong = [flag for flag, on in (("--teams", args.teams not in (None, "none")), ("--independent", args.independent),
                                   ("--two-player-deal", args.two_player_deal != "6+4"),
                                   ("--set-aside", args.set_aside != "court"),
                                   ("--last-capture-point", args.last_capture_point)) if on]
    if wrong:
        raise ValueError(f"{', '.join(wrong)}: Krypkasino option(s), not for --game kungsholmskille")
    config = KilleConfig(agents=tuple(split_specs(args.agents)), players=args.players, deals=args.deals,
                         seed=args.seed, max_deals=50 if args.max_deals is None else args.max_deals,
                         seatings=args.seatings, workers=args.workers or cores(), batch=args.batch,
                         records=not args.no_records, ray=getattr(args, "ray", None))
    if config.ray is not None:
        from krypenv.eval.ray_pool import connect

        connect(config.ray)
    kille_eval(config, Path(args.out) if args.out else kille_out(config), progress=not args.no_progress)
    return 0
