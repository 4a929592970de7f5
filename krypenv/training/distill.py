"""Expert iteration: distil the search into a network, let the network guide the next search, repeat.

    python -m krypenv.training.distill --out runs/exit-2p                      # Krypkasino, 2 players
    python -m krypenv.training.distill --out runs/exit-2p --init ppo:checkpoints/ppo-2p.zip --iterations 6
    python -m krypenv.training.distill --game kungsholmskille --players 4 --out runs/exit-kille
    python -m krypenv.training.distill --help                                  # every option, with its default

**Method** (Anthony et al., *Thinking Fast and Slow with Deep Learning and Tree Search*, 2017;
DAgger: Ross et al., 2011).  Each iteration ``i``:

1. *Play.*  ``--shards × --games-per-shard`` games, every seat played by the current student
   (the last iteration's network; at iteration 0 the ``--init`` network, or none): at each
   decision the teacher's action is played with probability ``β_i = beta · beta_decay^i``
   (DAgger's mixing: the teacher's states early, the student's own later), else the student's
   (``--student-play``: its most probable action, as it is measured, or one drawn from its
   policy).  With no student yet the teacher plays every decision.
2. *Label.*  Every decision with two or more legal actions is labelled by the teacher's search
   with **every legal action's value** (its mean over the sampled worlds, ``values(batch)`` of
   ``pimc`` and of the policy-guided search), the teacher's own action and the state, in shards
   on disk (:mod:`krypenv.training.labels`: resumable, atomic, checked on reading).  The teacher
   is the game's ``pimc`` at iteration 0 and, from ``--guide-from`` on, the search guided by the
   current student (``pimc:policy=mlp:STUDENT`` plus ``--guided``), where the game has one.
3. *Train.*  The student (:mod:`krypenv.training.student`) is trained on the labels of the last
   ``--window`` iterations (:func:`krypenv.training.student.train`): the policy head by cross-entropy towards the
   teacher's distribution
   ``softmax(values / temperature)`` over the legal actions (exact probabilities, not samples),
   the value head by squared error towards ``value_scale ×`` the value of the teacher's action;
   Adam, ``--epochs`` passes, the learning rate annealed linearly to 0 within each iteration.
4. *Measure.*  The student, playing its most probable action (``mlp:PATH,greedy=true``), meets
   the game's opponent (Krypkasino: ``pimc``) over ``--eval-decks`` duplicate decks.

**Out** (``--out``): ``labels/`` (the shards), ``students/it000.npz, …`` (``mlp`` checkpoints
with their card: teacher, labels, iterations, command, machine, date), ``final.npz`` (a copy of
the last), ``log.csv`` (per iteration: labels, labels/s, β, losses, the evaluation), ``tb/``
(TensorBoard) and ``args.json``.  A run that is killed starts again where it stopped with the
same command: finished shards and students are kept, a missing shard is labelled again, bit for
bit the same (its content depends only on the seed, the iteration, the shard and the networks).

**Where the labels are made.**  In this process on all cores (the search runs on numba's
threads), or with ``--ray ADDRESS`` as Ray tasks on a cluster through the evaluation's pool
(:mod:`krypenv.eval.ray_pool`), one shard a task, with the same labels bit for bit, or on a GPU with a
teacher that searches there (Krypkasino's ``pimc:...,device=cuda``, :mod:`krypenv.agents.krypkasino.pimc_cuda`: the
same labels bit for bit; a step keeps one GPU thread per game busy, so give it shards of thousands of games).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from krypenv.games import DEFAULT_GAME, GAMES
from krypenv.threads import set_torch_threads
from krypenv.training.common import machine as common_machine
from krypenv.training.common import training_part
from krypenv.training.labels import Labels, LabelSet, card_for
from krypenv.training.student import train, training_data

__all__ = ["Args", "LabelJob", "jobs_of", "label_shard", "main", "teacher_of"]


def arg(default: Any, help: str) -> Any:
    """A dataclass field with its command-line help."""
    return field(default=default, metadata={"help": help})


@dataclass
class Args:
    """Everything a run depends on; ``python -m krypenv.training.distill --help`` lists them with their defaults."""

    out: str = arg("runs/distill", "the run's folder (labels, students, logs); the same folder resumes a run")
    game: str = arg(DEFAULT_GAME, f"the game: {' or '.join(GAMES)}")
    players: int = arg(2, "players at the table, 2 to 6")
    preset: str = arg("standard", "the deck and deal (RULES.md K22, KILLE.md L22)")
    seed: int = arg(1, "seed of the games (every shard's decks and streams) and of torch")
    iterations: int = arg(4, "iterations of play, label, train, measure")
    shards: int = arg(16, "label shards per iteration")
    games_per_shard: int = arg(64, "games per shard (all played at once)")
    teacher: str = arg("", "the first teacher's spec (empty: the game's pimc)")
    guided: str = arg("", "options of the student-guided search that teaches from --guide-from on (empty: its "
                          "defaults)")
    guide_from: int = arg(1, "the first iteration whose teacher is the search over the student (0: never)")
    beta: float = arg(0.5, "DAgger: probability that the teacher's action is played at iteration 0")
    beta_decay: float = arg(0.5, "beta is multiplied by this each iteration")
    student_play: str = arg("greedy", "how the student plays its decisions: greedy (its most probable action, as it "
                                      "is measured) or sample (drawn from its policy)")
    init: str = arg("", "the first student: ppo:PATH (a train.py checkpoint of the game) or mlp:PATH; empty: new")
    hidden: str = arg("128,128", "hidden sizes of a new student's policy body")
    value_hidden: str = arg("128,128", "hidden sizes of a new student's value head")
    temperature: float = arg(1.0, "policy target softmax(values / temperature), in the values' units (points)")
    value_scale: float = arg(0.1, "the value head learns value_scale x the teacher's value")
    value_coef: float = arg(0.5, "weight of the value loss")
    window: int = arg(0, "train on the labels of the last this many iterations (0: all)")
    epochs: int = arg(4, "passes over the training labels per iteration")
    batch_size: int = arg(1024, "labels per gradient step")
    learning_rate: float = arg(1e-3, "Adam learning rate at the start of each iteration (annealed linearly to 0)")
    eval_decks: int = arg(200, "duplicate decks of each iteration's measurement (0: none)")
    eval_seed: int = arg(3000, "seed of the measurement's decks")
    torch_threads: int = arg(0, "torch threads while training (0: the cores)")
    ray: str = arg("-", "label on a Ray cluster at this address ('' for RAY_ADDRESS or a local Ray; '-': here)")


def parse(argv: list[str] | None = None) -> Args:
    """Args from the command line, an option per field."""
    parser = argparse.ArgumentParser(prog="python -m krypenv.training.distill", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(Args):
        kind = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
        parser.add_argument("--" + f.name.replace("_", "-"), type=kind, default=f.default, help=f.metadata["help"])
    return Args(**vars(parser.parse_args(argv)))


def sizes(text: str, name: str) -> list[int]:
    """Hidden sizes from ``128,128``; ValueError naming the option."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        out = []
    if not out or not all(1 <= s <= 4096 for s in out):
        raise ValueError(f"--{name} must be comma-separated sizes from 1 to 4096, got {text!r}")
    return out


def check_args(args: Args) -> None:
    """ValueError with a one-line message for a bad argument or combination."""
    training_part(args.game)  # ValueError naming the games
    if args.players not in GAMES[args.game].players:
        raise ValueError(f"--players must be one of {GAMES[args.game].players} for {args.game}, got {args.players}")
    for name in ("iterations", "shards", "games_per_shard", "epochs", "batch_size"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name in ("window", "eval_decks", "torch_threads", "guide_from", "seed", "eval_seed"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    for name, most in (("iterations", 999), ("shards", 99_999), ("games_per_shard", 4096)):  # shard names, memory
        if getattr(args, name) > most:
            raise ValueError(f"--{name.replace('_', '-')} must be at most {most:,}, got {getattr(args, name)}")
    if not 0 <= args.beta <= 1 or not 0 <= args.beta_decay <= 1:
        raise ValueError(f"--beta and --beta-decay must be in [0, 1], got {args.beta} and {args.beta_decay}")
    if args.student_play not in ("greedy", "sample"):
        raise ValueError(f"--student-play must be greedy or sample, got {args.student_play!r}")
    if args.eval_decks == 1:
        raise ValueError("--eval-decks needs at least 2 decks (for a confidence interval), or 0")
    for name in ("temperature", "value_scale", "learning_rate"):
        if not 0 < getattr(args, name) < float("inf"):
            raise ValueError(f"--{name.replace('_', '-')} must be a positive number, got {getattr(args, name)}")
    if not 0 <= args.value_coef < float("inf"):
        raise ValueError(f"--value-coef must be >= 0, got {args.value_coef}")
    sizes(args.hidden, "hidden")
    sizes(args.value_hidden, "value-hidden")
    if args.init and args.init.partition(":")[0] not in ("ppo", "mlp"):
        raise ValueError(f"--init must be ppo:PATH or mlp:PATH, got {args.init!r}")


# --------------------------------------------------------------------------- labelling
@dataclass(frozen=True)
class LabelJob:
    """One shard's work: everything its labels depend on (a Ray task gets exactly this)."""

    game: str
    players: int
    preset: str
    seed: int
    iteration: int
    index: int
    games: int
    teacher: str
    student: str  # an mlp checkpoint's path, or "" (the teacher plays)
    beta: float
    sample: bool = False  # the student draws its action from its policy (else its most probable one)


def shard_seeds(seed: int, iteration: int, index: int, games: int) -> list[int]:
    """The games' seeds of a shard: independent streams of ``SeedSequence([seed, 4, iteration, index])``."""
    state = np.random.SeedSequence([seed, 4, iteration, index]).generate_state(games, np.uint64)
    return [int(s >> np.uint64(1)) for s in state]  # 63 bits: a seed of krypenv.rng


def label_shard(job: LabelJob) -> tuple[Labels, dict[str, Any]]:
    """Play one shard's games to their end (module docstring, steps 1 and 2); its labels and card.

    The student's numpy network runs with one BLAS thread: the search has the cores (numba's threads), and
    OpenBLAS's idle threads spin (measured: 40% of the CPU time of a shard); one thread also makes the
    student's sums, and so its greedy actions, the same on every machine's thread count.
    """
    from krypenv.agents.mlp import blas_threads

    with blas_threads(1, required=True):
        return _label_shard(job)


def _label_shard(job: LabelJob) -> tuple[Labels, dict[str, Any]]:
    """:func:`label_shard`'s work."""
    from krypenv import agents
    from krypenv.agent_api import check_actions
    from krypenv.agents.mlp import policy_draw

    t0 = time.perf_counter()
    part = training_part(job.game)
    core = part.distill_core(job.players, job.preset, job.games)
    seeds = shard_seeds(job.seed, job.iteration, job.index, job.games)
    core.seed(seeds)
    core.reset()
    teacher = agents.load(job.teacher, game=job.game)
    student = agents.load(f"mlp:{job.student}", game=job.game) if job.student else None
    beta = job.beta if student is not None else 1.0
    status = np.empty(job.games, np.int64)
    parts: list[dict[str, np.ndarray]] = []
    while True:
        envs, seats = core.pending()
        if envs.size == 0:
            break
        batch = core.decisions(envs, seats)
        values, taught = teacher.values(batch)
        u = batch.uniforms(2)  # the DAgger draw, the student's draw
        by_teacher = u[:, 0] < beta
        played = taught.copy()
        if student is not None:
            probs = student.action_probabilities(batch)
            own = policy_draw(probs, u[:, 1]) if job.sample else probs.argmax(axis=1)
            played = np.where(by_teacher, taught, own)
        played = check_actions("distill", batch, played)
        keep = np.asarray(batch.mask != 0).sum(axis=1) >= 2
        if keep.any():
            parts.append({"obs": batch.obs[keep], "mask": batch.mask[keep] != 0, "values": values[keep],
                          "teacher": taught[keep], "played": played[keep], "by_teacher": by_teacher[keep],
                          "seat": seats[keep], "seed": np.asarray(seeds, np.int64)[envs[keep]],
                          "state": core.state[envs[keep]]})
        core._act_external(envs, played, status[:envs.size])
    labels = Labels(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]}) if parts else None
    if labels is None:
        raise RuntimeError(f"shard {job.index} of iteration {job.iteration} has no decision with two legal actions")
    card = {"games": job.games, "seed": job.seed, "teacher": job.teacher, "student": job.student or None,
            "beta": beta, "student_play": "sample" if job.sample else "greedy",
            "seconds": round(time.perf_counter() - t0, 3)}
    return labels, card


def _ray_init() -> None:
    """A Ray worker labels with one numba thread (Ray gives each task one CPU)."""
    import numba

    numba.set_num_threads(1)


def label_iteration(args: Args, labels: LabelSet, jobs: list[LabelJob]) -> tuple[int, float]:
    """Write every missing shard of ``jobs`` (here or on Ray), with a progress bar; (labels written, seconds)."""
    from tqdm import tqdm

    todo = [j for j in jobs if not labels.shard_path(j.iteration, j.index).exists()]
    t0, n = time.perf_counter(), 0
    if not todo:
        return 0, 0.0
    if args.ray != "-":
        from krypenv.eval.ray_pool import RayPool

        results = RayPool(args.ray, _ray_init, ()).imap(label_shard, todo)
    else:
        results = (label_shard(j) for j in todo)
    with tqdm(total=len(todo), desc=f"labelling iteration {todo[0].iteration}", unit="shard", file=sys.stdout,
              mininterval=1 if sys.stdout.isatty() else 60) as bar:  # a log file gets a line a minute
        for job, (lab, card) in zip(todo, results):
            labels.write(job.iteration, job.index, lab, card)
            n += len(lab)
            bar.update(1)
            bar.set_postfix(labels=n, per_s=f"{n / (time.perf_counter() - t0):.0f}")
    return n, time.perf_counter() - t0


# --------------------------------------------------------------------------- the loop
def new_student(args: Args, core: Any) -> tuple[Any, dict[str, Any]]:
    """The iteration-0 student: from ``--init`` or new (its inputs scaled by the observation's bounds)."""
    from krypenv.training.student import Student, from_mlp, from_ppo

    kind, _, path = args.init.partition(":")
    if kind == "ppo":
        student, meta = from_ppo(path, args.game)
    elif kind == "mlp":
        student, meta = from_mlp(path)
    else:
        part = training_part(args.game)
        feats = part.DISTILL["features"]
        n_feats = 0
        if feats is not None:
            n_feats = part.label_features(core, core.state[:1]).shape[2]
        scale = 1.0 / np.maximum(np.asarray(core.high, np.float32), 1.0)
        student = Student(core.dim, core.n_actions, sizes(args.hidden, "hidden"),
                          sizes(args.value_hidden, "value-hidden"), feats, n_feats, in_scale=scale)
        return student, {}
    if int(meta.get("players", args.players)) != args.players:
        raise ValueError(f"--init {args.init} was trained for {meta.get('players')} players, not {args.players}")
    if student.obs_size != core.dim or student.n_actions != core.n_actions:
        raise ValueError(f"--init {args.init}: a network of {student.obs_size} inputs and {student.n_actions} actions, "
                         f"this game has {core.dim} and {core.n_actions}")
    return student, meta


def _number(text: str) -> int | float | str:
    """A log cell as it was written: an int, a float or text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def teacher_of(args: Args, iteration: int, student: str) -> str:
    """The teacher's spec at ``iteration`` (module docstring, step 2)."""
    part = training_part(args.game)
    first = args.teacher or part.DISTILL["teacher"]
    guided = part.DISTILL["guided"]
    if not guided or not args.guide_from or iteration < args.guide_from or not student:
        return first
    return guided.format(student=student) + (f",{args.guided}" if args.guided else "")


def jobs_of(args: Args, iteration: int, student: str) -> list[LabelJob]:
    """The shards of ``iteration`` played by ``student`` (an mlp file, or "") and labelled by its teacher."""
    return [LabelJob(args.game, args.players, args.preset, args.seed, iteration, k, args.games_per_shard,
                     teacher_of(args, iteration, student), student, args.beta * args.beta_decay ** iteration,
                     args.student_play == "sample") for k in range(args.shards)]


def machine() -> str:
    """The machine in a few words (:func:`krypenv.training.common.machine`): processor, cores, Python, torch."""
    m = common_machine()
    return f"{m['cpu']}, {m['cpus']} cores, Python {m['python']}, torch {m['torch']} at {m['cpu_capability']}"


def main(args: Args) -> list[dict[str, Any]]:
    """Run (or resume) the iterations; return the log's rows."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    from krypenv import agents
    from krypenv.training.student import from_mlp

    check_args(args)
    part = training_part(args.game)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1) + "\n")
    torch.manual_seed(args.seed)
    set_torch_threads(args.torch_threads or len(os.sched_getaffinity(0)))
    torch.use_deterministic_algorithms(True)  # the scorer's scatter-add sums in a fixed order: runs repeat
    core = part.distill_core(args.players, args.preset, 1)
    labels = LabelSet(out / "labels", card_for(args.game, args.players, args.preset, core))
    labels.clean()
    students = out / "students"
    log_path = out / "log.csv"
    rows = [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(log_path.open())] \
        if log_path.exists() else []
    done = {int(r["iteration"]) for r in rows}
    student, _ = new_student(args, core)
    start_path = ""
    if args.init.startswith("mlp:"):
        start_path = args.init.partition(":")[2]
    elif args.init:  # a ppo blueprint plays the first iteration as an mlp file (the same network)
        first_card = {"game": args.game, "players": args.players, "preset": args.preset,
                      "trained": {"from": args.init}}
        start_path = str(student.export(students / "init.npz", first_card))
    writer = SummaryWriter(str(out / "tb"))
    total = 0
    for it in range(args.iterations):
        path = students / f"it{it:03d}.npz"
        playing = str(students / f"it{it - 1:03d}.npz") if it else start_path
        teacher = teacher_of(args, it, playing)
        beta = args.beta * args.beta_decay ** it
        label_iteration(args, labels, jobs_of(args, it, playing))
        first = max(0, it - args.window + 1) if args.window else 0
        data_labels, cards = labels.load(list(range(first, it + 1)))
        total = len(data_labels)
        if it in done and path.exists():
            student, _ = from_mlp(path)
            print(f"iteration {it}: resumed from {path}", flush=True)
            continue
        t0 = time.perf_counter()
        rng = np.random.default_rng([args.seed, it])  # per iteration: a resumed run trains the same
        stats = train(student, training_data(args, data_labels, core, student.features is not None), args, rng)
        train_s = time.perf_counter() - t0
        card = {"game": args.game, "players": args.players, "preset": args.preset,
                "value_unit": f"{args.value_scale} x {part.DISTILL['value_unit']}",
                "trained": {"method": "expert iteration (krypenv.training.distill)", "teacher": teacher,
                            "iteration": it, "iterations": it + 1, "labels": total, "init": args.init or None,
                            "command": " ".join(sys.argv), "machine": machine(),
                            "date": time.strftime("%Y-%m-%d"), "args": dataclasses.asdict(args)}}
        student.export(path, card)
        mine = [c for c in cards if c["iteration"] == it]
        label_s = sum(c["seconds"] for c in mine)  # the shards' own times: a resumed run counts them all
        row: dict[str, Any] = {"iteration": it, "teacher": teacher, "beta": round(beta if playing else 1.0, 6),
                               "labels_new": sum(c["labels"] for c in mine), "labels_trained": total,
                               "label_s": round(label_s, 1), "labels_per_s": round(sum(c["labels"] for c in mine)
                                                                                  / label_s, 1) if label_s else "",
                               "train_s": round(train_s, 1), **{k: round(v, 5) for k, v in stats.items()}}
        if args.eval_decks:
            t1 = time.perf_counter()
            opp = part.DISTILL["opponent"]
            point = part.distill_eval(agents.load(f"mlp:{path},greedy=true", game=args.game), opp, args.players,
                                      args.preset, args.eval_decks, args.eval_seed)
            row |= {"opponent": opp, "vs_opponent": round(point.mean, 4), "ci_low": round(point.low, 4),
                    "ci_high": round(point.high, 4), "eval_s": round(time.perf_counter() - t1, 1)}
        for k, v in row.items():
            if isinstance(v, (int, float)) and k != "iteration":
                writer.add_scalar(f"distill/{k}", v, it)
        writer.flush()
        rows.append(row)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with log_path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
        shutil.copyfile(path, out / "final.npz")
        vs = f", vs {row['opponent']} {row['vs_opponent']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}]" \
            if "opponent" in row else ""
        print(f"iteration {it}: {row['labels_new']:,} new labels ({row['labels_per_s'] or '-'}/s), trained on "
              f"{total:,} in {train_s:.0f} s, policy loss {stats['policy_loss']:.4f} (floor "
              f"{stats['target_entropy']:.4f}){vs}", flush=True)
    writer.close()
    return rows


if __name__ == "__main__":
    try:
        main(parse())
    except ValueError as exc:
        print(f"distill: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
