"""What every game's training shares: the interface of a game's ``training`` part, its defaults, its curve's words.

A game's training part (the module named by its :class:`krypenv.games.Game`'s ``training``)
supplies, for ``train.py``:

=====================  ===========================================================================
name                   what it is
=====================  ===========================================================================
``DEFAULTS``           ``{"players", "league", "policy"}``: what ``--players 0`` and an empty
                       ``--league`` or ``--policy`` mean for the game
``POLICIES``           the ``--policy`` networks the game offers
``BASELINES``          the agent specs of the final table
``EPISODE_VALUE``      the env's ``infos`` key of an episode's result (``score``, ``money``)
``RUN_PREFIX``         the default run folder's prefix (``kille-``)
``CURVE``              the learning curve's words (:class:`Curve`)
``SPREAD_NOTE``        printed before the final table: results vary by seed and machine, where the spread is
``check_options``      ValueError for an option that is not the game's (before the defaults)
``game_config``        the rule keywords of the env and the evaluations, checked
``make_env``           the training VecEnv: the learner in a random seat, the league in the others
``agent_class``        the game's ``PPOAgent`` (what ``ppo:PATH`` loads)
``action_features``    the action features ``--policy`` reads (None: the observation alone)
``network``            the VecEnv the model sees, the SB3 policy, its kwargs, the action features; the critic's
                       sizes and the scorer's width a warm start fixes
``metadata``           the checkpoint's ``krypenv.json`` object
``check_init``         ValueError when an ``--init-from`` checkpoint does not fit the run
``evaluate``           one periodic evaluation of the learner: a :class:`Point`
``final_table``        the final evaluation against every baseline: its report and summary
=====================  ===========================================================================
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from krypenv.games import GAMES

__all__ = ["FLOAT_ENV", "Curve", "Point", "machine", "resolve", "training_part"]

# environment variables that choose the CPU kernels torch sums floats with: ATen's SIMD level, MKL's instruction
# path and MKL's conditional numerical reproducibility
FLOAT_ENV = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR")


@dataclass(frozen=True)
class Curve:
    """How a game's periodic evaluation reads: its line's label, the y axis, the unit and the better direction."""

    label: str  # the curve's legend and the printed line's name ("learner - expert")
    y_label: str  # the y axis of learning_curve.png
    unit: str  # what one value is per ("deal", "episode")
    points: str  # what one point is made of, for the plot's title ("duplicate decks")
    higher_better: bool  # whether a larger value is a better learner


@dataclass(frozen=True)
class Point:
    """One periodic evaluation: the value with its 95% CI, and the game's own scores for eval.csv."""

    mean: float
    low: float
    high: float
    scores: dict[str, float]


def training_part(game: str) -> ModuleType:
    """The training part of the game ``game``; ValueError naming the games otherwise."""
    if game not in GAMES:
        raise ValueError(f"--game must be one of {', '.join(GAMES)}, got {game!r}")
    return GAMES[game].part("training")


def resolve(args: Any) -> Any:
    """``args`` with the game's defaults filled in (players 0, league and policy empty); ValueError for a bad game
    or an option that is not the game's."""
    part = training_part(args.game)
    part.check_options(args)
    fill = {k: v for k, v in part.DEFAULTS.items() if not getattr(args, k)}
    return dataclasses.replace(args, **fill)


def _version(package: str) -> str | None:
    """An installed package's version, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """What a run's figures depend on besides its arguments: processor, cores, libraries, torch's SIMD level.

    Training is deterministic on one machine, not across machines: torch's CPU kernels take the widest SIMD
    the processor has (``cpu_capability``: AVX512, AVX2, ...; ``ATEN_CPU_CAPABILITY`` lowers it) and sum
    floats in that kernel's order, so the same seed on another capability trains another trajectory
    (measured: docs/results/krypkasino-training.md, "Machines"). ``float_env``: the settings of
    :data:`FLOAT_ENV` in the environment, each of which changes that order.
    """
    import torch

    from krypenv.bench import machine as info

    libraries = {name: _version(name) for name in ("stable-baselines3", "sb3-contrib", "gymnasium")}
    float_env = {k: os.environ[k] for k in FLOAT_ENV if k in os.environ}
    return {**info(), **libraries, "torch": torch.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "float_env": float_env}
