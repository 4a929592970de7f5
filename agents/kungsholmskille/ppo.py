"""``ppo:PATH`` (or ``ppo:NAME`` of a shipped checkpoint, e.g. ``ppo:kille-4p``) at a Kungsholmskille table: a
MaskablePPO policy trained by ``train.py --game kungsholmskille``.

**Trusted files only.**  Loading a checkpoint runs pickle (SB3 unpickles the spaces it stores
in ``data``): load only checkpoints you trust, as you would run their author's script
(``docs/SECURITY.md``).  ``krypenv serve`` never loads a path from a request.

**Checkpoint.**  The SB3 zip with a ``krypenv.json`` member (:mod:`krypenv.agents.checkpoint`)::

    {"format": "krypenv-ppo/1", "game": "kungsholmskille", "krypenv": "0.1.0", "players": 4,
     "max_deals": 50, "obs_dim": 167, "layout": "<id of the observation layout>", "features": null,
     "env_steps": ..., "args": {...}}

The network is SB3's MLP actor-critic on the observation alone
(:mod:`krypenv.kungsholmskille.observation`, ``75 + 23P`` entries) through :class:`KilleInput`.
Loading checks, each failure one ValueError line naming the file: the zip, format and game
(a Krypkasino checkpoint is refused here, and this one at a Krypkasino table), the observation
layout id and length for the checkpoint's player count, and the network's input size.  A
table of another player count is refused when the agent is asked to act, and so is a table of
other deck or pot rules (KILLE.md L20–L22): the metadata's ``"rules"`` holds the rule keys the
policy was trained on when they are not the standard game's (``{"ranks": 11, "max_deals": 3}``
for ``small``); a checkpoint without it — every shipped one — plays only the standard game.

**Acting.**  One forward pass over the whole batch and the argmax over the legal actions:
deterministic, and the same for a decision alone or in a batch (:class:`krypenv.agents.ppo.PPOAgent`,
the loading and acting every game shares).  torch is imported on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents import ppo as shared
from krypenv.agents.base import register
from krypenv.agents.checkpoint import FORMAT, bad, krypenv_version, layout_digest, playing_only

from krypenv.agent_api import DecisionBatch

__all__ = ["GAME", "INPUT_CAP", "PPOAgent", "layout_id", "load", "metadata", "read_metadata"]

GAME = "kungsholmskille"
INPUT_CAP = 32.0  # observation entries are divided by min(|bound|, 32): money and the pot keep their units


def layout_id(players: int) -> str:
    """A short id of the Kungsholmskille observation layout for ``players`` seats."""
    from krypenv.kungsholmskille.observation import layout, obs_size

    return layout_digest(obs_size(players), layout(players))


def metadata(players: int, max_deals: int, rules: Any = None, **extra: Any) -> dict[str, Any]:
    """The ``krypenv.json`` object of a policy trained at a ``players``-seat Kungsholmskille table (``rules``: its
    :class:`~krypenv.kungsholmskille.rules.Rules`, recorded as ``"rules"`` only when not standard, L20–L22)."""
    from krypenv.kungsholmskille.observation import obs_size

    variant = {} if rules is None else variant_keys(rules)
    return {"format": FORMAT, "game": GAME, "krypenv": krypenv_version(), "players": int(players),
            "max_deals": int(max_deals), "obs_dim": obs_size(players), "layout": layout_id(players),
            "features": None, **({"rules": variant} if variant else {}), **extra}


def variant_keys(rules: Any) -> dict[str, Any]:
    """The rule keys of ``rules`` other than ``players`` that differ from the standard game's (L23), as in a record."""
    return {k: v for k, v in rules.to_dict().items() if k != "players"}


def check_rules(where: str, meta: dict[str, Any], rules: Any) -> None:
    """ValueError (one line) unless ``rules`` have the deck and pot bound a checkpoint was trained on (L20–L22)."""
    trained = meta.get("rules") or {}
    if trained != variant_keys(rules):
        from krypenv.kungsholmskille.rules import Rules

        name = Rules.from_dict({"players": rules.players, **trained}).preset_name if trained else "standard"
        raise ValueError(f"{where} was trained on the {name} preset {trained or ''}and cannot play the "
                         f"{rules.preset_name} one {variant_keys(rules) or ''}(KILLE.md L22: the deck and the pot "
                         f"differ; train one for it with train.py --game kungsholmskille --preset)")


def _input_scale(observation_space: Any) -> np.ndarray:
    """Each observation entry's divisor: its largest |bound|, clipped to [1, INPUT_CAP]."""
    low = np.abs(np.asarray(observation_space.low, np.float32).reshape(-1))
    high = np.abs(np.asarray(observation_space.high, np.float32).reshape(-1))
    return np.clip(np.maximum(low, high), 1.0, INPUT_CAP)


def __getattr__(name: str) -> Any:
    """``krypenv.agents.kungsholmskille.ppo.KilleInput`` is created on first access (checkpoints name it)."""
    if name == "KilleInput":
        if "KilleInput" not in globals():
            globals()["KilleInput"] = shared.scaled_input_class(
                "KilleInput", __name__, "The observation divided by min(max |bound|, INPUT_CAP) per entry (cards, "
                "calls and flags in [−1, 1]).", "inv_scale", _input_scale)
        return globals()["KilleInput"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _layout(players: int) -> tuple[int, dict[str, slice]]:
    """(length, fields) of the observation for ``players`` seats."""
    from krypenv.kungsholmskille.observation import layout, obs_size

    return obs_size(players), layout(players)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checked ``krypenv.json`` of a Kungsholmskille checkpoint; ValueError naming the path and the problem."""
    meta = shared.check_layout(path, GAME, _layout)
    if meta.get("features") is not None:
        raise bad(path, f"unknown action features {meta.get('features')!r} (Kungsholmskille policies read none)")
    return meta


def policy_kwargs(sizes: list[int], critic_sizes: list[int] | None = None) -> dict[str, Any]:
    """The ``policy_kwargs`` of train.py's Kungsholmskille network: separate ReLU MLPs of ``sizes`` (the critic's:
    ``critic_sizes``, by default the same) on KilleInput."""
    import torch as th

    vf = list(sizes if critic_sizes is None else critic_sizes)
    return {"net_arch": {"pi": list(sizes), "vf": vf}, "activation_fn": th.nn.ReLU,
            "features_extractor_class": __getattr__("KilleInput")}


def _custom_objects(data_json: str, meta: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """What SB3 must not unpickle from ``data`` (see :func:`krypenv.agents.checkpoint.playing_only`), and the MLP's
    keywords on :class:`KilleInput` with the widths read off the weights (the pickled ``KilleInput`` is not read)."""
    return playing_only(data_json) | {"policy_kwargs": policy_kwargs(
        shared.mlp_widths(state, "mlp_extractor.policy_net."), shared.mlp_widths(state, "mlp_extractor.value_net."))}


class PPOAgent(shared.PPOAgent):
    """A MaskablePPO policy playing Kungsholmskille greedily on whole batches (:class:`krypenv.agents.ppo.PPOAgent`)."""

    GAME = GAME
    read_metadata = staticmethod(read_metadata)
    custom_objects = staticmethod(_custom_objects)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The most probable legal action of each decision; ValueError for other deck or pot rules (L22)."""
        check_rules(f"ppo checkpoint {self.path}" if self.path else f"agent {self.name!r}", self.meta, batch.rules)
        return super().act(batch)


def load(path: str) -> PPOAgent:
    """``ppo:PATH``: the Kungsholmskille policy saved at PATH by ``train.py --game kungsholmskille`` (or ``ppo:NAME``,
    a shipped checkpoint)."""
    return PPOAgent.load(path)


register("ppo", load, "a policy learned by train.py --game kungsholmskille (MaskablePPO), from a checkpoint: ppo:PATH "
         "or ppo:NAME of a shipped one", takes_path=True, games=(GAME,))
