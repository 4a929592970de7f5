"""Krypkasino's pieces of ``train.py``: an episode is one deal, the reward minus the learner's score change.

* defaults: 2 players, league ``expert=8,greedy=1,self=1``, network ``moves`` (or ``mlp``);
* env: :class:`krypenv.krypkasino.vec.KrypkasinoVecEnv` with the rules options ``--teams``,
  ``--two-player-deal``, ``--set-aside``, ``--last-capture-point`` (K6, K8, K17, K18) and the deck
  and deal ``--preset`` (K22: the checkpoint's metadata records it, so the policy plays only it);
* network: ``moves`` scores every action from its move features with one shared scorer
  (:mod:`krypenv.agents.krypkasino.move_policy`), ``mlp`` is an MLP on the observation scaled
  to [0, 1] (:class:`krypenv.agents.krypkasino.ppo.ScaledInput`);
* periodic evaluation: duplicate deals against ``expert`` (the evaluation harness), learner −
  expert score per deal, 95% CI over decks (lower is better);
* final table: the learner against each baseline in turn (duplicate decks, every seating), the
  head-to-head margins with their 95% intervals.

The interface is :mod:`krypenv.training.common`'s.
"""

from __future__ import annotations

import dataclasses
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from krypenv.training.common import Curve, Point

DEFAULTS: dict[str, Any] = {"players": 2, "league": "expert=8,greedy=1,self=1", "policy": "moves"}
POLICIES = ("moves", "mlp")
BASELINES = ("random", "greedy", "creeper", "expert")
EPISODE_VALUE = "score"  # the env's infos key of an episode's result: the deal score
RUN_PREFIX = ""
SPREAD_NOTE = ("note: these figures vary with the training seed and the machine (CPUs sum floats in different "
               "orders); the quick start's defaults over seeds, every seed's row: docs/results/krypkasino-training.md, "
               "'The quick start over seeds'")
CURVE = Curve(label="learner - expert", y_label="score difference per deal vs expert\n(negative: learner better)",
              unit="deal", points="duplicate decks", higher_better=False)


def check_options(args: Any) -> None:
    """Every option of ``train.py`` is Krypkasino's (``--max-deals`` is unused): nothing to refuse."""


def game_config(args: Any) -> dict[str, Any]:
    """The rule keywords of the env and of the evaluations (checked: ValueError for a bad variant or teams)."""
    from krypenv.krypkasino.rules import parse_teams

    g = {"players": args.players, "teams": parse_teams(args.teams, args.players),
         "two_player_deal": args.two_player_deal, "set_aside": args.set_aside,
         "last_capture_point": args.last_capture_point, "preset": getattr(args, "preset", "standard")}
    rules_of(g)  # ValueError for a bad variant or preset
    return g


def rules_of(g: dict[str, Any]) -> Any:
    """The :class:`krypenv.krypkasino.rules.Rules` of :func:`game_config`'s keywords (the preset's deck and deal)."""
    from krypenv.krypkasino.rules import Rules

    return Rules.from_preset(g["preset"], **{k: v for k, v in g.items() if k != "preset"})


def make_env(args: Any, league: Any) -> Any:
    """The training VecEnv: the learner in a random seat of ``--num-envs`` games, the league in the others."""
    from krypenv.krypkasino.vec import KrypkasinoVecEnv

    return KrypkasinoVecEnv(args.num_envs, seat="random", opponents=league, seed=args.seed, **game_config(args))


def agent_class() -> Any:
    """Krypkasino's ``PPOAgent`` (what ``ppo:PATH`` loads)."""
    from krypenv.agents.krypkasino.ppo import PPOAgent

    return PPOAgent


def action_features(args: Any) -> str | None:
    """The action features ``--policy`` reads: the move scorer's version, or None for the plain MLP."""
    if args.policy != "moves":
        return None
    from krypenv.agents.krypkasino.move_features import VERSION

    return VERSION


def network(args: Any, env: Any, sizes: list[int], critic_sizes: list[int] | None = None,
            score_width: int | None = None) -> tuple[Any, Any, dict[str, Any], str | None]:
    """(the VecEnv the model sees, the SB3 policy, its kwargs, the action features it reads) for ``--policy``; the
    critic's sizes (by default ``sizes``) and the move scorer's width (by default 64) as a warm start fixes them."""
    critic = list(sizes if critic_sizes is None else critic_sizes)
    if args.policy == "moves":
        from krypenv.agents.krypkasino.move_policy import SCORE_WIDTH, MoveFeatureVecEnv, MovePolicy

        kwargs = {"obs_dim": env.observation_space.shape[0], "sizes": tuple(sizes), "critic_sizes": tuple(critic),
                  "score_width": SCORE_WIDTH if score_width is None else score_width}
        return MoveFeatureVecEnv(env), MovePolicy, kwargs, action_features(args)
    import torch

    from krypenv.agents.krypkasino.ppo import ScaledInput

    return env, "MlpPolicy", {"net_arch": {"pi": sizes, "vf": critic}, "activation_fn": torch.nn.ReLU,
                              "features_extractor_class": ScaledInput}, None


def metadata(args: Any, features: str | None) -> dict[str, Any]:
    """The checkpoint's ``krypenv.json``: the rules, the action features and the run's arguments."""
    from krypenv.agents.krypkasino.ppo import metadata as ppo_metadata

    return ppo_metadata(rules_of(game_config(args)), features=features, args=dataclasses.asdict(args))


def check_init(meta: dict[str, Any], args: Any, where: str) -> None:
    """ValueError when the ``--init-from`` checkpoint was trained on another deck and deal than this run's
    ``--preset`` (K22); its action features are checked against :func:`action_features` by the warm start."""
    from krypenv.agents.krypkasino.ppo import check_deck

    check_deck(where, meta, rules_of(game_config(args)))


def evaluate_against(agent: Any, opponents: tuple[str, ...], args: Any, deals: int, seed: int) -> Any:
    """Duplicate evaluation of ``agent`` (labelled ``learner``) against agent specs; the harness's Results."""
    from krypenv import agents
    from krypenv.eval.krypkasino import EvalConfig, evaluate

    g = game_config(args)
    config = EvalConfig(agents=("learner", *opponents), players=g["players"], teams=g["teams"], deals=deals,
                        seed=seed, two_player_deal=g["two_player_deal"], set_aside=g["set_aside"],
                        last_capture_point=g["last_capture_point"], records=False, preset=g["preset"])
    return evaluate(config, agents=[agent, *(agents.load(s) for s in opponents)])


def margin(results: Any, opponent: str = "expert") -> Any:
    """The head-to-head interval learner − opponent (negative: the learner scores less, i.e. better)."""
    for p in results.pairs:
        if (p.a, p.b) == ("learner", opponent):
            return p.diff
        if (p.a, p.b) == (opponent, "learner"):
            return dataclasses.replace(p.diff, mean=-p.diff.mean)
    raise ValueError(f"no head-to-head row for learner and {opponent}")


def evaluate(agent: Any, args: Any) -> Point:
    """The periodic evaluation: ``--eval-deals`` duplicate decks against ``expert``, learner − expert per deal."""
    res = evaluate_against(agent, ("expert",), args, args.eval_deals, args.eval_seed)
    d = margin(res)
    scores = {"learner_score": next(r.score.mean for r in res.rows if r.agent == "learner"),
              "expert_score": next(r.score.mean for r in res.rows if r.agent == "expert")}
    return Point(d.mean, d.low, d.high, scores)


def final_table(agent: Any, args: Any) -> tuple[str, dict[str, Any]]:
    """The final evaluation: the learner against each baseline in turn, ``--final-deals`` duplicate decks of
    ``--final-seed`` each (every seating of the two); the table as text, and learner − expert for summary.json.

    Only the learner's pairs are played (not the baselines among themselves), so that the decks go
    where the table's claims are: 3,000 decks per baseline cost what 1,000 of the full round robin did.
    """
    from krypenv.eval.report import pair_lines

    t0 = time.time()
    rows, pairs, games = [], [], 0
    for b in BASELINES:
        res = evaluate_against(agent, (b,), args, args.final_deals, args.final_seed)
        scores = {r.agent: r.score.mean for r in res.rows}
        d = margin(res, b)
        rows.append((b, scores["learner"], scores[b]))
        pairs.append(SimpleNamespace(a="learner", b=b, diff=d))
        games += res.config.schedule.n_games
    seconds = time.time() - t0
    head = (f"{args.players} players: the learner against each baseline in turn, {args.final_deals} duplicate decks "
            f"each (seed {args.final_seed}, every seating), {games:,} deals; {games / seconds:,.0f} deals/s")
    lines = [head, f"{'opponent':<8}  {'learner':>8}  {'opponent':>8}   (score per seat per deal, lower is better)"]
    lines += [f"{b:<8}  {mine:>8.2f}  {theirs:>8.2f}" for b, mine, theirs in rows]
    lines.append("head to head, a - b over the deals where they met (negative: a better):")
    lines += pair_lines(pairs, 8, lambda x: f"{x:.2f}", "decks")
    d = pairs[-1].diff
    return "\n".join(lines), {"diff": d.mean, "ci_low": d.low, "ci_high": d.high}


def exploit_gain(learner: Any, agent: str, args: Any, deals: int, seed: int) -> dict[str, Any]:
    """``krypenv exploit``'s gain: points per deal the learner takes fewer than ``agent`` at its tables.

    Duplicate deals at a table of the learner and ``players − 1`` copies of ``agent``, in every
    rotation; the gain is agent − learner mean score per deal (K15: lower is better), 95% CI over decks.
    """
    from krypenv import agents
    from krypenv.eval.krypkasino import EvalConfig, evaluate

    g = game_config(args)
    players = g["players"]
    config = EvalConfig(agents=("learner",) + (agent,) * (players - 1), players=players, teams=g["teams"],
                        deals=deals, seed=seed, two_player_deal=g["two_player_deal"], set_aside=g["set_aside"],
                        last_capture_point=g["last_capture_point"], records=False, preset=g["preset"])
    frozen = agents.load(agent)
    res = evaluate(config, agents=[learner] + [frozen] * (players - 1))
    d = margin(res, agent)
    rows = {r.agent: r for r in res.rows}
    return {"mean": -d.mean, "low": -d.high, "high": -d.low, "unit": "points per deal",
            "games": rows["learner"].games, "learner": rows["learner"].score.mean, "agent": rows[agent].score.mean}


# ------------------------------------------------------------------- expert iteration (krypenv.training.distill)
DISTILL: dict[str, Any] = {
    "teacher": "pimc",  # the first teacher: determinized search with expert rollouts
    "guided": "pimc:policy=mlp:{student}",  # the teacher over a student: the policy-guided search
    "features": "moves/2",  # the student scores actions from the move features
    "opponent": "pimc",  # what each iteration's student is measured against
    "value_unit": "minus the mover's side score at the teacher's rollouts' stop (points; higher is better)",
}


def distill_core(players: int, preset: str, n: int) -> Any:
    """``n`` games with every seat played from outside (labelling): the standard variants of ``preset``."""
    from krypenv.krypkasino.batch import KrypkasinoBatch
    from krypenv.krypkasino.config import EXTERNAL, EnvConfig

    return KrypkasinoBatch(EnvConfig(players=players, preset=preset), n, seat=0, kinds=[EXTERNAL] * players)


def label_features(core: Any, state: np.ndarray) -> np.ndarray:
    """(N, 105, F) the move features of stored state rows of ``core``'s layout (the student's input)."""
    from krypenv.agents.krypkasino.move_features import row_features
    from krypenv.krypkasino.config import C_E0

    rules = core.rules
    return row_features(state, int(core.packed[C_E0]), rules.players, rules.hand_size, rules.set_aside == "spades")


def distill_eval(agent: Any, opponent: str, players: int, preset: str, decks: int, seed: int) -> Point:
    """Learner − ``opponent`` points per deal over ``decks`` duplicate decks (lower is better), 95% CI."""
    args = SimpleNamespace(players=players, teams="none", two_player_deal="6+4", set_aside="court",
                           last_capture_point=False, preset=preset)
    d = margin(evaluate_against(agent, (opponent,), args, decks, seed), opponent)
    return Point(d.mean, d.low, d.high, {})
