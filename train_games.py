"""The per-game pieces of ``train.py``: defaults, the batched env, the network, the checkpoint metadata, evaluations.

``train.py`` reads top to bottom for any game; what differs between Krypkasino (``--game
krypkasino``, the default) and Kungsholmskille (``--game kungsholmskille``) is here, each piece
a function with a branch per game:

| piece | Krypkasino | Kungsholmskille |
|---|---|---|
| defaults | 2 players, league ``expert=8,greedy=1,self=1``, network ``moves`` | 4 players, league ``expert=6,timid=2,random=1,self=1``, network ``mlp`` |
| episode | one deal; reward minus its score change | one pot, dealt on until it goes out (L16: at most ``--max-deals``); reward the money change |
| env | ``KrypkasinoVecEnv`` | ``KungsholmskilleVecEnv(skip_forced=True)``: a forced play (L10) is not a learner decision |
| network | move scorer or MLP (``krypenv.agents.krypkasino.ppo``) | MLP on :class:`krypenv.agents.kungsholmskille.ppo.KilleInput` |
| periodic evaluation | duplicate deals against ``expert`` (``eval``), learner − expert score per deal (lower better) | duplicate deck sets (``krypenv.eval.kungsholmskille``): the learner in every seat of a table of ``expert``s, its money per episode (higher better; 0 is expert's own level at an all-expert table) |
| final table | duplicate deals against every baseline | the same table against each baseline in turn |
"""  # noqa: E501 - the table's rows cannot be wrapped (ruff reads a noqa after a string for all of its lines)

from __future__ import annotations

import dataclasses
from typing import Any

GAMES = ("krypkasino", "kungsholmskille")
DEFAULTS: dict[str, dict[str, Any]] = {
    "krypkasino": {"players": 2, "league": "expert=8,greedy=1,self=1", "policy": "moves"},
    "kungsholmskille": {"players": 4, "league": "expert=6,timid=2,random=1,self=1", "policy": "mlp"},
}
BASELINES = {"krypkasino": ("random", "greedy", "creeper", "expert"),
             "kungsholmskille": ("random", "timid", "expert")}  # pimc: minutes per evaluation, left out
EPISODE_VALUE = {"krypkasino": "score", "kungsholmskille": "money"}  # the env's infos key of an episode's result


def resolve(args: Any) -> Any:
    """``args`` with the per-game defaults filled in (players 0, league and policy empty); ValueError for a bad game."""
    if args.game not in GAMES:
        raise ValueError(f"--game must be one of {', '.join(GAMES)}, got {args.game!r}")
    fill = {k: v for k, v in DEFAULTS[args.game].items() if not getattr(args, k)}
    if args.game == "kungsholmskille":
        changed = [f"--{k.replace('_', '-')}" for k, default in (("teams", "none"), ("two_player_deal", "6+4"),
                                                                ("set_aside", "court"), ("last_capture_point", False))
                   if getattr(args, k) != default]
        if changed:
            raise ValueError(f"{', '.join(changed)}: Krypkasino options, not for --game kungsholmskille")
        if (args.policy or "mlp") != "mlp":
            raise ValueError(f"--policy {args.policy} reads Krypkasino's move features; Kungsholmskille has mlp only")
    return dataclasses.replace(args, **fill)


def game_config(args: Any) -> dict[str, Any]:
    """The rule keywords of the env and of the evaluations (checked)."""
    if args.game == "kungsholmskille":
        from krypenv.kungsholmskille.config import EnvConfig

        EnvConfig(args.players, None, args.max_deals, True, "raise", None)  # ValueError for a bad value
        return {"players": args.players, "max_deals": args.max_deals}
    from krypenv.krypkasino.rules import Rules, parse_teams

    g = {"players": args.players, "teams": parse_teams(args.teams, args.players),
         "two_player_deal": args.two_player_deal, "set_aside": args.set_aside,
         "last_capture_point": args.last_capture_point}
    Rules(**g)  # ValueError for a bad variant
    return g


def make_env(args: Any, league: Any) -> Any:
    """The training VecEnv: the learner in a random seat of ``--num-envs`` games, the league in the others."""
    g = game_config(args)
    if args.game == "kungsholmskille":
        from krypenv.kungsholmskille.vec import KungsholmskilleVecEnv

        return KungsholmskilleVecEnv(args.num_envs, seat="random", opponents=league, seed=args.seed, skip_forced=True,
                                     **g)
    from krypenv.krypkasino.vec import KrypkasinoVecEnv

    return KrypkasinoVecEnv(args.num_envs, seat="random", opponents=league, seed=args.seed, **g)


def agent_class(game: str) -> Any:
    """The game's ``PPOAgent`` (what ``ppo:PATH`` loads)."""
    if game == "kungsholmskille":
        from krypenv.agents.kungsholmskille.ppo import PPOAgent

        return PPOAgent
    from krypenv.agents.krypkasino.ppo import PPOAgent

    return PPOAgent


# --------------------------------------------------------------------------- Krypkasino evaluation
def evaluate_against(agent: Any, opponents: tuple[str, ...], args: Any, deals: int, seed: int) -> Any:
    """Duplicate evaluation of ``agent`` (labelled ``learner``) against agent specs; krypenv.eval.krypkasino.Results."""
    from krypenv.eval.krypkasino import EvalConfig, evaluate

    from krypenv import agents

    g = game_config(args)
    config = EvalConfig(agents=("learner", *opponents), players=g["players"], teams=g["teams"], deals=deals,
                        seed=seed, two_player_deal=g["two_player_deal"], set_aside=g["set_aside"],
                        last_capture_point=g["last_capture_point"], records=False)
    return evaluate(config, agents=[agent, *(agents.load(s) for s in opponents)])


def margin(results: Any, opponent: str = "expert") -> Any:
    """The head-to-head interval learner − opponent (negative: the learner scores less, i.e. better)."""
    for p in results.pairs:
        if (p.a, p.b) == ("learner", opponent):
            return p.diff
        if (p.a, p.b) == (opponent, "learner"):
            return dataclasses.replace(p.diff, mean=-p.diff.mean)
    raise ValueError(f"no head-to-head row for learner and {opponent}")


# --------------------------------------------------------------------------- Kungsholmskille evaluation
def kille_money(agent: Any, opponent: str, args: Any, episodes: int, seed: int) -> tuple[float, float, float, int]:
    """The learner's money per episode (mean, 95% CI low, high, episodes) among ``players − 1`` copies of ``opponent``.

    Duplicate (:mod:`krypenv.eval.kungsholmskille`): ``episodes // players`` deck sets (at least 2), each played
    with the learner in every seat (the rotations of learner, opponent, opponent, …), the
    interval over deck sets.  The same ``seed`` gives the same decks at every call, so points
    of a learning curve differ by the policy only.  An episode cut at ``--max-deals`` counts with
    the money moved so far (L16).
    """
    from krypenv.eval.kungsholmskille import EvalConfig, evaluate

    from krypenv import agents

    P = args.players
    opp = agents.load(opponent, game="kungsholmskille")
    config = EvalConfig(agents=("learner",) + (opponent,) * (P - 1), players=P, deals=max(2, episodes // P),
                        seed=seed, max_deals=args.max_deals, workers=1, batch=256, records=False)
    res = evaluate(config, agents=[agent] + [opp] * (P - 1))
    row = next(r for r in res.rows if r.agent == "learner")
    return row.money.mean, row.money.low, row.money.high, row.episodes


def kille_report(rows: dict[str, tuple[float, float, float, int]], seconds: float) -> str:
    """The final table as text: per baseline, the learner's money per episode at a table of it."""
    lines = [("learner's money per episode (kronor; positive: it takes money from the table), "
              f"among copies of each baseline, duplicate deck sets, the learner in every seat ({seconds:.0f} s)"),
             f"{'opponents':<12} {'episodes':>8} {'money':>8}  95% CI"]
    for name, (mean, low, high, n) in rows.items():
        lines.append(f"{name:<12} {n:>8} {mean:>+8.3f}  [{low:+.3f}, {high:+.3f}]")
    return "\n".join(lines)
