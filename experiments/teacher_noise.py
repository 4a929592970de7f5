"""How far a student can fit its teacher: the floor the teacher's own sampling noise puts under the distillation loss.

    python experiments/teacher_noise.py --teacher "pimc:samples=256,z=1" --players 2 --games 32 --repeats 8

A search teacher labels a decision with every legal action's value, a mean over randomly drawn worlds; labelled
again with other worlds, the same decision gets other values and so another target ``t = softmax(values / T)``.
The student sees the decision once and is fitted to one draw, but the best it can predict is the mean target
``t̄`` over the teacher's draws, so its cross-entropy towards the draws cannot go below ``H(t̄)``, while the
training log compares it with the draws' own mean entropy ``E[H(t)]``.  The gap between them,
``E[KL(t ‖ t̄)] = H(t̄) − E[H(t)]``, is the teacher's noise: a floor no network or label count removes.

This script plays ``games`` games with the teacher (seed ``seed``), labels each decision with two or more legal
actions ``repeats`` times (each call draws the next uniform of the game's stream, so other worlds), and prints,
for ``k`` = 2, 4, … ``repeats`` of the draws, ``H(mean of k targets) − mean H(targets)``.  For small noise that is
``(1 − 1/k)`` of the floor (the mean of ``k`` draws is itself noisy), so the floor is estimated as the last figure
times ``k / (k − 1)``.

It also prints the spread of the teacher's value (the value head's target) over the draws, and how often the teacher
disagrees with itself: the share of decisions where the first draw's best action is not another draw's best, and the
value (in points, under the other draw) that the first draw's choice loses.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from krypenv.training.common import training_part
from krypenv.training.student import entropy, policy_targets


def jensen_gap(targets: np.ndarray) -> float:
    """``mean over decisions of H(mean over draws) − mean over draws and decisions of H``, for (K, N, A) targets."""
    return float(entropy(targets.mean(axis=0)).mean() - np.mean([entropy(t).mean() for t in targets]))


def self_disagreement(legal: np.ndarray) -> tuple[float, float]:
    """For (K, N, A) values (−inf off the legal actions): how often draw 0's best action is not draw k's best, and
    the value it loses under draw k, both averaged over draws k ≥ 1 and decisions (the teacher against itself)."""
    first = legal[0].argmax(axis=1)
    rows = np.arange(legal.shape[1])
    others = legal[1:]
    chosen = others[:, rows, first]  # (K − 1, N) draw k's value of draw 0's best action
    return float((others.argmax(axis=2) != first).mean()), float((others.max(axis=2) - chosen).mean())


def label_repeatedly(teacher_spec: str, game: str, players: int, preset: str, games: int, seed: int,
                     repeats: int) -> tuple[np.ndarray, np.ndarray]:
    """((K, N, A) values, (N, A) masks) of every decision with two or more legal actions, labelled ``repeats``
    times by the teacher; the games go on with the first labelling's action."""
    from krypenv import agents

    core = training_part(game).distill_core(players, preset, games)
    core.seed([seed * 1_000_003 + i for i in range(games)])
    core.reset()
    teacher = agents.load(teacher_spec, game=game)
    values, masks = [], []
    status = np.empty(games, np.int64)
    while True:
        envs, seats = core.pending()
        if envs.size == 0:
            break
        batch = core.decisions(envs, seats)
        draws = [teacher.values(batch) for _ in range(repeats)]
        keep = np.asarray(batch.mask != 0).sum(axis=1) >= 2
        values.append(np.stack([v[keep] for v, _ in draws]))
        masks.append(np.asarray(batch.mask[keep] != 0))
        core._act_external(envs, draws[0][1], status[:envs.size])
    return np.concatenate(values, axis=1), np.concatenate(masks)


def main() -> None:
    """Label, then print the gaps for k = 2, 4, ... draws and the estimated floor as one JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--teacher", default="pimc:samples=256,z=1")
    p.add_argument("--game", default="krypkasino")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--preset", default="standard")
    p.add_argument("--games", type=int, default=32)
    p.add_argument("--repeats", type=int, default=8)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=20261127)
    a = p.parse_args()
    if a.repeats < 2 or a.games < 1 or a.temperature <= 0:
        raise SystemExit("--repeats must be at least 2, --games at least 1 and --temperature above 0")
    t0 = time.perf_counter()
    values, masks = label_repeatedly(a.teacher, a.game, a.players, a.preset, a.games, a.seed, a.repeats)
    targets = np.stack([policy_targets(np.nan_to_num(v, nan=0.0), masks, a.temperature).astype(np.float64)
                        for v in values])
    ks = sorted({k for k in (2, 4, 8, 16, 32) if k <= a.repeats} | {a.repeats})
    gaps = {k: round(jensen_gap(targets[:k]), 5) for k in ks}
    k = a.repeats
    legal = np.where(masks, np.nan_to_num(values, nan=-np.inf), -np.inf)  # (K, N, A)
    best = legal.max(axis=2)  # (K, N) the teacher's value
    miss, lost = self_disagreement(legal)
    out = {"teacher": a.teacher, "game": a.game, "players": a.players, "preset": a.preset, "games": a.games,
           "seed": a.seed, "decisions": int(masks.shape[0]), "repeats": k, "temperature": a.temperature,
           "mean_entropy": round(float(np.mean([entropy(t).mean() for t in targets])), 5),
           "gap_by_draws": gaps, "floor_estimate": round(gaps[k] * k / (k - 1), 5),
           "value_sd_over_draws": round(float(best.std(axis=0, ddof=1).mean()), 4),
           "best_differs": round(miss, 4), "best_value_lost": round(lost, 4),
           "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
