"""Lockstep comparison of a device env with a reference (the SB3 VecEnv, or another device env), step by step.

Used by the CPU-backend tests (tests/envs/test_device.py), the CUDA-simulator tests
(tests/cuda/sim_check.py, in a subprocess) and the GPU check (experiments/device_check.py), so the three
hold the device envs to the same oracle: the same seed and the same actions give the same observations,
masks, rewards, dones and terminal observations, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from krypenv.rng import k_pick_legal


@dataclass
class Tally:
    """What a lockstep run compared."""

    steps: int = 0
    decisions: int = 0
    episodes: int = 0
    per_seat_sum: list[float] = field(default_factory=list)


def host(t: Any) -> np.ndarray:
    """A tensor or array as a NumPy array on the host."""
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _differ(what: str, step: int, a: np.ndarray, b: np.ndarray) -> AssertionError:
    """The error naming the first game whose ``what`` differs."""
    bad = np.flatnonzero((a.reshape(a.shape[0], -1) != b.reshape(b.shape[0], -1)).any(axis=1))
    i = int(bad[0])
    return AssertionError(f"step {step}: {what} of game {i} differs ({len(bad)} games): {a[i]!r} vs {b[i]!r}")


def same(what: str, step: int, a: Any, b: Any) -> None:
    """Assert two batched arrays are equal (dtype-agnostic values), naming the first differing game."""
    a, b = host(a), host(b)
    if a.shape != b.shape or not np.array_equal(a, b):
        if a.shape != b.shape:
            raise AssertionError(f"step {step}: {what} shapes differ: {a.shape} vs {b.shape}")
        raise _differ(what, step, a, b)


def against_vecenv(vec: Any, dev: Any, steps: int, seed: int, until_episodes: int | None = None) -> Tally:
    """Step the SB3 VecEnv ``vec`` and the device env ``dev`` (same games, same seed) with the same uniform random
    legal actions for ``steps`` steps (or until ``until_episodes`` episodes ended); assert equality at every step."""
    n = vec.num_envs
    o1 = vec.reset()
    o2, info = dev.reset()
    rng = np.random.default_rng(seed)
    actions = np.zeros(n, np.int64)
    tally = Tally()
    for step in range(steps):
        masks = vec.action_masks()
        same("observation", step, o1, o2)
        same("mask", step, masks, info["action_mask"])
        k_pick_legal(masks, rng.random(n), actions)
        o1, r1, d1, i1 = vec.step(actions)
        o2, r2, term, trunc, info = dev.step(actions)
        same("reward", step, r1, r2)
        done = host(term) | host(trunc)
        same("done", step, d1, done)
        truncated = np.array([bool(i1[i].get("TimeLimit.truncated", False)) for i in range(n)])
        same("truncated", step, truncated & d1, host(trunc))
        ended = np.flatnonzero(d1)
        if ended.size:
            same("terminal observation", step, np.stack([i1[i]["terminal_observation"] for i in ended]),
                 host(info["final_obs"])[ended])
            same("terminal mask", step, np.stack([i1[i]["terminal_action_mask"] for i in ended]),
                 host(info["final_action_mask"])[ended])
        tally.steps += 1
        tally.decisions += n
        tally.episodes += int(ended.size)
        if until_episodes is not None and tally.episodes >= until_episodes:
            break
    same("observation", steps, o1, o2)
    return tally


def against_device(ref: Any, dev: Any, steps: int, seed: int, reset_at: int | None = None) -> Tally:
    """Step two device envs (e.g. the CPU backend and the CUDA one, in self-play) with the same random legal actions;
    assert equal observations, masks, seats, rewards (per seat), dones, final values and terminal observations.  With
    ``reset_at``, both are reset anew (seeded) before that step, in the middle of their episodes."""
    n = ref.num_envs
    o1, i1 = ref.reset()
    o2, i2 = dev.reset()
    rng = np.random.default_rng(seed)
    actions = np.zeros(n, np.int64)
    tally = Tally(per_seat_sum=[0.0])
    for step in range(steps):
        if step == reset_at:
            o1, i1 = ref.reset(seed=seed + 1000)
            o2, i2 = dev.reset(seed=seed + 1000)
        same("observation", step, o1, o2)
        same("mask", step, i1["action_mask"], i2["action_mask"])
        same("seat", step, i1["seat"], i2["seat"])
        k_pick_legal(host(i1["action_mask"]), rng.random(n), actions)
        o1, r1, t1, u1, i1 = ref.step(actions)
        o2, r2, t2, u2, i2 = dev.step(actions)
        same("rewards", step, r1, r2)
        same("terminated", step, t1, t2)
        same("truncated", step, u1, u2)
        ended = np.flatnonzero(host(t1) | host(u1))
        if ended.size:
            for key in ("final_obs", "final_action_mask", "final_values"):
                same(key, step, host(i1[key])[ended], host(i2[key])[ended])
        tally.steps += 1
        tally.decisions += n
        tally.episodes += int(ended.size)
    return tally
