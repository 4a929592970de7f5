"""One learner's run on Krypkasino's ``tiny`` (2 players): its exact NashConv against decisions and CPU seconds;
on Kungsholmskille (``--game kungsholmskille``), expert's margin against it.

    nice python experiments/learners.py nfsp --config default --seed 1 --phase tune --budget 120 \\
        --out docs/research/learners-tiny.csv [--export DIR] [--rules ranks=A-2-3,hand=2,table=2]
    nice python experiments/learners.py nfsp --game kungsholmskille ... --out docs/research/learners-kille.csv

The learners of the page "Learners on the small variants" (docs/research/learners.md), each run for
``--budget`` CPU seconds of training (this process's CPU time, the measurements left out: a fair budget
on a shared machine, where wall seconds depend on the neighbours), measured at ``--evals`` points spaced
geometrically up to the budget.  A run stops at the first measurement point after its budget, so a learner
whose iteration is long (Deep CFR, ESCHER) may overshoot it by one iteration; the rows say by how much.
Every measurement is exact (:class:`krypenv.openspiel.tree.GameTree`: the learner's policy at all 40,540
information states, OpenSpiel's best responses) and appends a row
``learner, config, phase, seed, decisions, cpu_seconds, seconds, nash_conv`` to ``--out``; the last row
of a run is its last iterate.  ``--rules`` cuts tiny further (the tests' small deals).

**Kungsholmskille** has no game small enough to walk whole, so there the game is ``small`` (2 players) with one
deal a pot (``pot_deals=1``) and a measurement is :mod:`learners_duel`'s: ``expert``'s margin against the policy
(money per episode, duplicate over 1,000 fixed deck sets, both seats), a lower bound on its NashConv; the row's
``expert_margin`` and ``margin_half`` (the 95% half-width) stand where Krypkasino's ``nash_conv`` stands.  Its
information state tensor is the env's observation, so OpenSpiel's learners' networks play there as they learned;
a learner with a network per OpenSpiel player plays each in its seat.  ``cfr+`` needs the tree and does not run
there; Deep CFR has configurations of its own there (:data:`GAME_CONFIGS`: OpenSpiel's defaults would take
minutes an iteration).

* ``ppo``, ``mmd``: :mod:`krypenv.training.selfplay` on the device env (PPO: the same loop without a
  magnet, ``magnet_coef`` 0; MMD: ``update="critic"``).  Decisions: every seat's decisions played.
* ``nfsp``, ``deepcfr``, ``escher``: OpenSpiel's PyTorch implementations (``open_spiel.python.pytorch``,
  which needs ``dm-tree``), unchanged, on ``python_krypkasino`` (NFSP through ``rl_environment``, one
  agent per seat; Deep CFR and ESCHER traverse the game).  Their loops are the libraries' own, cut into
  pieces between measurements: Deep CFR's ``solve`` iteration (traversals and advantage networks per seat;
  at a measurement its policy network is reinitialised and trained from the strategy memory, as its
  ``print_nash_convs`` mode does), ESCHER's ``train`` iteration (``_train_regret``; its average policy
  network trained at a measurement, as ``train`` does at an evaluation).  Those fits of the average policy
  are part of the measurement, off the budget's clock, as the other learners' measurements are.  ESCHER's
  networks are built under OpenSpiel's fixed seed 42 and re-initialised here from the run's seed.  Their
  policies read OpenSpiel's information state tensor; NFSP's average network's logits are a softmax over
  the legal actions (as NFSP plays them), Deep CFR's and ESCHER's a softmax over every action, renormalised
  over the legal ones (``escher.Agent.action_probabilities`` does that; Deep CFR's ``action_probabilities``
  returns the legal entries unnormalised).  Decisions: player nodes at which an action was applied
  (counted on the game's states; tree search counts every branch it expands).  Deep CFR's traversals stop when
  the budget is spent, and its last iteration trains on those done (on Kungsholmskille one traversal can take
  seconds, and whole iterations of 10 to 20 took up to 100 CPU s: a 45 s budget was overshot threefold).
* ``cfr+``: OpenSpiel's C++ CFR+ on the cached tree, the floor.  Decisions: each iteration walks every
  player node once per seat.

``--export DIR`` writes the final policy where ``krypenv exploit`` reads it: ``mlp`` checkpoints for
``ppo``/``mmd`` (``mlp:DIR/LEARNER-CONFIG-sSEED.npz``), a tabular policy file
(``tabular:DIR/LEARNER-CONFIG-sSEED.json.gz``, keys hashed) for the others on Krypkasino (on Kungsholmskille,
which has no table of information states, the ``mlp`` checkpoints only).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import learners_duel
import numpy as np

from krypenv.threads import set_torch_threads

RUN_FIELDS = ["learner", "config", "phase", "seed", "decisions", "cpu_seconds", "seconds"]
FIELDS = [*RUN_FIELDS, "nash_conv"]  # Krypkasino's rows; Kungsholmskille's: GAME_FIELDS
GAME_FIELDS = {"krypkasino": FIELDS, "kungsholmskille": [*RUN_FIELDS, "expert_margin", "margin_half"]}
VALUE = {"krypkasino": "nash_conv", "kungsholmskille": "expert_margin"}  # what a run is ranked by (lower: better)
# each game's preset and base rules (Kungsholmskille's: the game its measurement, learners_duel, plays)
GAME_PRESET = {"krypkasino": ("tiny", ""), "kungsholmskille": (learners_duel.PRESET, learners_duel.RULES)}
CONFIGS: dict[str, dict[str, dict[str, Any]]] = {
    "ppo": {"default": {"num_envs": 512, "num_steps": 32, "learning_rate": 3e-4},
            "large-batch": {"num_envs": 2048, "num_steps": 32, "learning_rate": 3e-4}},
    "mmd": {"default": {"num_envs": 512, "num_steps": 16, "update_epochs": 4, "num_minibatches": 2,
                        "learning_rate": 1e-3},
            # the page's best sampled try (p1): a 4x batch, η and α annealed as 1/√t, here from 0.5M decisions
            "annealed": {"num_envs": 2048, "num_steps": 16, "update_epochs": 4, "num_minibatches": 4,
                         "learning_rate": 1e-3, "eta_schedule": "sqrt", "magnet_schedule": "sqrt",
                         "schedule_start": 500_000}},
    "nfsp": {"default": {"hidden": [128], "anticipatory_param": 0.1, "rl_learning_rate": 0.01,
                         "sl_learning_rate": 0.01, "epsilon_decay_duration": 1_000_000},
             "adam": {"hidden": [128], "anticipatory_param": 0.1, "rl_learning_rate": 1e-3,
                      "sl_learning_rate": 1e-3, "epsilon_decay_duration": 1_000_000, "optimizer_str": "adam"}},
    "deepcfr": {"default": {"layers": (64,), "num_traversals": 375, "advantage_network_train_steps": 375,
                            "policy_network_train_steps": 2500},
                "small": {"layers": (128,), "num_traversals": 100, "advantage_network_train_steps": 200,
                          "policy_network_train_steps": 1000}},
    "escher": {"default": {}, "small": {"value_traversals": 128, "regret_traversals": 256}},
    "cfr+": {"default": {}},
}
# Kungsholmskille's configurations where they differ: OpenSpiel's Deep CFR defaults (375 traversals an iteration,
# up to seconds each there) would not end one iteration within the budget; 20 traversals took 44-100 CPU s an
# iteration, overshooting a 45 s budget threefold
GAME_CONFIGS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {"kungsholmskille": {
    # mmd also with every seat exploring (ε = 0.2, shrunk alike): the options of the page's converging runs on tiny
    # (Krypkasino's benchmark was measured on another machine before it existed; a CPU second is not comparable)
    "mmd": {**CONFIGS["mmd"], "explore": {**CONFIGS["mmd"]["annealed"], "explore": 0.2}},
    "deepcfr": {"small": {"layers": (64,), "num_traversals": 10, "advantage_network_train_steps": 100,
                          "policy_network_train_steps": 500},
                "tiny": {"layers": (64,), "num_traversals": 5, "advantage_network_train_steps": 50,
                         "policy_network_train_steps": 500}},
}}


def configs(game: str, learner: str) -> dict[str, dict[str, Any]]:
    """The configurations of ``learner`` on ``game``."""
    return GAME_CONFIGS.get(game, {}).get(learner, CONFIGS[learner])


class Recorder:
    """Measures a policy (exactly on Krypkasino, by expert's margin on Kungsholmskille) and appends its row."""

    def __init__(self, args: argparse.Namespace) -> None:
        from krypenv.training.monitor import Monitor, Stopwatch

        self.args, self.clock = args, Stopwatch()
        self.tree: Any = None
        if args.game == "krypkasino":
            from krypenv.openspiel.tree import GameTree

            self.tree = GameTree.load(args.game, args.preset, 2, **args.rule_keys)
        self.points = list(np.geomspace(args.budget / 2 ** (args.evals - 1), args.budget, args.evals))
        self.monitor = Monitor(Path(args.log_dir) / f"{args.learner}-{args.config}-s{args.seed}",
                               total=int(np.ceil(args.budget)), unit="cpu-seconds", progress=args.progress,
                               tensorboard=args.tensorboard)
        self.last: np.ndarray | None = None

    def due(self) -> bool:
        """Whether training has reached the next measurement point."""
        return bool(self.points) and self.clock.cpu() >= self.points[0]

    def done(self) -> bool:
        """Whether the budget is spent (the last point measured)."""
        return not self.points

    def spent(self) -> bool:
        """Whether training has used the whole budget (its last point is due)."""
        return self.clock.cpu() >= self.args.budget

    def record(self, decisions: int, matrix: Callable[[], np.ndarray], seats: Callable[[], list[Any]],
               fit: Callable[[], None] | None = None) -> None:
        """Measure the policy (off the clock: ``fit()`` first when given, then on Krypkasino its matrix ``matrix()``
        over the tree's information states, on Kungsholmskille its seats' policies ``seats()``) and write the row."""
        cpu, wall = self.clock.cpu(), self.clock.wall()
        while self.points and cpu >= self.points[0]:
            self.points.pop(0)
        if fit is not None:
            self.clock.skip(fit)
        if self.tree is not None:
            probs = self.clock.skip(matrix)
            measured = {"nash_conv": round(self.clock.skip(lambda: self.tree.nash_conv(probs)["nash_conv"]), 6)}
            self.last = probs
        else:
            gain, half = self.clock.skip(lambda: learners_duel.margin(seats()))
            measured = {"expert_margin": round(gain, 4), "margin_half": round(half, 4)}
        value = measured[VALUE[self.args.game]]
        row = {"learner": self.args.learner, "config": self.args.config, "phase": self.args.phase,
               "seed": self.args.seed, "decisions": int(decisions), "cpu_seconds": round(cpu, 1),
               "seconds": round(wall, 1), **measured}
        out = Path(self.args.out)
        new = not out.exists()
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=GAME_FIELDS[self.args.game])
            if new:
                writer.writeheader()
            writer.writerow(row)
        self.monitor.log(int(cpu), {k: v for k, v in row.items() if k not in ("learner", "config", "phase")})
        self.monitor.note(f"{self.args.learner} {self.args.config} s{self.args.seed}: {decisions:,} decisions, "
                          f"{cpu:.0f} CPU s: {VALUE[self.args.game]} {value:.4f}")


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over the legal actions (what a policy over every action plays once renormalised)."""
    z = np.where(legal, logits, -np.inf)
    z = np.exp(z - z.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


def renormalised(probs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """A distribution over every action restricted to the legal ones and renormalised."""
    p = np.where(legal, probs, 0.0).astype(np.float64)
    total = p.sum(1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1), legal / legal.sum(1, keepdims=True))


def seat_policy(tree: Any, nets: list[Callable[[np.ndarray], np.ndarray]],
                finish: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Each seat's network on its information state tensors, ``finish``ed into a policy matrix."""
    out = np.zeros(tree.legal.shape)
    for seat, net in enumerate(nets):
        rows = np.flatnonzero(tree.info_player == seat)
        for k in range(0, len(rows), 8192):
            r = rows[k:k + 8192]
            out[r] = finish(net(tree.info_tensor[r].astype(np.float32)), tree.legal[r])
    return out


def seat_functions(nets: list[Callable[[np.ndarray], np.ndarray]],
                   finish: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> list[Any]:
    """Each seat's network as a policy of env observations (Kungsholmskille's information state tensor)."""
    return [lambda obs, legal, net=net: finish(net(np.asarray(obs, np.float32)), legal) for net in nets]


class Counted:
    """Counts the player nodes at which our OpenSpiel game applies an action (the decisions a learner played)."""

    def __init__(self, game: Any) -> None:
        self.cls = type(game.new_initial_state())

    def __enter__(self) -> Counted:  # noqa: PYI034
        self.n = 0
        self.original = self.cls._apply_action
        counter = self

        def counted(state: Any, action: int) -> None:
            if not state.is_chance_node():  # a player's action
                counter.n += 1
            counter.original(state, action)

        self.cls._apply_action = counted
        return self

    def __exit__(self, *exc: object) -> None:
        self.cls._apply_action = self.original


def game_of(args: argparse.Namespace) -> Any:
    """The OpenSpiel game of the run: ``python_GAME(players=2,preset=PRESET)`` and the game's rules with ``--rules``."""
    from krypenv.openspiel.exploit import load_game

    return load_game(args.game, args.preset, 2, **args.rule_keys)


def torch_net(module: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A torch module as a numpy function (no gradients)."""
    import torch

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(x)).numpy()

    return run


def run_selfplay(args: argparse.Namespace, rec: Recorder, cfg: dict[str, Any]) -> None:
    """PPO (no magnet) or MMD (critic) self-play: selfplay.main in pieces of iterations between measurements."""
    from krypenv.training import selfplay

    update = {"ppo": {"magnet_coef": 0.0, "magnet_every": 0}, "mmd": {"update": "critic", "magnet_every": 0}}
    base = selfplay.Args(game=args.game, preset=args.preset, rules=args.all_rules, device="cpu", hidden=128,
                         seed=args.seed,
                         out=str(rec.monitor.out / "run"),
                         progress=False, tensorboard=False, total_timesteps=10**12, **update[args.learner], **cfg)

    def stop_and_measure(state: selfplay.Snapshot) -> bool:
        if rec.due():
            rec.record(state.decisions, lambda: rec.tree.policy_of(state.probabilities), lambda: [state.probabilities])
        return rec.done()

    selfplay.main(base, clock=rec.clock, hook=stop_and_measure)
    if args.export:
        selfplay_final = Path(base.out) / "final.npz"
        Path(args.export).mkdir(parents=True, exist_ok=True)
        selfplay_final.replace(Path(args.export) / f"{args.learner}-{args.config}-s{args.seed}.npz")


def nfsp_episode(env: Any, agents: list[Any]) -> int:
    """One episode of OpenSpiel's RL loop (its examples' ``while not time_step.last()``), every seat's agent handed
    the steps at its turns and the last one; returns the decisions played."""
    decisions = 0
    step = env.reset()
    while not step.last():
        p = step.observations["current_player"]
        step = env.step([agents[p].step(step).action])
        decisions += 1
    for agent in agents:
        agent.step(step)
    return decisions


def run_nfsp(args: argparse.Namespace, rec: Recorder, cfg: dict[str, Any]) -> None:
    """OpenSpiel's NFSP (PyTorch) through rl_environment, one agent per seat; its average policy is measured."""
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import nfsp

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    env = rl_environment.Environment(game_of(args), seed=args.seed)
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    cfg = dict(cfg)
    hidden = cfg.pop("hidden")
    agents = [nfsp.NFSP(p, size, actions, hidden, reservoir_buffer_capacity=int(2e6), replay_buffer_capacity=int(2e5),
                        min_buffer_size_to_learn=1000, batch_size=128, learn_every=64,
                        update_target_network_every=19200, seed=args.seed * 10 + p, **cfg) for p in range(2)]
    decisions = 0
    while not rec.done():
        decisions += nfsp_episode(env, agents)
        if rec.due():
            nets = [torch_net(a._avg_network) for a in agents]
            rec.record(decisions, lambda nets=nets: seat_policy(rec.tree, nets, masked_softmax),
                       lambda nets=nets: seat_functions(nets, masked_softmax))


def run_deepcfr(args: argparse.Namespace, rec: Recorder, cfg: dict[str, Any]) -> None:
    """OpenSpiel's Deep CFR (PyTorch): its solve() iterations; at a measurement its policy network is trained."""
    from open_spiel.python.pytorch import deep_cfr

    cfg = dict(cfg)
    layers = cfg.pop("layers")
    game = game_of(args)
    solver = deep_cfr.DeepCFRSolver(game, policy_network_layers=layers,
                                    advantage_network_layers=layers, num_iterations=1, learning_rate=1e-3,
                                    batch_size_advantage=256, batch_size_strategy=256, memory_capacity=int(1e6),
                                    reinitialize_advantage_networks=True, seed=args.seed, **cfg)
    softmax_net = torch_net(solver._policy_network)  # its final layer is the softmax over every action
    with Counted(game) as count:
        while not rec.done():
            for p in range(2):  # one iteration of DeepCFRSolver.solve
                for _ in range(solver._num_traversals):
                    solver._traverse_game_tree(solver._root_node, p)
                    if rec.spent():  # the budget cuts the iteration's traversals short (one takes seconds at times)
                        break
                solver._reinitialize_advantage_network(p)
                solver._learn_advantage_network(p)
            solver._iteration += 1
            if rec.due():
                def fit() -> None:  # its policy network fitted afresh to the strategy memory
                    solver._reinitialize_policy_network()
                    solver._learn_strategy_network()

                rec.record(count.n, lambda: seat_policy(rec.tree, [softmax_net] * 2, renormalised),
                           lambda: seat_functions([softmax_net], renormalised), fit)


def escher_agent(game: Any, cfg: dict[str, Any], seed: int) -> Any:
    """ESCHER's agent with ``cfg`` on top of its Config, its networks and numpy's stream from ``seed`` (escher.Agent
    builds every network under OpenSpiel's fixed seed 42, which also seeds numpy: every run would be alike)."""
    import torch
    from open_spiel.python.pytorch import escher

    config = escher.Config()
    for key, value in cfg.items():
        setattr(config, key, value)
    agent = escher.Agent(game, config)
    torch.manual_seed(seed)
    np.random.seed(seed)
    for net in [agent.avg_policy_net, *agent.regret_nets, *agent.value_nets]:
        net.reset()  # initialised from this run's seed
    return agent


def run_escher(args: argparse.Namespace, rec: Recorder, cfg: dict[str, Any]) -> None:
    """OpenSpiel's ESCHER (PyTorch): its train() iterations; at a measurement its average policy is trained."""
    import torch
    from open_spiel.python.pytorch import escher

    game = game_of(args)
    agent = escher_agent(game, cfg, args.seed)
    train = escher.TrainConfig(game)
    softmax_net = torch_net(lambda x: torch.softmax(agent.avg_policy_net(x), dim=-1))
    with Counted(game) as count:
        while not rec.done():
            escher._train_regret(train, agent)
            if rec.due():  # its average policy network trained at a measurement (train() does that at evaluations)
                rec.record(count.n, lambda: seat_policy(rec.tree, [softmax_net] * 2, renormalised),
                           lambda: seat_functions([softmax_net], renormalised), lambda: escher._train_avg_policy(agent))
            agent.t += 1


def run_cfr_plus(args: argparse.Namespace, rec: Recorder, cfg: dict[str, Any]) -> None:
    """OpenSpiel's C++ CFR+ on the cached tree (the tree's caching inside the budget); its average policy."""
    import pyspiel

    from krypenv.openspiel.solve import cpp_policy_table

    game = game_of(args)
    solver = pyspiel.CFRPlusSolver(pyspiel.load_game(f"cached_tree(game={game})"))
    per_iteration = 2 * int((rec.tree.kind == 1).sum())  # every player node, once per seat
    iterations = 0
    while not rec.done():
        solver.evaluate_and_update_policy()
        iterations += 1
        if rec.due():
            table = cpp_policy_table(solver.tabular_average_policy())
            rec.record(iterations * per_iteration, lambda table=table: rec.tree.table(table.__getitem__), list)


RUNNERS = {"ppo": run_selfplay, "mmd": run_selfplay, "nfsp": run_nfsp, "deepcfr": run_deepcfr,
           "escher": run_escher, "cfr+": run_cfr_plus}


def export_table(tree: Any, probs: np.ndarray, path: Path, meta: dict[str, Any]) -> None:
    """A policy matrix as a tabular policy file (keys hashed), which ``tabular:PATH`` plays and exploit measures."""
    from krypenv.openspiel.policy import TabularPolicyFile

    table = {str(k): {int(a): float(p) for a in np.flatnonzero(tree.legal[i]) for p in [probs[i, a]]}
             for i, k in enumerate(tree.keys)}
    path.parent.mkdir(parents=True, exist_ok=True)
    TabularPolicyFile(tree.game_string, table, meta).save(path, hashed=True)


def last_iterates(path: str | Path) -> list[dict[str, str]]:
    """Each run's last row in a CSV of this driver (a run: learner, config, phase, seed), in the CSV's order."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    last = {(r["learner"], r["config"], r["phase"], r["seed"]): r for r in rows}
    return list(last.values())


def best_config(path: str | Path, learner: str) -> str:
    """The configuration of ``learner`` whose tune runs have the lowest mean last-iterate NashConv (Kungsholmskille:
    expert's margin) (``default`` when it has no tune runs, as ``cfr+``)."""
    runs: dict[str, list[float]] = {}
    for r in last_iterates(path) if Path(path).exists() else []:
        if r["learner"] == learner and r["phase"] == "tune":
            runs.setdefault(r["config"], []).append(float(r["nash_conv"] if "nash_conv" in r else r["expert_margin"]))
    return min(runs, key=lambda c: float(np.mean(runs[c]))) if runs else "default"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (module docstring), checked: argparse's error (exit 2) names a bad value."""
    from krypenv.training.exploit import parse_rules

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("learner", choices=sorted(RUNNERS))
    parser.add_argument("--game", choices=sorted(GAME_PRESET), default="krypkasino",
                        help="the game: krypkasino (tiny, measured exactly) or kungsholmskille (small, one deal a pot, "
                             "measured by expert's margin: no tree of it is small enough, the page)")
    parser.add_argument("--rules", default="", help="more rule keys on the game's, e.g. ranks=A-2-3,hand=2,table=2 "
                                                    "(a cut of tiny: the tests)")
    parser.add_argument("--config", default="default")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phase", choices=["tune", "final"], default="tune")
    parser.add_argument("--budget", type=float, default=120.0, help="training CPU seconds")
    parser.add_argument("--evals", type=int, default=6, help="measurements, geometric up to the budget")
    parser.add_argument("--out", type=Path, default=Path("results/learners-tiny.csv"))
    parser.add_argument("--export", default="", help="write the final policy into this folder")
    parser.add_argument("--log-dir", default="runs/learners", help="TensorBoard and log.csv of each run")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--tensorboard", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    if args.learner == "cfr+" and args.game != "krypkasino":
        parser.error(f"cfr+ needs the whole tree, which {args.game} has none of small enough (the page)")
    args.preset, base = GAME_PRESET[args.game]
    known = configs(args.game, args.learner)
    if args.config not in known:
        parser.error(f"--config must be one of {', '.join(known)} for {args.learner} on {args.game}, "
                     f"got {args.config!r}")
    if not (np.isfinite(args.budget) and args.budget > 0):
        parser.error(f"--budget must be a positive number of CPU seconds, got {args.budget}")
    if args.evals < 1:
        parser.error(f"--evals must be at least 1, got {args.evals}")
    if args.seed < 0:
        parser.error(f"--seed must be 0 or more, got {args.seed}")
    args.all_rules = ",".join(r for r in (base, args.rules) if r)
    try:
        args.rule_keys = parse_rules(args.all_rules)
    except ValueError as e:
        parser.error(str(e))
    fields = GAME_FIELDS[args.game]
    if args.out.exists() and args.out.read_text().split("\n", 1)[0].split(",") != fields:
        parser.error(f"--out {args.out} exists and its header is not {','.join(fields)}")
    return args


def main(argv: list[str] | None = None) -> None:
    """One run (module docstring)."""
    args = parse_args(argv)
    set_torch_threads(1)
    rec = Recorder(args)
    RUNNERS[args.learner](args, rec, configs(args.game, args.learner)[args.config])
    rec.monitor.close()
    if args.export and args.learner not in ("ppo", "mmd") and rec.last is not None:
        export_table(rec.tree, rec.last, Path(args.export) / f"{args.learner}-{args.config}-s{args.seed}.json.gz",
                     {"learner": args.learner, "config": args.config, "seed": args.seed})


if __name__ == "__main__":
    main()
