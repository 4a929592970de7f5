"""The CUDA kernels in numba's CUDA simulator, against the CPU: run as ``NUMBA_ENABLE_CUDASIM=1 python -m
tests.cuda.sim_check [--quick]`` (tests/cuda/test_simulator.py does, in a subprocess, since the simulator is
chosen when numba.cuda is first imported).

Every kernel runs its Python body in simulated CUDA threads and calls the per-env functions compiled for the
CPU with the arrays under the simulator's wrappers; what is checked is everything the GPU path adds: the grid-stride
loop, the threads' local scratch, the mode switch, who acts for the seats (the built-in random policy, compiled
baselines through their device policies, the caller in self-play), the column-major arrays and their tensors, the
statuses and the action check.  Each check is the lockstep oracle of tests/envs/device_helpers.py.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from krypenv import agents, krypkasino_v0, kungsholmskille_v0
from krypenv.envs import cuda as C
from tests.envs.device_helpers import against_device, against_vecenv, same

GAMES = {"krypkasino": krypkasino_v0, "kungsholmskille": kungsholmskille_v0}


def check_every_player_count(quick: bool) -> None:
    """Random opponents, every player count and a variant preset: the CUDA env is the VecEnv."""
    for name, mod in GAMES.items():
        configs = [{"players": p} for p in (2, 3, 4, 5, 6)] + [{"players": 2, "preset": "small", "seat": "random"}]
        for k, config in enumerate(configs[:3] if quick else configs):
            tally = against_vecenv(mod.VecEnv(3, seed=10 + k, **config),
                                   mod.DeviceVecEnv(3, device="cuda", seed=10 + k, **config), steps=50, seed=k)
            print(f"{name} {config}: {tally.steps} steps, {tally.episodes} episodes equal", flush=True)


def check_compiled_opponents() -> None:
    """Compiled baselines for the other seats run in the kernel as the agents run from Python on the CPU."""
    for name, mod in GAMES.items():
        expert = agents.load("expert", game=name)
        tally = against_vecenv(mod.VecEnv(3, players=3, opponents=[expert, "random"], seed=4),
                               mod.DeviceVecEnv(3, device="cuda", players=3, opponents=[expert, "random"], seed=4),
                               steps=40, seed=1)
        print(f"{name} expert opponent: {tally.steps} steps, {tally.episodes} episodes equal", flush=True)


def check_self_play() -> None:
    """Self-play: the CUDA env is the CPU device env (seats, per-seat rewards, final values), across a reset in the
    middle of the episodes."""
    for name, mod in GAMES.items():
        kw = {"players": 2, "opponents": "self", "seed": 8, "preset": "small"}
        tally = against_device(mod.DeviceVecEnv(4, device="cpu", **kw), mod.DeviceVecEnv(4, device="cuda", **kw),
                               steps=60, seed=3, reset_at=25)  # a reset in mid-episode: the rewards' base restarts
        assert tally.episodes > 0
        print(f"{name} self-play: {tally.steps} steps, {tally.episodes} episodes equal", flush=True)


def check_illegal_action_check() -> None:
    """illegal="raise" on the device: the check kernel finds an illegal action and nothing moves."""
    env = krypkasino_v0.DeviceVecEnv(4, device="cuda", seed=1)
    obs, info = env.reset()
    before = obs.numpy().copy()
    actions = info["action_mask"].numpy().argmax(axis=1)
    actions[3] = int(np.flatnonzero(~info["action_mask"].numpy()[3])[0])
    try:
        env.step(actions)
    except ValueError as e:
        assert str(e).startswith("game 3: illegal action"), e
    else:
        raise AssertionError("the illegal action was taken")
    same("observation", 0, before, obs)
    print("illegal action refused before any game moved", flush=True)


def check_engine_kernels() -> None:
    """The engine benchmark's kernels deal and play the same deals as their CPU twins, from the same streams."""
    from krypenv.krypkasino import cuda_kernels as KC
    from krypenv.krypkasino.engine import DealBatch
    from krypenv.krypkasino.engine import kernels as KK
    from krypenv.krypkasino.engine.captures import new_scratch
    from krypenv.krypkasino.rules import Rules
    from krypenv.kungsholmskille import cuda_kernels as LC
    from krypenv.kungsholmskille.engine import DealBatch as KilleDeals
    from krypenv.kungsholmskille.engine import drivers as LD
    from krypenv.kungsholmskille.rules import Rules as KilleRules
    from krypenv.rng import seed_range

    n, arrays = 5, C.Arrays()
    d = DealBatch(Rules(players=3), n)
    (ik, isz), (lk, lsz) = d._initial, d._later
    rng = seed_range(3, n)
    cpu_st, cpu_rng, cpu_dec = d.state.copy(), rng.copy(), np.zeros(n, np.int64)
    scr = np.stack([new_scratch() for _ in range(2)])
    KK.play_deals_par(cpu_st, cpu_rng, 3, 104, ik, isz, lk, lsz, False, 2, cpu_dec, scr)
    st, r, dec = arrays.to_device(d.state), arrays.to_device(rng), arrays.to_device(np.zeros(n, np.int64))
    C.launch(KC.engine_play(), 2, st, r, 3, 104, ik, isz, lk, lsz, False, 2, 2, dec)  # 2 threads, 5 envs
    same("krypkasino engine deals", 0, cpu_st, arrays.to_host(st))
    same("krypkasino engine decisions", 0, cpu_dec, arrays.to_host(dec))
    k = KilleDeals(KilleRules(4), n)
    cpu_st, cpu_cash, cpu_rng = k.state.copy(), k.cash.copy(), rng.copy()
    LD.play_deals_par(cpu_st, cpu_cash, cpu_rng, 4, 3, cpu_dec, 2)
    st, cash, r = arrays.to_device(k.state), arrays.to_device(k.cash), arrays.to_device(rng)
    C.launch(LC.engine_play(), n, st, cash, r, 4, 3, n, dec)
    same("kungsholmskille engine deals", 0, cpu_st, arrays.to_host(st))
    same("kungsholmskille engine decisions", 0, cpu_dec, arrays.to_host(dec))
    print("engine kernels equal their CPU twins", flush=True)


def _nan_as_inf(a: np.ndarray) -> np.ndarray:
    """Values with NaN (an action with no value) as +inf, so that equality counts a NaN equal to a NaN."""
    return np.where(np.isnan(a), np.inf, a)


def check_pimc_search() -> None:
    """pimc with ``device=cuda`` (agents/krypkasino/pimc_cuda.py) gives the CPU's values and actions, bit for bit, at
    every decision of random games: capture choices, 2 to 6 seats, both set-aside variants, every option that changes
    the search (its kernel's threads each take several decisions: 6 games' decisions on up to 64 threads, and a batch
    of 70 on 64)."""
    from tests.agents.krypkasino.test_heuristics import decisions_of

    configs = [(2, "court", "pimc:samples=3", 40), (3, "spades", "pimc:samples=2,rollouts=2,voids=false", 25),
               (4, "court", "pimc:samples=2,rounds=0,policy=greedy,z=0", 10),
               (6, "spades", "pimc:samples=2,horizon=3", 6)]
    for players, set_aside, spec, steps in configs:
        cpu, dev = agents.load(spec), agents.load(spec + ",device=cuda")
        searched = choices = 0
        for step, (core, batch) in enumerate(decisions_of(players, 7 * players, n=6, set_aside=set_aside)):
            if step >= steps:
                break
            saved = core.rng.copy()
            want, acts = cpu.values(batch)
            core.rng[:] = saved
            got, dev_acts = dev.values(batch)
            core.rng[:] = saved
            played = dev.act(batch)
            core.rng[:] = saved  # the walk's random actions draw from the same stream as before
            same(f"pimc values {spec}", step, _nan_as_inf(want), _nan_as_inf(got))  # NaN: not a legal action
            same(f"pimc actions {spec}", step, acts, dev_acts)
            same(f"pimc act {spec}", step, acts, played)
            searched += int((~np.isnan(want)).any(axis=1).sum())
            choices += int((core.choice[batch.envs, 0] >= 0).sum())
        assert searched > 0
        print(f"pimc {players} players {set_aside} {spec}: {searched} searched decisions ({choices} capture choices) "
              "equal", flush=True)
    # a batch larger than the simulator's 64 threads, with capture choices among the decisions past the 64th
    core, many = next((c, b) for c, b in decisions_of(3, 3, n=100)
                      if len(b) > 64 and (c.choice[b.envs[64:], 0] >= 0).any())
    cpu, dev = agents.load("pimc:samples=2"), agents.load("pimc:samples=2,device=cuda")
    saved = core.rng.copy()
    want = cpu.values(many)
    core.rng[:] = saved
    got = dev.values(many)
    same(f"pimc values, {len(many)} decisions on 64 threads", 0, _nan_as_inf(want[0]), _nan_as_inf(got[0]))
    same(f"pimc actions, {len(many)} decisions on 64 threads", 0, want[1], got[1])
    print(f"pimc {len(many)} decisions on 64 threads equal", flush=True)


def main() -> int:
    """Run every check; the exit status says whether all passed."""
    assert C.SIMULATOR and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run me with NUMBA_ENABLE_CUDASIM=1"
    quick = "--quick" in sys.argv
    check_every_player_count(quick)
    check_compiled_opponents()
    check_self_play()
    check_illegal_action_check()
    check_engine_kernels()
    check_pimc_search()
    print("all simulator checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
