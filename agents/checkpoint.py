"""What every game's ``ppo:PATH`` loader shares: the checkpoint zip, its ``krypenv.json``, its checks.

**Trusted files only.**  Loading a checkpoint runs pickle (SB3 unpickles the spaces it stores
in ``data``): load only checkpoints you trust, as you would run their author's script
(``docs/SECURITY.md``).  ``krypenv serve`` never loads a path from a request.

A checkpoint is the zip ``MaskablePPO.save`` writes plus a ``krypenv.json`` member
(:func:`add_metadata`) whose ``"format"`` is :data:`FORMAT` and whose ``"game"`` names the game
it was trained on (checkpoints written before the second game have no ``"game"``: they are
Krypkasino's).  Each game's loader (``krypenv.agents.<game>.ppo`` on :mod:`krypenv.agents.ppo`)
checks its own observation layout and network; this module checks the zip, the format, the
game and the player count, each failure a one-line ValueError naming the file.  It imports no
game and no torch at import time.

**Shipped checkpoints.**  :data:`SHIPPED` is the folder of the checkpoints that ship with
krypenv: the folder ``checkpoints`` beside the ``agents`` package's folder.  In a checkout
(and an editable install, which imports the checkout's files) that is the repository's
top-level ``checkpoints/``; in an installed wheel the same files are package data at
``krypenv/checkpoints/`` (``pyproject.toml`` maps ``checkpoints/`` to ``krypenv.checkpoints``
as it maps ``agents/`` to ``krypenv.agents``), beside ``krypenv/agents/``.  So ``champion``,
the web app's menu and ``ppo:NAME`` find them from any working directory, in or outside a
checkout.  In an agent spec, ``ppo:NAME`` — a name with no path separator and no suffix, such
as ``ppo:ppo-2p`` or ``ppo:kille-4p`` — is the shipped ``NAME.zip`` (:func:`resolve_checkpoint`);
anything else is a path (``ppo:checkpoints/ppo-2p.zip``, ``ppo:runs/x/final.zip``).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from krypenv.games import DEFAULT_GAME

SHIPPED = Path(__file__).resolve().parents[1] / "checkpoints"  # the shipped checkpoints (see the module docstring)
FORMAT = "krypenv-ppo/1"
META_NAME = "krypenv.json"
LEGACY_GAME = DEFAULT_GAME  # a checkpoint whose krypenv.json names no game predates the second game: the first's
NEEDED_DATA = ("policy_class", "observation_space", "action_space", "policy_kwargs")  # what playing reads of ``data``


def bad(path: Path | str, what: str) -> ValueError:
    """The loaders' one-line error: ``ppo checkpoint PATH: what``."""
    return ValueError(f"ppo checkpoint {path}: {what}")


def shipped_names() -> list[str]:
    """The names of the shipped checkpoints (``ppo-2p``, ``kille-4p``, ...), sorted."""
    return sorted(p.stem for p in SHIPPED.glob("*.zip")) if SHIPPED.is_dir() else []


def resolve_checkpoint(spec: str | Path) -> str | Path:
    """The file of a ``ppo:`` spec's checkpoint: a shipped checkpoint's name (no path separator, no suffix) is
    ``SHIPPED / NAME.zip``; a path (or an empty spec) is returned as given.

    ValueError listing the shipped names when a name is not one of them.
    """
    text = str(spec)
    if not text or isinstance(spec, Path) or "/" in text or "\\" in text or Path(text).suffix:
        return spec
    path = SHIPPED / f"{text}.zip"
    if not path.is_file():
        raise ValueError(f"ppo checkpoint {text!r}: no such file, and no shipped checkpoint of that name "
                         f"(shipped: {', '.join(shipped_names()) or 'none'}; or give a path)")
    return path


def krypenv_version() -> str:
    """The installed krypenv version (``unknown`` when not installed as a package)."""
    try:
        from importlib.metadata import version

        return version("krypenv")
    except Exception:  # noqa: BLE001  # pragma: no cover - running from a bare checkout
        return "unknown"


def layout_digest(size: int, fields: dict[str, slice]) -> str:
    """A short id of an observation layout (its length, field names and positions)."""
    text = json.dumps({"size": size, "fields": [[name, s.start, s.stop] for name, s in fields.items()]})
    return "obs-" + hashlib.sha1(text.encode()).hexdigest()[:12]


def add_metadata(path: str | Path, meta: dict[str, Any], to: str | Path | None = None,
                 drop: tuple[str, ...] = ()) -> None:
    """Write (or replace) ``krypenv.json`` inside the SB3 zip at ``path`` (or in a copy at ``to``, without ``drop``)."""
    path = Path(path)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if n != META_NAME and n not in drop}
    path = path if to is None else Path(to)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
        zf.writestr(META_NAME, json.dumps(meta, indent=1, default=str) + "\n")
    tmp.replace(path)


def play_only_copy(src: str | Path, dst: str | Path) -> None:
    """Copy a checkpoint without the optimizer state (a third of the size): ``ppo:PATH`` plays it, but
    ``MaskablePPO.load`` cannot resume training from it (use the full checkpoint for that)."""
    with zipfile.ZipFile(src) as zf:
        meta = json.loads(zf.read(META_NAME).decode("utf-8"))
    add_metadata(src, meta | {"optimizer": False}, to=dst, drop=("policy.optimizer.pth",))


def read_checked(path: str | Path, game: str | None) -> dict[str, Any]:
    """``krypenv.json`` of a complete checkpoint of ``game`` (None: of any game) with a valid player count.

    ValueError naming the path otherwise.
    """
    p = Path(path)
    if not str(path):
        raise ValueError("ppo agent needs a checkpoint path: ppo:PATH (e.g. ppo:checkpoints/ppo-2p.zip)")
    if not p.exists():
        raise bad(path, "no such file")
    if not p.is_file():
        raise bad(path, "not a file")
    try:
        with zipfile.ZipFile(p) as zf:
            names = set(zf.namelist())
            if META_NAME not in names:
                raise bad(path, f"not a krypenv checkpoint (no {META_NAME} in the zip; train.py writes it)")
            meta = json.loads(zf.read(META_NAME).decode("utf-8"))
            missing = {"data", "policy.pth"} - names
            if missing:
                raise bad(path, f"incomplete checkpoint, missing {', '.join(sorted(missing))}")
            broken = zf.testzip()
            if broken is not None:
                raise bad(path, f"corrupt checkpoint (member {broken} fails its CRC check)")
    except zipfile.BadZipFile as exc:
        raise bad(path, f"not a readable zip file (truncated or corrupt?): {exc}") from None
    except (zlib.error, EOFError) as exc:
        raise bad(path, f"corrupt checkpoint (a member does not decompress: {exc})") from None
    except (OSError, zipfile.LargeZipFile) as exc:
        raise bad(path, f"cannot read it: {type(exc).__name__}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise bad(path, f"{META_NAME} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise bad(path, f"unknown checkpoint format {fmt!r} (this krypenv reads {FORMAT!r})")
    trained = meta.get("game", LEGACY_GAME)
    if game is not None and trained != game:
        raise bad(path, f"trained for {trained}, not {game} (load it at a {trained} table)")
    players = meta.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 6:
        raise bad(path, f"{META_NAME} has no valid player count (got {players!r})")
    return meta


def game_of(core: Any) -> str:
    """The game of a decision batch's core: its ``game`` attribute, else the registered game package its class (or
    a base class: a harness's subclass of a game's core) comes from, else ``unknown``."""
    name = getattr(core, "game", None)
    if isinstance(name, str):
        return name
    from krypenv.games import GAMES

    for cls in type(core).__mro__:
        parts = cls.__module__.split(".")
        if len(parts) > 2 and parts[0] == "krypenv" and parts[1] in GAMES:
            return parts[1]
    return "unknown"


def check_table(where: str, meta: dict[str, Any], game: str, players: int, batch_game: str) -> None:
    """ValueError (one line) if a checkpoint of ``game`` for ``meta['players']`` is asked to play another table."""
    if batch_game not in (game, "unknown"):
        raise ValueError(f"{where} was trained for {game} and cannot play {batch_game}")
    if players != int(meta["players"]):
        raise ValueError(f"{where} was trained for {meta['players']} players and cannot play a "
                         f"{players}-player game (its observations have another layout)")


def load_state(path: Path | str, custom: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(state dict, SB3 ``data``) of a checkpoint; ``custom(data_json, state)`` gives the custom objects."""
    import torch as th
    from stable_baselines3.common.save_util import json_to_data

    with zipfile.ZipFile(path) as zf:
        state = th.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
        data_json = zf.read("data").decode("utf-8")
    return state, json_to_data(data_json, custom_objects=custom(data_json, state))


def playing_only(data_json: str) -> dict[str, Any]:
    """Custom objects that keep SB3 from unpickling what playing does not need (schedules, buffers, ...)."""
    return {key: None for key in json.loads(data_json) if key not in NEEDED_DATA}


def policy_logits(policy: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, A) float32 logits of an SB3 actor-critic with illegal actions at −inf (one forward pass, no gradients)."""
    import torch as th

    with th.no_grad():
        x = th.as_tensor(np.asarray(obs), dtype=th.float32)
        features = policy.extract_features(x, policy.pi_features_extractor)
        latent = policy.mlp_extractor.forward_actor(features)
        out = policy.action_net(latent).numpy()
    return np.where(np.asarray(mask) != 0, out, -np.inf).astype(np.float32)
