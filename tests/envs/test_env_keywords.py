"""Every env class of a game (AEC, Gymnasium, VecEnv, device env) takes exactly its ``EnvConfig``'s keywords.

Each class keeps an explicit signature (for ``help()``, IDEs and the generated pages) and hands its keywords to the
game's ``EnvConfig`` positionally, so these tests hold the four copies to the one dataclass: the same names in the
same order with the same defaults, and each keyword arriving in its own field.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from typing import Any

import pytest

from krypenv.games import GAMES

# each class's own arguments before the game's keywords
SHELL = {"raw_env": (), "GymEnv": ("seat", "opponents"), "VecEnv": ("num_envs", "seat", "opponents", "seed"),
         "DeviceVecEnv": ("num_envs", "device", "seat", "opponents", "seed")}


def config_class(game: str) -> type:
    """The game's ``EnvConfig`` dataclass (the one the Gymnasium env builds)."""
    return type(GAMES[game].part("entry").GymEnv().config)


@pytest.mark.parametrize("name", list(SHELL))
@pytest.mark.parametrize("game", list(GAMES))
def test_the_signature_is_the_configs_fields_in_order_with_their_defaults(game: str, name: str) -> None:
    """After the class's own arguments come the config's fields, in its order, with its defaults."""
    cls = getattr(GAMES[game].part("entry"), name)
    params = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in params[:len(SHELL[name])]] == list(SHELL[name])
    got = [(p.name, p.default) for p in params[len(SHELL[name]):]]
    assert got == [(f.name, f.default) for f in dataclasses.fields(config_class(game))]


class Built(Exception):
    """Raised by the stand-in config with the arguments the env gave it."""


@pytest.mark.parametrize("name", list(SHELL))
@pytest.mark.parametrize("game", list(GAMES))
def test_each_keyword_reaches_its_own_field(game: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distinct marker per keyword arrives in the field of that name (a swapped or dropped argument fails); the
    VecEnvs, which do not render, pass None for ``render_mode`` after refusing any other value."""
    cls = getattr(GAMES[game].part("entry"), name)
    fields = [f.name for f in dataclasses.fields(config_class(game))]

    def stand_in(*args: Any, **kwargs: Any) -> None:
        raise Built(dict(zip(fields, args)) | kwargs)

    monkeypatch.setattr(sys.modules[cls.__module__], "EnvConfig", stand_in)
    no_render = name in ("VecEnv", "DeviceVecEnv")
    markers = {f: None if f == "render_mode" and no_render else f"<{f}>" for f in fields}
    own = {"num_envs": 1} if "num_envs" in SHELL[name] else {}
    with pytest.raises(Built) as built:
        cls(**own, **markers)
    assert built.value.args[0] == markers
