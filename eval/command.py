"""``krypenv eval``: the command-line front end of every game's duplicate evaluation.

See :mod:`krypenv.eval` for the usage.  The command dispatches through the game registry
(:func:`krypenv.games.game` ``(args.game).part("eval")``) and branches on no game's name: the
game's evaluation part reads its configuration from the arguments, names its output folder and
writes it (the interface in :mod:`krypenv.eval`), and another game's options are refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from krypenv.games import DEFAULT_GAME, GAMES, game


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


def check_options(args: argparse.Namespace, name: str) -> None:
    """ValueError naming the options of other games given to an evaluation of game ``name``."""
    own = game(name).part("eval").OPTIONS
    for other in GAMES.values():
        if other.name == name:
            continue
        given = [dest for dest, unset in other.part("eval").OPTIONS.items()
                 if dest not in own and getattr(args, dest, unset[0]) not in unset]
        if given:
            flags = ", ".join("--" + dest.replace("_", "-") for dest in given)
            raise ValueError(f"{flags}: {other.title} option(s), not for --game {name}")


def run(args: argparse.Namespace) -> int:
    """The ``krypenv eval`` handler: ValueError/OSError for the command's one-line errors."""
    require_extra()
    name = getattr(args, "game", DEFAULT_GAME)
    evaluation = game(name).part("eval")
    check_options(args, name)
    config = evaluation.config_from_args(args, tuple(split_specs(args.agents)))
    if config.ray is not None:  # a bad address fails before any file is written
        from krypenv.eval.ray_pool import connect

        connect(config.ray)
    evaluation.run_eval(config, Path(args.out) if args.out else evaluation.default_out(config),
                        progress=not args.no_progress)
    return 0
