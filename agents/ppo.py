"""What every game's ``ppo:PATH`` agent shares: checking a checkpoint's layout, loading its network, acting greedily.

**Trusted files only.**  Loading a checkpoint runs pickle (SB3 unpickles the spaces it stores
in ``data``): load only checkpoints you trust, as you would run their author's script
(``docs/SECURITY.md``).  ``krypenv serve`` never loads a path from a request.

A game's loader (``krypenv.agents.<game>.ppo``) subclasses :class:`PPOAgent` and supplies its
hooks: ``GAME``, :meth:`PPOAgent.read_metadata` (the checked ``krypenv.json``, usually
:func:`check_layout` over the game's observation layout), :meth:`PPOAgent.custom_objects`
(what SB3 gets instead of unpickling: the game's network classes) and, when the network reads
more than the observation, :meth:`PPOAgent.network_input`.  Everything else is written here
once: the zip checks (:mod:`krypenv.agents.checkpoint`), building the policy with one one-line
ValueError naming the file for any problem, the table check and the argmax over the legal
actions (deterministic, the same for a decision alone or in a batch).  torch is imported on
first use only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from krypenv.agents.checkpoint import (
    META_NAME,
    bad,
    check_table,
    game_of,
    krypenv_version,
    layout_digest,
    load_state,
    policy_logits,
    read_checked,
    resolve_checkpoint,
)  # fmt: skip

from krypenv.agent_api import DecisionBatch


def check_layout(path: str | Path, game: str, layout: Callable[[int], tuple[int, dict[str, slice]]]
                 ) -> dict[str, Any]:
    """The ``krypenv.json`` of a checkpoint of ``game`` whose observation layout is ``layout(players)`` (size,
    fields) of this krypenv; ValueError naming the path otherwise."""
    meta = read_checked(path, game)
    players = meta["players"]
    want_dim, fields = layout(players)
    want_layout = layout_digest(want_dim, fields)
    if meta.get("obs_dim") != want_dim or meta.get("layout") != want_layout:
        raise bad(path, f"incompatible observation layout: the checkpoint has {meta.get('layout')!r} "
                        f"({meta.get('obs_dim')} entries) for {players} players, this krypenv "
                        f"{meta.get('krypenv', '?')!r} -> {krypenv_version()!r} uses {want_layout!r} "
                        f"({want_dim} entries)")
    return meta


def mlp_widths(state: dict[str, Any], prefix: str) -> list[int]:
    """The layer widths of an MLP in a policy's state dict, read off its ``<prefix><k>.weight`` tensors."""
    layers = {int(k[len(prefix):].split(".")[0]): v for k, v in state.items()
              if k.startswith(prefix) and k.endswith(".weight")}
    return [int(layers[k].shape[0]) for k in sorted(layers)]


def scaled_input_class(name: str, module: str, doc: str, buffer: str, scale: Callable[[Any], np.ndarray]) -> type:
    """An SB3 features extractor ``module.name`` (the name checkpoints' pickles give it): the flattened observation
    times ``1 / scale(observation_space)`` per entry, the factors held in the buffer ``buffer`` of the state dict."""
    import torch as th
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class ScaledObservation(BaseFeaturesExtractor):
        def __init__(self, observation_space: Any) -> None:
            super().__init__(observation_space, features_dim=int(np.prod(observation_space.shape)))
            self.register_buffer(buffer, th.as_tensor(1.0 / scale(observation_space)))

        def forward(self, observations: th.Tensor) -> th.Tensor:
            return observations.reshape(observations.shape[0], -1).float() * getattr(self, buffer)

    ScaledObservation.__name__ = ScaledObservation.__qualname__ = name
    ScaledObservation.__module__ = module
    ScaledObservation.__doc__ = doc
    return ScaledObservation


class PPOAgent:
    """A MaskablePPO policy acting greedily (argmax over the legal actions) on whole batches; a game subclasses it."""

    name = "ppo"
    GAME: ClassVar[str] = ""  # the game its checkpoints were trained for

    def __init__(self, policy: Any, meta: dict[str, Any], path: str | None = None) -> None:
        self.policy = policy
        self.meta = meta
        self.path = path
        self.players = int(meta["players"])
        self.obs_dim = int(meta["obs_dim"])
        self.features = meta.get("features")

    # ----------------------------------------------------------------------- the game's hooks
    @staticmethod
    def read_metadata(path: str | Path) -> dict[str, Any]:
        """The checked ``krypenv.json`` of a checkpoint of the game; ValueError naming the path and the problem."""
        raise NotImplementedError

    @staticmethod
    def custom_objects(data_json: str, meta: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        """What SB3 must not unpickle from ``data`` and what it gets instead (the game's network classes)."""
        raise NotImplementedError

    @staticmethod
    def input_dim(meta: dict[str, Any]) -> int:
        """Length of the network's input: the observation (a game with action features adds theirs)."""
        return int(meta["obs_dim"])

    def network_input(self, batch: DecisionBatch) -> np.ndarray:
        """(B, input_dim) the network's input for a batch: its observations (a game may append features)."""
        return batch.obs

    # ----------------------------------------------------------------------- shared
    @classmethod
    def load(cls, path: str | Path) -> PPOAgent:
        """The agent of a checkpoint file, or of a shipped checkpoint's name; ValueError naming it on any problem."""
        path = resolve_checkpoint(path)
        meta = cls.read_metadata(path)
        return cls(cls.load_policy(path, meta), meta, str(path))

    @classmethod
    def load_policy(cls, path: Path | str, meta: dict[str, Any]) -> Any:
        """The policy network of a checked checkpoint, in eval mode on the CPU."""
        try:
            state, data = load_state(path, lambda data_json, state: cls.custom_objects(data_json, meta, state))
            space = data["observation_space"]
            want = cls.input_dim(meta)
            if tuple(space.shape) != (want,):
                raise bad(path, f"the network takes inputs of shape {tuple(space.shape)}, but {META_NAME} says "
                                f"{meta['obs_dim']} observation entries with action features {meta.get('features')!r} "
                                f"({want} entries)")
            kwargs = dict(data.get("policy_kwargs") or {})
            policy = data["policy_class"](space, data["action_space"], lambda _: 0.0, **kwargs)
            policy.load_state_dict(state)
        except ValueError:
            raise
        except Exception as exc:  # noqa: BLE001 - unpickling, missing keys, shape mismatches ...: one line naming the file
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise bad(path, f"cannot load the policy: {type(exc).__name__}: {first}") from None
        policy.set_training_mode(False)
        return policy

    def logits(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, A) float32 logits of network inputs with illegal actions at −inf (one forward pass, no gradients)."""
        return policy_logits(self.policy, x, mask)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The most probable legal action of each decision."""
        where = f"ppo checkpoint {self.path}" if self.path else f"agent {self.name!r}"
        check_table(where, self.meta, self.GAME, batch.rules.players, game_of(batch.core))
        if len(batch) == 0:
            return np.zeros(0, np.int64)
        if batch.obs.shape[1] != self.obs_dim:
            raise ValueError(f"{where} takes observations of {self.obs_dim} entries, got {batch.obs.shape[1]}")
        return self.logits(self.network_input(batch), batch.mask).argmax(axis=1).astype(np.int64)
