"""The ``krypenv`` command.

    krypenv demo [--game G] [--players N] [--seed S]        one deal between random players, turn by turn
    krypenv replay FILE... [--json] [--legal] [--max-errors N] [--html OUT]   replay game records, check every move
    krypenv bench [--json] [--seconds S] [--batches 1,256,4096] [--device cuda]   engine, env and eval throughput
    krypenv eval --agents A,B[,...] [--players N] [--deals D] [--seed S] [...]   duplicate evaluation of agents
    krypenv exploit --agent SPEC [--game G] [--preset P] [--players N] [--json] [...]   exploitability of an agent
    krypenv play [--game G] [--agents human,expert,...] [--seed S] [...]   play against agents in the terminal
    krypenv serve [--host H] [--port P] [--open]           the local web app: play in the browser, watch replays

``krypenv CMD --help`` describes each sub-command; each game's ``demo`` module (:mod:`krypenv.games`),
:mod:`krypenv.replay`, :mod:`krypenv.bench` and the ``eval`` package document them in full.  Which games
exist, and their defaults, come from the registry of games (:mod:`krypenv.games`).  Every error a user can cause (a bad
argument, an unreadable file, a closed output pipe) is one line on stderr, never a
traceback: usage errors exit with status 2, ``replay`` exits with 1 when a record is bad.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from krypenv.games import DEFAULT_GAME, GAMES, game, names
from krypenv.replay import add_arguments as add_replay_arguments


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are a single line on stderr."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE`` on one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (try: {self.prog} --help)\n")


def _number(kind: type, minimum: float, what: str) -> Callable[[str], float]:
    """An argparse type: a number of ``kind`` that is at least ``minimum`` (``what`` names the bound)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not value >= minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


def _batch_sizes(text: str) -> list[int]:
    """An argparse type: comma-separated positive batch sizes such as ``1,256,4096``."""
    parse = _number(int, 1, "comma-separated positive integers such as 1,256,4096")
    return [int(parse(part)) for part in text.split(",")]


def _per_game(value: Callable[[str], object]) -> str:
    """A help text's list of one value per registered game: ``3 for krypkasino, 4 for kungsholmskille``."""
    return ", ".join(f"{value(name)} for {name}" for name in names())


def _demo(args: argparse.Namespace) -> int:
    declared = game(args.game)
    declared.part("demo").run_demo(players=args.players or declared.play_players, seed=args.seed)
    return 0


def _replay(args: argparse.Namespace) -> int:
    if args.html:
        return _replay_html(args.files, args.html, args.max_errors)
    from krypenv.replay import run

    return run(args.files, args.json, args.legal, max_errors=args.max_errors)


def _replay_html(paths: list[str], out: str, max_errors: int) -> int:
    """``krypenv replay FILE... --html OUT.html``: the shareable replay page; 1 when a record is bad or none is
    legal."""
    from krypenv.ui.replay import write_html

    n, errors = write_html(paths, out, max_errors)
    for line in errors:
        print(f"krypenv replay: error: {line}", file=sys.stderr)
    print(f"wrote the replay of {n} deal(s) to {out}: open it in a web browser (no server needed)")
    return 1 if errors else 0


def _bench(args: argparse.Namespace) -> int:
    from krypenv.bench import BENCHMARKS, load_games, register, run

    load_games()  # the games' own benchmarks first, so that eval reports last
    if "eval" not in BENCHMARKS:  # the harness lives above krypenv; the CLI joins the layers
        from krypenv.eval.bench import bench_eval

        register("eval", bench_eval)

    result = run(as_json=args.json and args.device == "cpu", seconds=args.seconds, batches=args.batches)
    if args.device == "cuda":  # the GPU's rows after the CPU's, one JSON object with both when --json
        import json
        import os

        from krypenv.bench_device import run_device

        gpu = run_device(args.device_batches, args.seconds, out=open(os.devnull, "w") if args.json else None)  # noqa: SIM115
        if args.json:
            print(json.dumps({**result, **gpu}))
    return 0


def _eval(args: argparse.Namespace) -> int:
    from krypenv.eval.command import run

    return run(args)


def _exploit(args: argparse.Namespace) -> int:
    from krypenv.training.exploit import run

    return run(args)


def _play(args: argparse.Namespace) -> int:
    from krypenv.ui.terminal import run

    return run(args)


def _serve(args: argparse.Namespace) -> int:
    from krypenv.ui.server import run

    return run(args)


def _add_ui(sub: argparse._SubParsersAction) -> None:
    """The ``play`` and ``serve`` sub-commands (documented in :mod:`krypenv.ui.terminal` and
    :mod:`krypenv.ui.server`)."""
    from krypenv.ui.server import add_arguments as add_serve_arguments
    from krypenv.ui.terminal import add_arguments as add_play_arguments

    play = sub.add_parser("play", help="play against agents in the terminal (or from a script through a pipe)",
                          description="Take a seat against agents; every deal is saved as a game record.")
    add_play_arguments(play)
    play.set_defaults(func=_play)
    serve = sub.add_parser("serve", help="the local web app: play in the browser and watch replays",
                           description="Serve the play and replay pages and their JSON API.")
    add_serve_arguments(serve)
    serve.set_defaults(func=_serve)


def _add_eval(sub: argparse._SubParsersAction) -> None:
    """The ``eval`` sub-command's arguments (documented in full in the ``eval`` package)."""
    ev = sub.add_parser("eval", help="duplicate evaluation of agents: scores with 95%% CIs, head to head, ratings",
                        description="Play every deck once per seating of every lineup of the agents (duplicate "
                                    "format) and report mean scores with 95% CIs, head-to-head differences, "
                                    "deals won, tabbes, openskill ratings; write a results folder.")
    ev.add_argument("--game", choices=names(), default=DEFAULT_GAME,
                    help=f"the game (default {DEFAULT_GAME}); each game's duplicate evaluation is its own "
                         f"({_per_game(lambda name: GAMES[name].eval)})")
    ev.add_argument("--max-deals", type=_number(int, 1, "a positive integer"), default=None, metavar="M",
                    help="a game played in pots over several deals: deals after which an episode's pot is "
                         "truncated (Kungsholmskille L16, default 50)")
    ev.add_argument("--preset", default="standard", metavar="NAME",
                    help="a named rule set of the game (default standard; Krypkasino: tiny for 2 players, small for "
                         "2-3, RULES.md K22; Kungsholmskille: small, KILLE.md L22); a non-standard preset tags the "
                         "output folder")
    ev.add_argument("--agents", required=True, metavar="SPECS",
                    help="comma-separated agent specs, e.g. expert,greedy or pimc:samples=32,rollouts=4,random "
                         "(a k=v piece continues the previous spec)")
    ev.add_argument("--players", type=int, default=2, choices=range(2, 7), metavar="{2..6}",
                    help="players at the table (default 2)")
    ev.add_argument("--deals", type=_number(int, 2, "an integer of at least 2"), default=100, metavar="D",
                    help="duplicate decks; each is played at every table, so D x tables deals (default 100)")
    ev.add_argument("--seed", type=_number(int, 0, "a non-negative integer"), default=0, help="seed (default 0)")
    ev.add_argument("--teams", default=None, metavar="T",
                    help="none (default), a number of teams (2: seats alternate; 3: six players in three teams) "
                         "or seat lists such as 0,2/1,3; an agent then plays a whole team")
    ev.add_argument("--seatings", choices=("rotations", "permutations"), default="rotations",
                    help="seat each lineup in every rotation (default) or every order")
    ev.add_argument("--independent", action="store_true",
                    help="also play the same tables with a fresh deck per deal and report the variance reduction")
    ev.add_argument("--workers", type=_number(int, 1, "a positive integer"), default=None, metavar="W",
                    help="worker processes (default: all cores); results do not depend on it")
    ev.add_argument("--batch", type=_number(int, 1, "a positive integer"), default=256, metavar="B",
                    help="deals per batch handed to a worker (default 256)")
    ev.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                    help="play on a Ray cluster: ADDRESS, else RAY_ADDRESS, else a local Ray (needs krypenv[ray]); "
                         "results do not depend on it")
    ev.add_argument("--out", default=None, metavar="DIR",
                    help="output folder (default evals/<agents>-<P>p-<D>d-s<seed>, plus a tag per non-default variant)")
    ev.add_argument("--no-records", action="store_true", help="do not write records.jsonl (faster)")
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.add_argument("--two-player-deal", choices=("6+4", "5+6"), default="6+4", help="K6 variant for 2 players")
    ev.add_argument("--set-aside", choices=("court", "spades"), default="court", help="K8 variant")
    ev.add_argument("--last-capture-point", action="store_true", help="K17 variant")
    ev.set_defaults(func=_eval)


def _add_exploit(sub: argparse._SubParsersAction) -> None:
    """The ``exploit`` sub-command (documented in full in :mod:`krypenv.training.exploit`)."""
    from krypenv.training.exploit import add_arguments as add_exploit_arguments

    ex = sub.add_parser("exploit", help="how much a best response gains against an agent: exact NashConv on small "
                                        "presets (OpenSpiel), an approximate best response (PPO) otherwise",
                        description="Exact best-response values and NashConv of an agent on a preset OpenSpiel can "
                                    "traverse; otherwise train a PPO learner against the frozen agent and report "
                                    "its gain by duplicate evaluation with a 95% interval.")
    add_exploit_arguments(ex)
    ex.set_defaults(func=_exploit)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``krypenv`` command."""
    titles = " and ".join(declared.title for declared in GAMES.values())
    parser = _Parser(prog="krypenv", description=f"Reinforcement-learning toolkit for the Swedish misère card games "
                                                 f"{titles}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,replay,bench,eval,exploit,play,serve}")

    demo = sub.add_parser("demo", help="play one deal between random players and print it turn by turn")
    demo.add_argument("--game", choices=names(), default=DEFAULT_GAME,
                      help=f"which game (default {DEFAULT_GAME})")
    demo.add_argument("--players", type=int, default=None, choices=range(2, 7), metavar="{2..6}",
                      help=f"number of players (default {_per_game(lambda name: GAMES[name].play_players)})")
    demo.add_argument("--seed", type=_number(int, 0, "a non-negative integer"), default=0,
                      help="seed of the deck and the moves (default 0)")
    demo.set_defaults(func=_demo)

    replay = sub.add_parser("replay", help="replay game records (one JSON record or JSON Lines) and check them")
    add_replay_arguments(replay)
    replay.set_defaults(func=_replay)

    bench = sub.add_parser("bench", help="measure the engine's throughput under random play")
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("--seconds", type=_number(float, 1e-3, "a positive number of seconds"), default=3.0,
                       help="time per measurement (default 3)")
    bench.add_argument("--batches", type=_batch_sizes, default=[1, 256, 4096],
                       help="engine batch sizes (default 1,256,4096)")
    bench.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                       help="cuda: also the engines and device envs on the GPU (krypenv.bench_device)")
    bench.add_argument("--device-batches", type=_batch_sizes, default=[2**10, 2**14, 2**17, 2**20],
                       help="GPU batch sizes (default 1024,16384,131072,1048576)")
    bench.set_defaults(func=_bench)
    _add_eval(sub)
    _add_exploit(sub)
    _add_ui(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``krypenv`` command; return its exit status."""
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here, while it can still be handled
        return status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away, e.g. `krypenv demo | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit-time flush cannot fail
        return 1
    except (ValueError, OSError, MemoryError) as exc:
        print(f"krypenv {args.command}: error: {exc or type(exc).__name__}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
