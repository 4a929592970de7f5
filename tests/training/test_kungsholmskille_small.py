"""train.py's Kungsholmskille part with ``preset="small"`` (KILLE.md L22): env, metadata and evaluation read it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from krypenv.training import kungsholmskille as part


def _args(**kw) -> SimpleNamespace:
    base = {"players": 3, "max_deals": 50, "preset": "small", "num_envs": 4, "seed": 1}
    return SimpleNamespace(**{**base, **kw})


def test_small_preset_reaches_the_env_the_metadata_and_the_evaluation(monkeypatch) -> None:
    """The training env deals the small deck with its pot bound; the checkpoint metadata records the rules; the
    periodic evaluation plays small pots; a bad preset is a ValueError naming it."""
    args = _args()
    assert part.game_config(args) == {"players": 3, "max_deals": 50, "preset": "small"}
    env = part.make_env(args, "random")
    assert env.core.rules.to_dict() == {"players": 3, "ranks": 11, "max_deals": 3}
    env.reset()
    for _ in range(30):
        _, _, dones, infos = env.step(np.argmax(env.action_masks(), axis=1))
        for done, info in zip(dones, infos):
            assert not done or not info["TimeLimit.truncated"]  # a small pot ends by L14/L15/L21, never cut
    monkeypatch.setattr(part.dataclasses, "asdict", lambda a: dict(vars(a)))
    meta = part.metadata(args, None)
    assert meta["rules"] == {"ranks": 11, "max_deals": 3}
    assert "rules" not in part.metadata(_args(preset="standard", players=4), None)
    from krypenv import agents

    mean, low, high, episodes = part.money_among(agents.load("timid", game="kungsholmskille"), "random", args, 6, 0)
    assert low <= mean <= high and episodes == 6
    with pytest.raises(ValueError, match="preset"):
        part.game_config(_args(preset="tiny"))
    assert part.preset(SimpleNamespace()) == "standard"
