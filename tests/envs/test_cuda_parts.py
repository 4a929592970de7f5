"""The device env's four kernels per game (krypenv.envs.cuda): which part gets the built-in policy, the launches of
each operation, and each game's kernels built that way."""

from __future__ import annotations

from typing import Any

import pytest

from krypenv.envs import cuda as C


def fake_kernel(part: int, key: Any) -> tuple[int, Any]:
    """A stand-in for a game's ``_kernel``: what it was asked for."""
    return part, key


def test_only_seats_gets_the_policy_and_every_part_its_own_number() -> None:
    """``seats`` is built with the policy's key, act, finish and observe with the no-policy key (shared by every
    policy); each part's kernel is asked for with its own number (ACT, SEATS, FINISH, OBS); the order is ORDER."""
    k = C.env_kernels(fake_kernel, "expert-key", "none-key")
    assert k.parts == {"act": (C.ACT, "none-key"), "seats": (C.SEATS, "expert-key"),
                       "finish": (C.FINISH, "none-key"), "observe": (C.OBS, "none-key")}
    assert k.order is C.ORDER
    none = C.env_kernels(fake_kernel, None, "none-key")
    assert {key for _, key in none.parts.values()} == {"none-key"}


def test_the_operations_launch_the_one_kernels_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """RESET: act, seats, observe; STEP: act, seats, finish, seats again where an episode ended, observe; OBSERVE:
    observe; each launch with its mode first, then the same arguments."""
    launched: list[tuple[Any, ...]] = []
    monkeypatch.setattr(C, "launch", lambda kernel, threads, *args: launched.append((kernel[0], threads, *args)))
    k = C.env_kernels(fake_kernel, None, "none")
    k.launch(C.STEP, 7, "a", "b")
    assert launched == [(C.ACT, 7, C.STEP, "a", "b"), (C.SEATS, 7, C.STEP, "a", "b"),
                        (C.FINISH, 7, C.STEP, "a", "b"), (C.SEATS, 7, C.AGAIN, "a", "b"),
                        (C.OBS, 7, C.STEP, "a", "b")]
    launched.clear()
    k.launch(C.RESET, 3)
    assert launched == [(C.ACT, 3, C.RESET), (C.SEATS, 3, C.RESET), (C.OBS, 3, C.RESET)]
    launched.clear()
    k.launch(C.OBSERVE, 1)
    assert launched == [(C.OBS, 1, C.OBSERVE)]
    assert len({C.RESET, C.STEP, C.OBSERVE, C.AGAIN}) == 4 and len({C.ACT, C.SEATS, C.FINISH, C.OBS}) == 4


@pytest.mark.parametrize("game", ["krypkasino", "kungsholmskille"])
def test_each_game_builds_its_kernels_by_the_shared_parts(game: str) -> None:
    """Every game's ``build`` gives the four parts in the shared order, ``seats`` per policy and the others shared
    between policies (one compile each); built again, the same kernels (a per-process cache)."""
    pytest.importorskip("numba_cuda")
    from krypenv import agents
    from krypenv.games import GAMES

    module = GAMES[game].part("cuda_kernels")
    plain = module.build(None)
    key = agents.load("expert", game=game).device_policy(
        GAMES[game].part("device").DeviceVecEnv(1, device="cpu").core.rules).build_key
    expert = module.build(key)
    assert list(plain.parts) == list(C.PARTS) and plain.order is C.ORDER
    assert [plain.parts[p] is expert.parts[p] for p in C.PARTS] == [True, False, True, True]
    assert module.build(None) is plain


@pytest.mark.parametrize("over", [(False, True), (0, 1), (0, 2), (0, 3)])  # Krypkasino's bool, Kungsholmskille's codes
def test_an_env_sits_out_reset_unless_active_and_again_unless_its_episode_ended(over: tuple[Any, Any]) -> None:
    """RESET launches skip the envs not being reset; AGAIN launches skip the envs still running (``over`` 0, which is
    Kungsholmskille's RUNNING); STEP and OBSERVE launches run every env."""
    import numpy as np

    from krypenv.kungsholmskille.config import RUNNING

    assert RUNNING == 0
    running, ended = over
    for active in (False, True):
        for o in (running, ended):
            a, v = np.array([not active, active]), np.array([ended if o == running else running, o])
            assert C.sits_out(C.RESET, a, v, 1) == (not active)
            assert C.sits_out(C.AGAIN, a, v, 1) == (o == running)
            assert not C.sits_out(C.STEP, a, v, 1) and not C.sits_out(C.OBSERVE, a, v, 1)


def test_the_first_launch_of_an_operation_writes_the_status_and_the_later_ones_add_to_it() -> None:
    """ACT (RESET's and STEP's first launch) and OBSERVE alone overwrite an env's status bits; every later launch of
    the operation ORs its bits in, so a bit of an earlier launch is never lost; other envs are untouched."""
    import numpy as np

    for part, mode in [launch for op in (C.RESET, C.STEP, C.OBSERVE) for launch in
                       ((C.PARTS.index(name), m) for name, m in C.ORDER[op])]:
        status = np.array([5, 1, 5], np.int64)
        C.set_status(status, 1, part, mode, 4)
        first = part == C.ACT or mode == C.OBSERVE
        assert status.tolist() == [5, 4 if first else 5, 5], (part, mode)


def test_the_simulators_wait_changes_nothing_off_the_simulator() -> None:
    """Off the simulator (this process: a GPU or none), ``waiting_simulator`` leaves numba-cuda's threads alone."""
    from numba.cuda.simulator.kernel import BlockThread

    assert not C.SIMULATOR
    original = BlockThread.is_alive
    with C.waiting_simulator():
        assert BlockThread.is_alive is original
    assert BlockThread.is_alive is original
