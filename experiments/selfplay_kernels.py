"""The CPU slow paths the self-play loop avoids (:mod:`krypenv.training.mmdnet`), timed against their replacements.

    OMP_NUM_THREADS=1 taskset -c 1 nice python experiments/selfplay_kernels.py

Printed, per CPU second of one torch thread, at the update's shapes on ``tiny`` (a minibatch of 7,300 rows,
63 used observation columns, 14 legal actions padded to 16): ``log_softmax`` over 14 and over 16 entries;
``exp`` of log-probabilities whose illegal entries are −1e9 and :func:`~krypenv.training.mmdnet.probabilities`;
a row gather by ``x[idx]`` and by ``index_select``; the used columns by ``ne(0).any(0)`` and by
:func:`~krypenv.training.mmdnet.used_columns`; and the env alone (``tiny``, 2 players, self-play, every seat
playing its first legal action) in decisions per CPU second; and how many observation columns and actions
``tiny`` uses at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from krypenv.threads import set_torch_threads
from krypenv.training.mmdnet import probabilities, used_columns
from krypenv.training.selfplay import Args, make_env


def per_call(fn: Callable[[], object], seconds: float = 0.5) -> float:
    """CPU microseconds of one call of ``fn`` (after two warm-up calls)."""
    fn(), fn()
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        fn()
        n += 1
    return (time.process_time() - start) / n * 1e6


def env_rate(games: int, seconds: float = 2.0) -> float:
    """Decisions per CPU second of the device env alone on the CPU."""
    env = make_env(Args(device="cpu", preset="tiny", num_envs=games))
    _, info = env.reset(seed=1)
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        _, _, _, _, info = env.step(info["action_mask"].to(torch.int8).argmax(1))
        n += 1
    return n * games / (time.process_time() - start)


def used(games: int = 2048, steps: int = 400) -> tuple[int, int, int, int]:
    """(observation columns nonzero in some observation, of all; actions legal somewhere, of all) over ``steps``
    steps of ``games`` games of ``tiny`` played by uniformly random legal actions."""
    env = make_env(Args(device="cpu", preset="tiny", num_envs=games))
    obs, info = env.reset(seed=1)
    cols, acts = (torch.zeros(x.shape[1], dtype=torch.bool) for x in (obs, info["action_mask"]))
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        cols |= used_columns(obs)
        acts |= info["action_mask"].any(0)
        action = torch.multinomial(info["action_mask"].float(), 1, generator=g)[:, 0]
        obs, _, _, _, info = env.step(action)
    return int(cols.sum()), len(cols), int(acts.sum()), len(acts)


def main() -> None:
    """Time each pair and print it (module docstring)."""
    set_torch_threads(1)
    g = torch.Generator().manual_seed(0)
    rows = 7300
    mask = torch.rand(rows, 16, generator=g) < 0.15
    mask[:, 0] = True
    logits = torch.randn(rows, 16, generator=g).masked_fill(~mask, -1e9)
    logp, narrow = torch.log_softmax(logits, -1), logits[:, :14].contiguous()
    obs = torch.randn(28000, 63, generator=g)
    idx = torch.randperm(28000, generator=g)[:rows]
    raw = torch.randint(0, 4, (2048, 344), dtype=torch.int8, generator=g) * (torch.rand(344, generator=g) < 0.2)
    pairs = [
        ("log_softmax, 14 entries", lambda: torch.log_softmax(narrow, -1), "16 entries",
         lambda: torch.log_softmax(logits, -1)),
        ("exp of logp (-1e9 entries)", lambda: logp.exp(), "probabilities(logp, mask)",
         lambda: probabilities(logp, mask)),
        ("obs[idx]", lambda: obs[idx], "obs.index_select(0, idx)", lambda: obs.index_select(0, idx)),
        ("ne(0).any(0), 2,048 x 344 int8", lambda: raw.ne(0).any(0), "used_columns", lambda: used_columns(raw)),
    ]
    print(f"{'slow path':34} {'us':>8}   {'replacement':28} {'us':>8} {'x':>6}")
    for slow_name, slow, fast_name, fast in pairs:
        a, b = per_call(slow), per_call(fast)
        print(f"{slow_name:34} {a:>8.0f}   {fast_name:28} {b:>8.0f} {a / b:>6.1f}")
    c, d, a, n = used()
    print(f"tiny, 400 steps of 2,048 random games: {c} of {d} observation columns nonzero, {a} of {n} actions legal")
    for games in (512, 2048, 4096):
        print(f"env alone, {games:,} games: {env_rate(games):,.0f} decisions per CPU second")


if __name__ == "__main__":
    main()
