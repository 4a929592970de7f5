"""krypenv.training.selfplay: per-seat credit against a brute-force oracle; a tiny run writes checkpoints that play.

The oracle of :func:`seat_advantages` walks each env's steps seat by seat with plain loops: a decision's
reward is everything its seat is paid until its next decision in the episode (or the episode's end), the
GAE recursion runs along that seat's own decisions, and a decision whose seat has not acted again when the
rollout stops is unknown.  Hypothesis draws the rollouts (seats, rewards, episode ends, values).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from krypenv import agents, krypkasino_v0
from krypenv.training.selfplay import Args, main, seat_advantages


def oracle(rew: np.ndarray, done: np.ndarray, seat: np.ndarray, value: np.ndarray,
           lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(advantages, known) by the definition, env by env, seat by seat."""
    T, N, P = rew.shape
    adv, known = np.zeros((T, N)), np.zeros((T, N), bool)
    for i in range(N):
        for s in range(P):
            steps = [t for t in range(T) if seat[t, i] == s]
            deltas: dict[int, float] = {}
            nexts: dict[int, int | None] = {}
            for k, t in enumerate(steps):
                later = steps[k + 1] if k + 1 < len(steps) else None
                end = next((u for u in range(t, T) if done[u, i]), None)  # this decision's episode ends at step end
                if end is not None and (later is None or later > end):
                    paid = rew[t:end + 1, i, s].sum()  # to the episode's end
                    deltas[t], nexts[t] = paid - value[t, i], None
                elif later is not None:
                    paid = rew[t:later, i, s].sum()
                    deltas[t], nexts[t] = paid + value[later, i] - value[t, i], later
                else:
                    continue  # the rollout stopped first: unknown
                known[t, i] = True
            for t in reversed(steps):
                if known[t, i]:
                    n = nexts[t]
                    adv[t, i] = deltas[t] + (lam * adv[n, i] if n is not None and known[n, i] else 0.0)
    return adv, known


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 3), st.integers(2, 4), st.integers(0, 2**31 - 1),
       st.sampled_from([0.0, 0.5, 0.95, 1.0]))
def test_seat_advantages_are_the_oracle_s(T: int, N: int, P: int, seed: int, lam: float) -> None:
    """Advantages, returns and the known mask over random rollouts of every shape."""
    rng = np.random.default_rng(seed)
    rew = rng.integers(-3, 4, (T, N, P)).astype(np.float32)
    done = rng.random((T, N)) < 0.25
    seat = rng.integers(0, P, (T, N))
    value = rng.normal(size=(T, N)).astype(np.float32)
    adv, ret, ok = seat_advantages(torch.tensor(rew), torch.tensor(done), torch.tensor(seat), torch.tensor(value), lam)
    want, known = oracle(rew.astype(np.float64), done, seat, value.astype(np.float64), lam)
    assert np.array_equal(ok.numpy(), known)
    assert np.allclose(adv.numpy()[known], want[known], atol=1e-4)
    assert np.allclose(ret.numpy()[known], (want + value)[known], atol=1e-4)
    assert (adv.numpy()[~known] == 0).all()


def test_a_tiny_run_writes_checkpoints_that_play(tmp_path: Path) -> None:
    """Two iterations on the CPU: the log, a checkpoint per iteration and the final one, which plays as mlp:PATH."""
    out = tmp_path / "run"
    args = Args(device="cpu", preset="tiny", num_envs=32, num_steps=8, total_timesteps=2 * 32 * 8, hidden=16,
                checkpoint_every=1, out=str(out), magnet_every=1)
    row = main(args)
    assert row["iteration"] == 2 and row["decisions"] == 512
    with (out / "log.csv").open() as f:
        assert [r["iteration"] for r in csv.DictReader(f)] == ["1", "2"]
    assert (out / "ckpt-000001.npz").is_file() and (out / "final.npz").is_file()
    agent = agents.load(f"mlp:{out / 'final.npz'}")
    assert agent.card["trained"]["decisions"] == 512 and agent.card["preset"] == "tiny"
    env = krypkasino_v0.VecEnv(4, players=2, preset="tiny", opponents=agent, seed=1)
    env.reset()
    for _ in range(10):
        env.step(env.action_masks().argmax(1).astype(np.int64))


def test_runs_reproduce_with_a_seed(tmp_path: Path) -> None:
    """Same args, same seed: the same final network (the env's streams and torch's generator are both seeded)."""
    finals = []
    for k in range(2):
        out = tmp_path / f"r{k}"
        main(Args(device="cpu", preset="tiny", num_envs=16, num_steps=8, total_timesteps=2 * 16 * 8, hidden=8,
                  out=str(out), seed=3))
        with np.load(out / "final.npz") as z:
            finals.append({name: z[name].copy() for name in z.files if name != "card"})
    assert all(np.array_equal(finals[0][k], finals[1][k]) for k in finals[0])


@pytest.mark.parametrize("game", ["kungsholmskille"])
def test_the_other_game_trains_too(game: str, tmp_path: Path) -> None:
    """Kungsholmskille with 3 players: per-seat money rewards, one iteration, a checkpoint of its game."""
    main(Args(game=game, players=3, device="cpu", num_envs=16, num_steps=8, total_timesteps=16 * 8, hidden=8,
              out=str(tmp_path)))
    assert agents.load(f"mlp:{tmp_path / 'final.npz'}", game=game).card["game"] == game
