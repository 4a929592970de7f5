"""``ppo:PATH``: a policy learned by ``train.py`` (sb3-contrib MaskablePPO), loaded from its checkpoint.

**Trusted files only.**  Loading a checkpoint runs pickle (SB3 unpickles the spaces it stores
in ``data``): load only checkpoints you trust, as you would run their author's script
(``docs/SECURITY.md``).  ``krypenv serve`` never loads a path from a request.

**Checkpoint format.**  ``PATH`` is the zip file that ``MaskablePPO.save`` writes (``data``,
``policy.pth``, ``policy.optimizer.pth``, ...; ``MaskablePPO.load`` resumes training from it)
with one more member, ``krypenv.json``, written by :func:`add_metadata`.  A play-only copy
(:func:`play_only_copy`, what ``train.py --save-to`` writes) leaves out the optimizer state::

    {"format": "krypenv-ppo/1", "krypenv": "0.1.0", "players": 2, "teams": null,
     "two_player_deal": "6+4", "set_aside": "court", "last_capture_point": false,
     "obs_dim": 344, "layout": "<id of the observation layout>", "features": "moves/1",
     "env_steps": ..., "args": {...}}

``features`` names the action features appended to the observation
(:mod:`krypenv.agents.krypkasino.move_features`, network :mod:`krypenv.agents.krypkasino.move_policy`), or is
null for a plain MLP policy on the observation alone.

The loader checks, with a ValueError naming the path and the problem (never a bare
traceback): the file exists and is a complete zip (a truncated download is not), it holds
``krypenv.json`` of a known format and the SB3 members, the observation layout id and length
match this version of :mod:`krypenv.krypkasino.observation` for the checkpoint's player count, the
action features are a known version, and the network's input matches their length.  The player count
of the game is only known when the agent is asked to act: :meth:`PPOAgent.act` raises a ValueError
if it differs from the checkpoint's.  Rule variants and teams other than the training ones are
allowed (the observation has the same layout); they are recorded in ``agent.meta``.

**Acting.**  ``act(batch)`` computes the batch's action features if the policy uses them, then
one forward pass of the policy network over the whole batch (torch, no gradients, CPU) and the
argmax of the logits over the legal actions: deterministic, and the same for a decision whether it
is acted on alone or in a batch.

The observation is scaled to [0, 1] inside the network (:class:`ScaledInput`, or
:class:`krypenv.agents.krypkasino.move_policy.MoveInput` for a move-scoring policy: each entry divided by its
upper bound in the observation space), so the checkpoint needs no separate normalisation
statistics.  torch is imported on first use only: ``import agents`` stays light.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.checkpoint import (
    FORMAT,
    META_NAME,
    NEEDED_DATA,
    add_metadata,
    check_table,
    game_of,
    krypenv_version,
    play_only_copy,
    read_checked,
)  # fmt: skip  (add_metadata, play_only_copy: re-exported for train.py)

from krypenv.agent_api import DecisionBatch

__all__ = ["GAME", "META_NAME", "PPOAgent", "add_metadata", "layout_id", "load", "metadata", "play_only_copy",
           "read_metadata"]

GAME = "krypkasino"
RULE_KEYS = ("players", "teams", "two_player_deal", "set_aside", "last_capture_point")


def layout_id(players: int) -> str:
    """A short id of the observation layout for ``players`` seats (field names and positions)."""
    from krypenv.krypkasino.observation import layout, obs_size

    fields = [[name, s.start, s.stop] for name, s in layout(players).items()]
    text = json.dumps({"size": obs_size(players), "fields": fields})
    return "obs-" + hashlib.sha1(text.encode()).hexdigest()[:12]


def metadata(rules: Any, features: str | None = None, **extra: Any) -> dict[str, Any]:
    """The ``krypenv.json`` object for a policy trained on ``rules`` (a :class:`krypenv.krypkasino.rules.Rules`)."""
    from krypenv.krypkasino.observation import obs_size

    teams = [list(t) for t in rules.teams] if rules.teams else None
    return {"format": FORMAT, "game": GAME, "krypenv": krypenv_version(), "players": rules.players, "teams": teams,
            "two_player_deal": rules.two_player_deal, "set_aside": rules.set_aside,
            "last_capture_point": bool(rules.last_capture_point), "obs_dim": obs_size(rules.players),
            "layout": layout_id(rules.players), "features": features, **extra}


def network_input_dim(meta: dict[str, Any]) -> int:
    """Length of the policy network's input for a checkpoint's metadata (observation + action features)."""
    if meta.get("features") is None:
        return int(meta["obs_dim"])
    from krypenv.agents.krypkasino.move_features import input_dim

    return input_dim(int(meta["obs_dim"]))


# --------------------------------------------------------------------------- network pieces (torch, lazily)
def _scaled_input_class() -> type:
    """:class:`ScaledInput`, built on first use so that importing this module does not import torch."""
    import torch as th
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class ScaledInput(BaseFeaturesExtractor):
        """Flattened observation divided by its upper bounds (the Box's ``high``), so every entry is in [0, 1]."""

        def __init__(self, observation_space: Any) -> None:
            dim = int(np.prod(observation_space.shape))
            super().__init__(observation_space, features_dim=dim)
            high = np.maximum(np.asarray(observation_space.high, np.float32).reshape(-1), 1.0)
            self.register_buffer("inv_high", th.as_tensor(1.0 / high))

        def forward(self, observations: th.Tensor) -> th.Tensor:
            return observations.reshape(observations.shape[0], -1).float() * self.inv_high

    ScaledInput.__module__ = __name__
    ScaledInput.__qualname__ = "ScaledInput"
    return ScaledInput


def _scaled_input() -> type:
    """:class:`ScaledInput`, created once."""
    if "ScaledInput" not in globals():
        globals()["ScaledInput"] = _scaled_input_class()
    return globals()["ScaledInput"]


def __getattr__(name: str) -> Any:
    """``krypenv.agents.krypkasino.ppo.ScaledInput`` is created on first access.

    New checkpoints refer to it by this name.
    """
    if name == "ScaledInput":
        return _scaled_input()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- loading
def _bad(path: Path | str, what: str) -> ValueError:
    return ValueError(f"ppo checkpoint {path}: {what}")


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checked ``krypenv.json`` of a checkpoint; ValueError naming the path and the problem."""
    meta = read_checked(path, GAME)
    players = meta["players"]
    from krypenv.krypkasino.observation import obs_size

    want_dim, want_layout = obs_size(players), layout_id(players)
    if meta.get("obs_dim") != want_dim or meta.get("layout") != want_layout:
        raise _bad(path, f"incompatible observation layout: the checkpoint has {meta.get('layout')!r} "
                         f"({meta.get('obs_dim')} entries) for {players} players, this krypenv "
                         f"{meta.get('krypenv', '?')!r} -> {krypenv_version()!r} uses {want_layout!r} "
                         f"({want_dim} entries)")
    from krypenv.agents.krypkasino.move_features import VERSION

    if meta.get("features") not in (None, VERSION):
        raise _bad(path, f"unknown action features {meta.get('features')!r} (this krypenv computes {VERSION!r})")
    return meta


def _mlp_kwargs(state: dict[str, Any]) -> dict[str, Any]:
    """The ``policy_kwargs`` train.py gives a ``--policy mlp`` network, with the layer sizes read off its weights."""
    import torch as th

    def sizes(prefix: str) -> list[int]:
        layers = {int(k[len(prefix):].split(".")[0]): v for k, v in state.items()
                  if k.startswith(prefix) and k.endswith(".weight")}
        return [int(layers[k].shape[0]) for k in sorted(layers)]

    return {"net_arch": {"pi": sizes("mlp_extractor.policy_net."), "vf": sizes("mlp_extractor.value_net.")},
            "activation_fn": th.nn.ReLU, "features_extractor_class": _scaled_input()}


def _custom_objects(data_json: str, meta: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """What SB3 must not unpickle from a checkpoint's ``data``, and what it gets instead.

    Pickles name classes and functions by the module they lived in when the checkpoint was
    saved (``krypenv.agents.move_policy.MovePolicy`` before the agents moved to ``krypenv.agents.krypkasino``),
    so the network's classes are given here from their current modules: the move-scoring
    policy when ``krypenv.json`` names action features, else the MLP's keywords (with
    :class:`ScaledInput`).  Entries that playing does not need (learning-rate schedules,
    buffers, ...) are not unpickled at all.
    """
    custom: dict[str, Any] = {key: None for key in json.loads(data_json) if key not in NEEDED_DATA}
    if meta.get("features") is not None:
        from krypenv.agents.krypkasino.move_policy import MovePolicy

        custom["policy_class"] = MovePolicy
    else:
        custom["policy_kwargs"] = _mlp_kwargs(state)
    return custom


def _load_policy(path: Path | str, meta: dict[str, Any]) -> Any:
    """The policy network of a checked checkpoint, in eval mode on the CPU."""
    import torch as th
    from stable_baselines3.common.save_util import json_to_data

    try:
        with zipfile.ZipFile(path) as zf:
            state = th.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
            data_json = zf.read("data").decode("utf-8")
            data = json_to_data(data_json, custom_objects=_custom_objects(data_json, meta, state))
        policy_class = data["policy_class"]
        space = data["observation_space"]
        if tuple(space.shape) != (network_input_dim(meta),):
            raise _bad(path, f"the network takes inputs of shape {tuple(space.shape)}, but {META_NAME} says "
                             f"{meta['obs_dim']} observation entries with action features {meta.get('features')!r} "
                             f"({network_input_dim(meta)} entries)")
        kwargs = dict(data.get("policy_kwargs") or {})
        policy = policy_class(space, data["action_space"], lambda _: 0.0, **kwargs)
        policy.load_state_dict(state)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - unpickling, missing keys, shape mismatches ...: one line naming the file
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise _bad(path, f"cannot load the policy: {type(exc).__name__}: {first}") from None
    policy.set_training_mode(False)
    return policy


class PPOAgent:
    """A MaskablePPO policy acting greedily (argmax over the legal actions) on whole batches."""

    name = "ppo"

    def __init__(self, policy: Any, meta: dict[str, Any], path: str | None = None) -> None:
        self.policy = policy
        self.meta = meta
        self.path = path
        self.players = int(meta["players"])
        self.obs_dim = int(meta["obs_dim"])
        self.features = meta.get("features")

    @classmethod
    def load(cls, path: str | Path) -> PPOAgent:
        """The agent of a checkpoint file; ValueError naming the path on any problem."""
        meta = read_metadata(path)
        return cls(_load_policy(path, meta), meta, str(path))

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, 105) float32 logits with illegal actions at −inf (one forward pass over network inputs, no gradients)."""
        import torch as th

        with th.no_grad():
            x = th.as_tensor(np.asarray(obs), dtype=th.float32)
            features = self.policy.extract_features(x, self.policy.pi_features_extractor)
            latent = self.policy.mlp_extractor.forward_actor(features)
            out = self.policy.action_net(latent).numpy()
        return np.where(np.asarray(mask) != 0, out, -np.inf).astype(np.float32)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The most probable legal action of each decision."""
        where = f"ppo checkpoint {self.path}" if self.path else f"agent {self.name!r}"
        check_table(where, self.meta, GAME, batch.rules.players, game_of(batch.core))
        if len(batch) == 0:
            return np.zeros(0, np.int64)
        if batch.obs.shape[1] != self.obs_dim:
            raise ValueError(f"{where} takes observations of {self.obs_dim} entries, got {batch.obs.shape[1]}")
        x = batch.obs
        if self.features is not None:
            from krypenv.agents.krypkasino.move_features import action_features
            from krypenv.agents.krypkasino.move_policy import with_features

            x = with_features(batch.obs, action_features(batch.core, batch.envs))
        return self.logits(x, batch.mask).argmax(axis=1).astype(np.int64)


def load(path: str) -> PPOAgent:
    """``ppo:PATH``: the learned policy saved at PATH by train.py."""
    return PPOAgent.load(path)


register("ppo", load, "a policy learned by train.py (MaskablePPO), from a checkpoint: ppo:PATH", takes_path=True,
         games=("krypkasino",))
