"""The ``krypenv`` command.

    krypenv demo [--players N] [--seed S]                   one deal between random players, turn by turn
    krypenv replay FILE... [--json] [--legal]               replay game records and check every move
    krypenv bench [--json] [--seconds S] [--batches 1,256,4096]   engine throughput

``krypenv CMD --help`` describes each sub-command; :mod:`krypenv.demo`, :mod:`krypenv.replay`
and :mod:`krypenv.bench` document them in full.  Every error a user can cause (a bad
argument, an unreadable file, a closed output pipe) is one line on stderr, never a
traceback: usage errors exit with status 2, ``replay`` exits with 1 when a record is bad.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn

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


def _demo(args: argparse.Namespace) -> int:
    from krypenv.demo import run_demo

    run_demo(players=args.players, seed=args.seed)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from krypenv.replay import run

    return run(args.files, args.json, args.legal)


def _bench(args: argparse.Namespace) -> int:
    from krypenv.bench import run

    run(as_json=args.json, seconds=args.seconds, batches=args.batches)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``krypenv`` command."""
    parser = _Parser(prog="krypenv", description="Krypkasino reinforcement-learning toolkit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,replay,bench}")

    demo = sub.add_parser("demo", help="play one deal between random players and print it turn by turn")
    demo.add_argument("--players", type=int, default=3, choices=range(2, 7), metavar="{2..6}",
                      help="number of players (default 3)")
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
    bench.set_defaults(func=_bench)
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
