"""Kungsholmskille's pieces of ``train.py``: an episode is one pot, dealt on until it goes out; the reward is money.

* defaults: 4 players, league ``expert=6,timid=2,random=1,self=1``, network ``mlp`` (its only one);
* episode: one pot, dealt on until it goes out (L16: at most ``--max-deals`` deals; with
  ``--preset small`` at most 3, the pot settled by L21); the reward the learner's money change;
* ``--preset``: ``standard`` (default) or ``small`` (KILLE.md L22, 2–3 players); the checkpoint
  records a non-standard preset's rules and plays only them;
* env: :class:`krypenv.kungsholmskille.vec.KungsholmskilleVecEnv` with ``skip_forced=True``:
  a forced play (L10) is not a learner decision;
* network: an MLP on :class:`krypenv.agents.kungsholmskille.ppo.KilleInput`;
* periodic evaluation: duplicate deck sets (the game's duplicate evaluation), the learner in
  every seat of a table of ``expert``s, its money per episode (higher is better; 0 is expert's
  own level at an all-expert table);
* final table: the same table against each baseline in turn.

The interface is :mod:`krypenv.training.common`'s.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from krypenv.training.common import Curve, Point

DEFAULTS: dict[str, Any] = {"players": 4, "league": "expert=6,timid=2,random=1,self=1", "policy": "mlp"}
POLICIES = ("mlp",)
BASELINES = ("random", "timid", "expert")  # pimc: minutes per evaluation, left out
EPISODE_VALUE = "money"  # the env's infos key of an episode's result: the learner's net money
RUN_PREFIX = "kille-"
SPREAD_NOTE = ("note: these figures vary with the training seed and the machine (CPUs sum floats in different "
               "orders): one run is one sample; docs/results/kungsholmskille.md has the measured runs")
CURVE = Curve(label="learner's money among experts",
              y_label="money per episode among experts\n(positive: learner better)",
              unit="episode", points="episodes among experts", higher_better=True)
OTHER_GAMES_OPTIONS = (("teams", "none"), ("two_player_deal", "6+4"), ("set_aside", "court"),
                       ("last_capture_point", False))  # train.py's options of another game, at their defaults


def check_options(args: Any) -> None:
    """ValueError for a rules option of Krypkasino's, or a network that reads its move features."""
    changed = [f"--{k.replace('_', '-')}" for k, default in OTHER_GAMES_OPTIONS if getattr(args, k) != default]
    if changed:
        raise ValueError(f"{', '.join(changed)}: Krypkasino options, not for --game kungsholmskille")
    if (args.policy or "mlp") != "mlp":
        raise ValueError(f"--policy {args.policy} reads Krypkasino's move features; Kungsholmskille has mlp only")


def preset(args: Any) -> str:
    """The run's preset (KILLE.md L22): ``args.preset``, ``standard`` when train.py has no such option."""
    return getattr(args, "preset", None) or "standard"


def game_config(args: Any) -> dict[str, Any]:
    """The rule keywords of the env and of the evaluations (checked: ValueError for a bad value)."""
    from krypenv.kungsholmskille.config import EnvConfig

    EnvConfig(args.players, None, args.max_deals, True, "raise", None, preset(args))  # ValueError for a bad value
    return {"players": args.players, "max_deals": args.max_deals, "preset": preset(args)}


def make_env(args: Any, league: Any) -> Any:
    """The training VecEnv: the learner in a random seat of ``--num-envs`` games, forced plays skipped."""
    from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

    return KungsholmskilleVecEnv(args.num_envs, seat="random", opponents=league, seed=args.seed, skip_forced=True,
                                 **game_config(args))


def agent_class() -> Any:
    """Kungsholmskille's ``PPOAgent`` (what ``ppo:PATH`` loads)."""
    from krypenv.agents.kungsholmskille.ppo import PPOAgent

    return PPOAgent


def action_features(args: Any) -> None:
    """None: every Kungsholmskille network reads the observation alone."""


def network(args: Any, env: Any, sizes: list[int], critic_sizes: list[int] | None = None,
            score_width: int | None = None) -> tuple[Any, Any, dict[str, Any], str | None]:
    """(the VecEnv the model sees, the SB3 policy, its kwargs, no action features): an MLP on the observation, its
    critic of ``critic_sizes`` (by default ``sizes``) as a warm start fixes them (no scorer: ``score_width`` unused)."""
    from krypenv.agents.kungsholmskille.ppo import policy_kwargs

    return env, "MlpPolicy", policy_kwargs(sizes, critic_sizes), None


def metadata(args: Any, features: str | None) -> dict[str, Any]:
    """The checkpoint's ``krypenv.json``: the table, ``--max-deals``, a non-standard preset's rules (L22) and the
    run's arguments."""
    from krypenv.agents.kungsholmskille.ppo import metadata as ppo_metadata
    from krypenv.kungsholmskille.config import EnvConfig

    rules = EnvConfig(args.players, None, args.max_deals, True, "raise", None, preset(args)).rules
    return ppo_metadata(args.players, args.max_deals, rules=rules, args=dataclasses.asdict(args))


def check_init(meta: dict[str, Any], args: Any, where: str) -> None:
    """Nothing beyond the shared checks: every Kungsholmskille network reads the observation alone."""


def money_among(agent: Any, opponent: str, args: Any, episodes: int, seed: int) -> tuple[float, float, float, int]:
    """The learner's money per episode (mean, 95% CI low, high, episodes) among ``players − 1`` copies of ``opponent``.

    Duplicate (:mod:`krypenv.eval.kungsholmskille`): ``episodes // players`` deck sets (at least 2), each played
    with the learner in every seat (the rotations of learner, opponent, opponent, …), the
    interval over deck sets.  The same ``seed`` gives the same decks at every call, so points
    of a learning curve differ by the policy only.  An episode cut at ``--max-deals`` counts with
    the money moved so far (L16).
    """
    from krypenv import agents
    from krypenv.eval.kungsholmskille import EvalConfig, evaluate

    players = args.players
    opp = agents.load(opponent, game="kungsholmskille")
    config = EvalConfig(agents=("learner",) + (opponent,) * (players - 1), players=players,
                         deals=max(2, episodes // players), seed=seed, max_deals=args.max_deals, workers=1, batch=256,
                         records=False, preset=preset(args))
    res = evaluate(config, agents=[agent] + [opp] * (players - 1))
    row = next(r for r in res.rows if r.agent == "learner")
    return row.money.mean, row.money.low, row.money.high, row.episodes


def evaluate(agent: Any, args: Any) -> Point:
    """The periodic evaluation: the learner's money per episode among experts (higher is better)."""
    mean, low, high, _ = money_among(agent, "expert", args, args.eval_deals, args.eval_seed)
    return Point(mean, low, high, {"learner_money": mean})


def report(rows: dict[str, tuple[float, float, float, int]], seconds: float) -> str:
    """The final table as text: per baseline, the learner's money per episode at a table of it."""
    lines = [("learner's money per episode (kronor; positive: it takes money from the table), "
              f"among copies of each baseline, duplicate deck sets, the learner in every seat ({seconds:.0f} s)"),
             f"{'opponents':<12} {'episodes':>8} {'money':>8}  95% CI"]
    for name, (mean, low, high, n) in rows.items():
        lines.append(f"{name:<12} {n:>8} {mean:>+8.3f}  [{low:+.3f}, {high:+.3f}]")
    return "\n".join(lines)


def final_table(agent: Any, args: Any) -> tuple[str, dict[str, Any]]:
    """The final evaluation: the learner at a table of each baseline in turn; its money against expert for
    summary.json."""
    t0 = time.time()
    rows = {b: money_among(agent, b, args, args.final_deals, args.final_seed) for b in BASELINES}
    return report(rows, time.time() - t0), dict(zip(("money", "ci_low", "ci_high", "episodes"), rows["expert"]))


def exploit_gain(learner: Any, agent: str, args: Any, deals: int, seed: int) -> dict[str, Any]:
    """``krypenv exploit``'s gain: the learner's money per episode among ``players − 1`` copies of ``agent``.

    ``deals`` duplicate deck sets, each with the learner in every seat (the rotations of learner,
    agent, agent, …), the interval over deck sets; at a table of ``agent`` alone the money is 0
    by symmetry, so it is the learner's gain.  ``agent``: the mean money of the agent's seats.
    """
    from krypenv import agents
    from krypenv.eval.kungsholmskille import EvalConfig, evaluate

    players = args.players
    frozen = agents.load(agent, game="kungsholmskille")
    config = EvalConfig(agents=("learner",) + (agent,) * (players - 1), players=players, deals=deals, seed=seed,
                        max_deals=args.max_deals, workers=1, batch=256, records=False)
    res = evaluate(config, agents=[learner] + [frozen] * (players - 1))
    row = next(r for r in res.rows if r.agent == "learner")
    others = [r.money.mean for r in res.rows if r.agent != "learner"]
    return {"mean": row.money.mean, "low": row.money.low, "high": row.money.high, "unit": "money per episode",
            "games": row.episodes, "learner": row.money.mean, "agent": float(np.mean(others))}


# ------------------------------------------------------------------- expert iteration (krypenv.training.distill)
DISTILL: dict[str, Any] = {
    "teacher": "pimc",  # the first teacher: determinized search with expert rollouts
    "guided": "pimc:policy=mlp:{student}",  # the teacher over a student: the policy-guided search
    "features": None,  # the student reads the observation alone
    "opponent": "expert",  # each iteration's student: its money at a table of experts
    "value_unit": "the mover's mean money at the end of the teacher's rollouts (kronor; higher is better)",
}


def distill_core(players: int, preset: str, n: int) -> Any:
    """``n`` episodes with every seat played from outside (labelling), one pot each (L16, at most 50 deals)."""
    from krypenv.kungsholmskille.batch import KungsholmskilleBatch
    from krypenv.kungsholmskille.config import EXTERNAL, EnvConfig

    return KungsholmskilleBatch(EnvConfig(players=players, preset=preset), n, seat=0, kinds=[EXTERNAL] * players)


def distill_eval(agent: Any, opponent: str, players: int, preset: str, decks: int, seed: int) -> Point:
    """The learner's money per episode among ``players − 1`` copies of ``opponent`` (higher is better), 95% CI."""
    from types import SimpleNamespace

    mean, low, high, _ = money_among(agent, opponent, SimpleNamespace(players=players, max_deals=50, preset=preset),
                                     decks * players, seed)
    return Point(mean, low, high, {})
