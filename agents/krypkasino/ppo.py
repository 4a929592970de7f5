"""``ppo:PATH`` (or ``ppo:NAME`` of a shipped checkpoint): a Krypkasino policy learned by ``train.py``
(sb3-contrib MaskablePPO), loaded from its checkpoint.

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

``ppo:NAME`` (no path separator, no suffix: ``ppo:ppo-2p``) is the shipped ``NAME.zip``
(:func:`krypenv.agents.checkpoint.resolve_checkpoint`).  The loading and acting that every game
shares are :class:`krypenv.agents.ppo.PPOAgent`'s; this module supplies Krypkasino's observation
layout, action features and networks.  The loader checks, with a ValueError naming the path and
the problem (never a bare traceback): the file exists and is a complete zip (a truncated download
is not), it holds ``krypenv.json`` of a known format and the SB3 members, the observation layout
id and length match this version of :mod:`krypenv.krypkasino.observation` for the checkpoint's
player count, the action features are a known version, and the network's input matches their
length.  The player count of the game is only known when the agent is asked to act:
:meth:`PPOAgent.act` raises a ValueError if it differs from the checkpoint's, and likewise if the
deck and deal (RULES.md K20–K22: the preset and its rule keys, which the metadata records when not
the standard game's) differ: a checkpoint trained on the standard deck — every shipped one —
refuses ``tiny``, ``small`` or any custom deck, and one trained on ``tiny`` plays only ``tiny``.
Other rule variants and teams than the training ones are allowed (the observation has the same
layout); they are recorded in ``agent.meta``.

**Acting.**  ``act(batch)`` computes the batch's action features if the policy uses them, then
one forward pass of the policy network over the whole batch (torch, no gradients, CPU) and the
argmax of the logits over the legal actions: deterministic, and the same for a decision whether it
is acted on alone or in a batch.

The observation is scaled to [0, 1] inside the network (:class:`ScaledInput`, or
:class:`krypenv.agents.krypkasino.move_policy.MoveInput` for a move-scoring policy: each entry divided by its
upper bound in the observation space), so the checkpoint needs no separate normalisation
statistics.  torch is imported on first use only: ``import krypenv.agents`` stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents import ppo as shared
from krypenv.agents.base import register
from krypenv.agents.checkpoint import (
    FORMAT,
    META_NAME,
    add_metadata,
    bad,
    krypenv_version,
    layout_digest,
    play_only_copy,
    playing_only,
)  # fmt: skip  (add_metadata, play_only_copy: re-exported for train.py)

from krypenv.agent_api import DecisionBatch

__all__ = ["GAME", "META_NAME", "PPOAgent", "add_metadata", "layout_id", "load", "metadata", "play_only_copy",
           "read_metadata"]

GAME = "krypkasino"
RULE_KEYS = ("players", "teams", "two_player_deal", "set_aside", "last_capture_point")


def _layout(players: int) -> tuple[int, dict[str, slice]]:
    """(length, fields) of the observation for ``players`` seats."""
    from krypenv.krypkasino.observation import layout, obs_size

    return obs_size(players), layout(players)


def layout_id(players: int) -> str:
    """A short id of the observation layout for ``players`` seats (field names and positions)."""
    return layout_digest(*_layout(players))


def metadata(rules: Any, features: str | None = None, **extra: Any) -> dict[str, Any]:
    """The ``krypenv.json`` object for a policy trained on ``rules`` (a :class:`krypenv.krypkasino.rules.Rules`)."""
    from krypenv.krypkasino.observation import obs_size

    teams = [list(t) for t in rules.teams] if rules.teams else None
    return {"format": FORMAT, "game": GAME, "krypenv": krypenv_version(), "players": rules.players, "teams": teams,
            "two_player_deal": rules.two_player_deal, "set_aside": rules.set_aside,
            "last_capture_point": bool(rules.last_capture_point), "obs_dim": obs_size(rules.players),
            "layout": layout_id(rules.players), "features": features, **deck_keys(rules), **extra}


def deck_keys(rules: Any) -> dict[str, Any]:
    """The deck and deal rule keys (K20, K21) of ``rules`` that differ from the standard game's, as in a record."""
    from krypenv.krypkasino.rules import VARIANT_DEFAULTS

    return {k: v for k, v in rules.to_dict().items() if k in VARIANT_DEFAULTS}


def check_deck(where: str, meta: dict[str, Any], rules: Any) -> None:
    """ValueError (one line) unless ``rules`` have the deck and deal a checkpoint was trained on (K20–K22)."""
    from krypenv.krypkasino.rules import VARIANT_DEFAULTS, Rules

    trained = {k: meta[k] for k in VARIANT_DEFAULTS if k in meta}
    if trained != deck_keys(rules):
        name = Rules.from_dict({"players": rules.players, **trained}).preset_name if trained else "standard"
        raise ValueError(f"{where} was trained on the {name} deck and deal ({trained or 'no variant keys'}) and "
                         f"cannot play the {rules.preset_name} one ({deck_keys(rules) or 'no variant keys'}); "
                         f"RULES.md K22: the card counts and observation scales differ, train one with --preset")


def network_input_dim(meta: dict[str, Any]) -> int:
    """Length of the policy network's input for a checkpoint's metadata (observation + action features)."""
    if meta.get("features") is None:
        return int(meta["obs_dim"])
    from krypenv.agents.krypkasino.move_features import input_dim

    return input_dim(int(meta["obs_dim"]))


# --------------------------------------------------------------------------- network pieces (torch, lazily)
def _upper_bounds(observation_space: Any) -> np.ndarray:
    """Each observation entry's upper bound (the Box's ``high``), at least 1."""
    return np.maximum(np.asarray(observation_space.high, np.float32).reshape(-1), 1.0)


def _scaled_input() -> type:
    """:class:`ScaledInput`, created once."""
    if "ScaledInput" not in globals():
        globals()["ScaledInput"] = shared.scaled_input_class(
            "ScaledInput", __name__, "Flattened observation divided by its upper bounds (the Box's ``high``), so every "
            "entry is in [0, 1].", "inv_high", _upper_bounds)
    return globals()["ScaledInput"]


def __getattr__(name: str) -> Any:
    """``krypenv.agents.krypkasino.ppo.ScaledInput`` is created on first access.

    New checkpoints refer to it by this name.
    """
    if name == "ScaledInput":
        return _scaled_input()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- loading
def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checked ``krypenv.json`` of a checkpoint; ValueError naming the path and the problem."""
    meta = shared.check_layout(path, GAME, _layout)
    from krypenv.agents.krypkasino.move_features import VERSION

    if meta.get("features") not in (None, VERSION):
        raise bad(path, f"unknown action features {meta.get('features')!r} (this krypenv computes {VERSION!r})")
    return meta


def _custom_objects(data_json: str, meta: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """What SB3 must not unpickle from a checkpoint's ``data``, and what it gets instead.

    Pickles name classes and functions by the module they lived in when the checkpoint was
    saved (``agents.move_policy.MovePolicy`` before the agents moved to ``krypenv.agents.krypkasino``),
    so the network's classes are given here from their current modules: the move-scoring
    policy when ``krypenv.json`` names action features, else the MLP's keywords (with
    :class:`ScaledInput`, the layer sizes read off the weights).  Entries that playing does not
    need (learning-rate schedules, buffers, ...) are not unpickled at all.
    """
    custom = playing_only(data_json)
    if meta.get("features") is not None:
        from krypenv.agents.krypkasino.move_policy import MovePolicy

        custom["policy_class"] = MovePolicy
    else:
        import torch as th

        custom["policy_kwargs"] = {"net_arch": {"pi": shared.mlp_widths(state, "mlp_extractor.policy_net."),
                                                "vf": shared.mlp_widths(state, "mlp_extractor.value_net.")},
                                   "activation_fn": th.nn.ReLU, "features_extractor_class": _scaled_input()}
    return custom


class PPOAgent(shared.PPOAgent):
    """A Krypkasino MaskablePPO policy acting greedily on whole batches (:class:`krypenv.agents.ppo.PPOAgent`)."""

    GAME = GAME
    read_metadata = staticmethod(read_metadata)
    custom_objects = staticmethod(_custom_objects)
    input_dim = staticmethod(network_input_dim)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The most probable legal action of each decision; ValueError for another deck and deal (K22)."""
        check_deck(f"ppo checkpoint {self.path}" if self.path else f"agent {self.name!r}", self.meta, batch.rules)
        return super().act(batch)

    def network_input(self, batch: DecisionBatch) -> np.ndarray:
        """The observations, with each legal action's move features appended for a move-scoring policy."""
        if self.features is None:
            return batch.obs
        from krypenv.agents.krypkasino.move_features import action_features
        from krypenv.agents.krypkasino.move_policy import with_features

        return with_features(batch.obs, action_features(batch.core, batch.envs))


def load(path: str) -> PPOAgent:
    """``ppo:PATH``: the learned policy saved at PATH by train.py (or ``ppo:NAME``, a shipped checkpoint)."""
    return PPOAgent.load(path)


register("ppo", load, "a policy learned by train.py (MaskablePPO), from a checkpoint: ppo:PATH or ppo:NAME of a "
         "shipped one", takes_path=True, games=(GAME,))
