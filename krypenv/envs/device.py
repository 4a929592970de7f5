"""Device envs: N games whose arrays live on one device, exchanged with PyTorch as tensors (written once).

``krypkasino_v0.DeviceVecEnv(num_envs, device="cuda", seat=0, opponents="random", seed=None, **config)``
(and ``kungsholmskille_v0.DeviceVecEnv``, the same with the game's keywords) steps ``num_envs`` games
in one call per step, on the GPU (``device="cuda"``: every game's state, observations, masks,
rewards and terminal observations stay in GPU memory, one CUDA thread per game running the very
per-env functions of the CPU drivers, :mod:`krypenv.envs.cuda`) or on the CPU (``device="cpu"``: the
game's compiled CPU drivers, NumPy arrays shared with torch CPU tensors).  The same training
script runs on both, and the same seed gives the same trajectories on both, bit for bit, as it
gives the game's SB3 VecEnv.

| call                          | returns                                                                            |
|-------------------------------|------------------------------------------------------------------------------------|
| ``reset(seed=None)``          | ``(obs, info)``                                                                    |
| ``step(actions)``             | ``(obs, rewards, terminated, truncated, info)``                                    |
| ``action_masks()``            | ``(N, A)`` bool: the legal actions of the seat to act in each game                 |

* ``obs`` ``(N, D)`` (the game's observation dtype): the observation of the seat to act in each
  game; ``info["action_mask"]`` ``(N, A)`` bool its legal actions; ``info["seat"]`` ``(N,)`` int64
  that seat (absolute).
* ``actions``: one integer action per game, a tensor (or array) of shape ``(N,)``, on the env's
  device or not (it is moved).  With ``illegal="raise"`` (default) an illegal action raises a
  ValueError naming the game, the action and the legal ones before any game moves; with
  ``"lose"`` that game's episode ends as in the other interfaces.
* **Who acts.**  ``opponents`` is one spec for every other seat or a list of P − 1 (by seat
  after ``seat``): ``"random"`` (the built-in uniform policy), ``"self"`` (the caller plays that
  seat too: self-play) or an agent.  On the GPU an agent must offer a
  :class:`~krypenv.agent_api.DevicePolicy` (``krypenv.agents``' compiled baselines do: Krypkasino's
  ``greedy``, ``creeper``, ``expert``; Kungsholmskille's ``timid``, ``expert``), which the kernels
  run for its seats with the uniforms its ``act`` would draw; on the CPU any agent plays, asked in
  batches from Python.  The games advance until a caller's seat must act.
* ``rewards``: with one caller seat, ``(N,)`` float32, the reward of that seat since its previous
  decision (exactly the SB3 VecEnv's); in self-play (some opponent is ``"self"``) ``(N, P)``
  float32, every seat's reward during this step (sum a seat's rewards between its decisions).
  Krypkasino pays minus the change of a side's score (lower scores win), Kungsholmskille the
  change of a seat's money.
* ``terminated``/``truncated`` ``(N,)`` bool.  A finished game restarts at once (same-step
  autoreset): ``obs`` is then the new episode's first, ``info["_final_obs"]`` ``(N,)`` bool marks
  the finished games, ``info["final_obs"]``/``info["final_action_mask"]`` hold the terminal
  observation of the seat that acted last and ``info["final_values"]`` ``(N, P)`` every seat's final
  score (Krypkasino, per side) or money (Kungsholmskille).
* **Buffers.**  Every tensor returned is the env's own buffer, overwritten by the next step:
  copy what you keep (``obs.clone()``).  On the GPU the tensors are column-major, strides
  ``(1, N)`` (:mod:`krypenv.envs.cuda`).
* **Seeds.**  Game ``i`` is seeded with ``seed + i`` (the VecEnv's rule); ``reset()`` without a
  seed continues the games' streams (fresh entropy on the first reset).  The CUDA backend
  checks each step's statuses (a capture search that outgrew its scratch, a built-in policy's
  illegal move: never seen in play) and raises rather than return a wrong result.

Asking for ``device="cuda"`` without a GPU, without ``numba-cuda`` or with a CPU-only PyTorch is one
:class:`~krypenv.envs.cuda.CudaUnavailableError` naming what is missing.
"""

from __future__ import annotations

from abc import abstractmethod
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from krypenv.envs.batch import LEARNER, EnvBatch
from krypenv.envs.cuda import RESET, STEP  # the operations of every game's CUDA kernels (krypenv.envs.cuda.ORDER)
from krypenv.envs.gym import SELF, opponent_kinds
from krypenv.envs.spaces import first_illegal
from krypenv.rng import check_seed, seed_range

__all__ = ["SELF", "DeviceVecEnv", "device_kinds"]


def device_kinds(opponents: Any, players: int, game: str, on_gpu: bool) -> tuple[list[int], dict[int, Any]]:
    """:func:`~krypenv.envs.gym.opponent_kinds` with ``"self"`` (LEARNER), and on the GPU only agents that
    play inside the kernels (a ``device_policy``).  ValueError naming a bad opponent."""
    kinds, agents = opponent_kinds(opponents, players, game, self_play=True)
    for opp in agents.values():
        if on_gpu and not callable(getattr(opp, "device_policy", None)):
            raise ValueError(f"opponents: agent {getattr(opp, 'name', opp)!r} cannot play inside the CUDA kernels "
                             "(it has no device_policy); on device='cuda' use 'random', 'self' or a compiled baseline "
                             "(greedy, creeper, expert; timid), or play it on device='cpu'")
    return kinds, agents


def _torch() -> Any:
    """PyTorch, or ImportError naming the extra that brings it."""
    try:
        import torch
    except ImportError as e:
        raise ImportError("the device envs exchange tensors with PyTorch: pip install 'krypenv[rl]' (CPU) or a CUDA "
                          "build of torch") from e
    return torch


class DeviceVecEnv(VectorEnv):
    """N games of one configuration on one device, tensors in and out (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}
    batch_class: ClassVar[type[EnvBatch]]  # the game's batch (configuration, host state, CPU drivers)
    drivers: ClassVar[ModuleType]  # the game's device-env CPU drivers (k_seats_step_par, ...: the state's arrays first)
    game: ClassVar[str]  # the game's registry name

    def __init__(self, num_envs: int, config: Any, device: Any, seat: int | str, opponents: Any,
                 seed: int | None) -> None:
        """``num_envs`` games of ``config`` on ``device``, the caller at ``seat`` (and the ``"self"`` seats)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if config.render_mode is not None:
            raise ValueError("render_mode: the device env does not render; use the Gymnasium or AEC env to watch")
        torch = _torch()
        self.device = torch.device(device)
        if self.device.type not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
        self.on_gpu = self.device.type == "cuda"
        if self.on_gpu:
            from krypenv.envs.cuda import require_cuda

            require_cuda()
        self.config = config
        P = config.players
        kinds, self._agents = device_kinds(opponents, P, self.game, self.on_gpu)
        self.self_play = kinds.count(LEARNER) > 1
        self.core = core = self.batch_class(config, int(num_envs), seat=seat, kinds=kinds)
        self.num_envs, self.players, self._lose = core.n, P, config.illegal == "lose"
        self.single_observation_space = spaces.Box(core.low, core.high, dtype=core.obs_dtype)
        self.single_action_space = spaces.Discrete(core.n_actions)
        self._seeded = False
        self._seed = check_seed(seed)
        n, dim, A = core.n, core.dim, core.n_actions
        host = {  # the outputs (and the per-seat values behind the rewards), host copies of their shapes
            "base": np.zeros((n, P), core.value_dtype), "status": np.zeros(n, np.int64),
            "act_status": np.zeros(n, np.int64), "rew": np.zeros((n, P), np.float32),
            "over": np.zeros(n, core.over_dtype), "final": np.zeros((n, P), core.value_dtype),
            "obs": np.zeros((n, dim), core.obs_dtype), "masks": np.zeros((n, A), np.int8),
            "seats": np.zeros(n, np.int64), "term_obs": np.zeros((n, dim), core.obs_dtype),
            "term_masks": np.zeros((n, A), np.int8), "active": np.ones(n, np.bool_), "actions": np.zeros(n, np.int64),
        }
        self._policies = {r: a.device_policy(core.rules) for r, a in self._agents.items()} if self.on_gpu else {}
        if self.on_gpu:
            self._setup_gpu(host)
        else:
            self._buf = host
            self._t = {k: torch.from_numpy(v) for k, v in host.items()}
        self._masks_bool = self._t["masks"].view(torch.bool)
        self._term_masks_bool = self._t["term_masks"].view(torch.bool)

    @property
    def observation_space(self) -> spaces.Box:
        """The batched observation space, (N, D) (built when asked: large for millions of games)."""
        core = self.core
        return spaces.Box(np.tile(core.low, (core.n, 1)), np.tile(core.high, (core.n, 1)), dtype=core.obs_dtype)

    @property
    def action_space(self) -> spaces.MultiDiscrete:
        """The batched action space, one Discrete(A) per game."""
        return spaces.MultiDiscrete(np.full(self.core.n, self.core.n_actions))

    # ------------------------------------------------------------------ hooks: the game's arrays
    @classmethod
    def cuda_kernels(cls) -> Any:
        """The game's module of CUDA kernels (its registry part ``cuda_kernels``), imported on first use."""
        from krypenv.games import GAMES

        return GAMES[cls.game].part("cuda_kernels")

    @abstractmethod
    def _gx(self) -> np.ndarray:
        """The game's extra int64 kernel arguments (Krypkasino: hand size and spades)."""

    @abstractmethod
    def _split_over(self, over: Any) -> tuple[Any, Any]:
        """(terminated, truncated) bool tensors from the tensor of end codes."""

    def _tail(self) -> Any:
        """The CPU drivers' last argument (the scratch rows, or the chunk count)."""
        return self.core._driver_tail()

    # ------------------------------------------------------------------ the GPU backend
    def _setup_gpu(self, host: dict[str, np.ndarray]) -> None:
        """Device copies of the state and outputs, the thread count, the kernels and their policy arguments."""
        from krypenv.envs import cuda_util
        from krypenv.envs.cuda import Arrays, grid_threads

        self._arrays = arrays = Arrays()
        self._lead = [arrays.to_device(a) for a in self.core._arrays()]
        self._dev = {k: arrays.to_device(v) for k, v in host.items()}
        self._t = {k: arrays.tensor(v) for k, v in self._dev.items()}
        self._threads = grid_threads(self.num_envs)  # the kernels' scratch is each thread's local array
        keys = {p.build_key for p in self._policies.values()}
        if len(keys) > 1:
            raise ValueError("opponents: the agents in the kernels must share one compiled policy function (e.g. "
                             "greedy, creeper and expert do); got several")
        key = keys.pop() if keys else None
        self._kernels = self.cuda_kernels().build(key)  # EnvKernels: the kernels of RESET, STEP and OBSERVE
        self._check = cuda_util.check
        P = self.players
        ki = max([len(p.iparams) for p in self._policies.values()] + [1])
        kf = max([len(p.fparams) for p in self._policies.values()] + [1])
        pk, pi, pf = np.zeros(P, np.int64), np.zeros((P, ki), np.int64), np.zeros((P, kf), np.float64)
        for r, p in self._policies.items():
            pk[r] = 1
            pi[r, :len(p.iparams)] = p.iparams
            pf[r, :len(p.fparams)] = p.fparams
        self._pol = [arrays.to_device(pk), arrays.to_device(pi), arrays.to_device(pf), arrays.to_device(self._gx())]
        self._bad = arrays.to_device(np.zeros(1, np.int64))

    def _run(self, mode: int) -> None:
        """Launch the game's kernels for operation ``mode`` over every env and check the statuses they report."""
        d = self._dev
        self._kernels.launch(mode, self._threads, *self._lead, d["base"], d["active"], d["actions"], self._lose,
               self._threads, d["status"], d["act_status"], d["rew"], d["over"], d["final"], d["obs"], d["masks"],
               d["seats"], d["term_obs"], d["term_masks"], *self._pol)
        status = self._t["status"]
        if bool(status.any()):
            i = int(status.nonzero()[0, 0])
            raise RuntimeError(f"game {i}: the CUDA kernel reported status {int(status[i])} (1: a capture search "
                               "outgrew its scratch; 2: a built-in policy chose an illegal action); this step's "
                               "results are void")

    def _host_state(self) -> None:
        """Copy the device state back into the host batch (for error messages)."""
        for host, dev in zip(self.core._arrays(), self._lead):
            host[...] = self._arrays.to_host(dev)

    # ------------------------------------------------------------------ the CPU backend
    def _cpu(self, name: str, *args: Any) -> None:
        """Call the game's device-env CPU driver ``k_<name>`` (parallel twin for large batches) on the state."""
        driver = getattr(self.drivers, f"k_{name}_{'par' if self.core.parallel else 'ser'}")
        driver(*self.core._arrays(), *args, self._tail())

    def _play_agents(self) -> None:
        """Let the Python agents (CPU backend) act until a caller's seat is to act in every game."""
        self.core.play_external(self._agents)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start every game afresh (game ``i`` seeded ``seed + i`` if a seed is given) and observe."""
        seed = check_seed(seed)
        if seed is not None or not self._seeded:
            self._reseed(seed if seed is not None else self._seed)
        self._seeded = True
        self.core.episodes += 1
        if self.on_gpu:
            self._run(RESET)
        else:
            b = self._buf
            self._cpu("seats_reset", b["active"], b["base"])
            self._play_agents()
            self._cpu("observe_actor", b["obs"], b["masks"], b["seats"])
        return self._t["obs"], {"action_mask": self._masks_bool, "seat": self._t["seats"]}

    def _reseed(self, seed: int | None) -> None:
        """Seed every game's stream (game ``i``: ``seed + i``; None: fresh entropy)."""
        states = seed_range(seed, self.num_envs)
        if self.on_gpu:
            self._lead[self._rng_index()].copy_to_device(states)
        else:
            self.core.rng[:] = states

    def _rng_index(self) -> int:
        """Where the streams are among the state arrays."""
        return next(k for k, a in enumerate(self.core._arrays()) if a is self.core.rng)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Apply one action per game, play the built-in seats, reward, auto-reset and observe (module docstring)."""
        if not self._seeded:
            raise ValueError("call reset() before step()")
        torch = _torch()
        acts = torch.as_tensor(actions)
        n = self.num_envs
        if acts.dtype.is_floating_point or acts.dtype == torch.bool or acts.dtype.is_complex or \
                tuple(acts.shape) not in ((n,), (n, 1)):
            raise ValueError(f"actions must be {n} integers (shape ({n},)), one per game, got shape "
                             f"{tuple(acts.shape)} and dtype {acts.dtype}")
        actors = self._t["seats"].clone() if not self.self_play else None
        if self.on_gpu:
            self._t["actions"].copy_(acts.reshape(n))
            if not self._lose:
                self._check_gpu()
            self._run(STEP)
        else:
            b = self._buf
            b["actions"][:] = acts.reshape(n).cpu().numpy()
            if not self._lose:
                self._check_cpu(b["actions"])
            if not self._agents:
                self._cpu("seats_step", b["actions"], self._lose, b["act_status"], b["base"], b["rew"], b["over"],
                          b["final"], b["obs"], b["masks"], b["seats"], b["term_obs"], b["term_masks"])
            else:
                acting = b["seats"].copy()
                self.core._driver("step")(*self.core._arrays(), b["actions"], self._lose, b["act_status"],
                                          self._tail())
                self._play_agents()
                self._cpu("seats_finish", acting, b["base"], b["rew"], b["over"], b["final"], b["term_obs"],
                          b["term_masks"])
                self._play_agents()
                self._cpu("observe_actor", b["obs"], b["masks"], b["seats"])
        t = self._t
        terminated, truncated = self._split_over(t["over"])
        done = terminated | truncated
        self.core.episodes[done.cpu().numpy()] += 1
        rewards = t["rew"] if self.self_play else t["rew"].gather(1, actors[:, None])[:, 0]
        info = {"action_mask": self._masks_bool, "seat": t["seats"], "_final_obs": done, "final_obs": t["term_obs"],
                "final_action_mask": self._term_masks_bool, "final_values": t["final"]}
        return t["obs"], rewards, terminated, truncated, info

    def action_masks(self) -> Any:
        """(N, A) bool: every game's legal actions for the seat to act now."""
        return self._masks_bool

    def _check_cpu(self, actions: np.ndarray) -> None:
        """ValueError naming the first game whose action is illegal (nothing moves)."""
        i = first_illegal(self._buf["masks"], actions)
        if i >= 0:
            self._illegal(i, actions)

    def _check_gpu(self) -> None:
        """The same check on the device: one small kernel, one flag read back."""
        from krypenv.envs.cuda import launch

        self._t_bad().zero_()
        launch(self._check, self._threads, self._dev["masks"], self._dev["actions"], self._bad)
        bad = int(self._t_bad()[0])
        if bad:
            self._host_state()
            actions = self._t["actions"].cpu().numpy()
            self._illegal(first_illegal(self._t["masks"].cpu().numpy(), actions), actions)

    def _t_bad(self) -> Any:
        """The flag of the action check, as a tensor."""
        return self._arrays.tensor(self._bad)

    def _illegal(self, i: int, actions: np.ndarray) -> None:
        """Raise the ValueError of game ``i``'s illegal action."""
        seat = int(self._t["seats"][i])
        raise ValueError(f"game {i}: {self.core.illegal_message(i, int(actions[i]), f'player_{seat}')}")

    def close(self, **kwargs: Any) -> None:
        """Nothing to release (the arrays go with the object)."""
