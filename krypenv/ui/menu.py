"""The agents ``krypenv serve`` may play: registered names with bounded options, and trusted checkpoints by name.

A request from the network is data, never code.  Over HTTP an agent spec is checked here
before anything is built:

* the name must be registered for the game (``agents.known(game)``); a ``module:attr`` spec is
  refused without importing anything;
* its options must be among those its registration declares for outside use
  (``register(..., limits=...)``, e.g. ``pimc:samples`` from 1 to 256) and within their
  bounds; any other option is refused;
* a learned policy (``ppo:NAME``, ``rllib:NAME``, ``pimc:policy=ppo:NAME``) names a checkpoint
  of the server's table by its *name*, never a path: the table holds the shipped checkpoints
  (``checkpoints/*.zip``) and the files or folders given with ``krypenv serve --checkpoint``
  at start-up, which are trusted by whoever started the server.  Loading a checkpoint runs
  pickle (SB3, RLlib), so only those are ever loaded.

:meth:`AgentMenu.offer` lists, per game, what the page offers to pick from (a spec and a line
each); :meth:`AgentMenu.resolve` turns a checked spec into the one ``agents.load`` builds
(checkpoint names replaced by their paths), or raises ValueError naming what is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_SPEC = 200  # characters of one agent spec from a request
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+.")


@dataclass(frozen=True)
class Checkpoint:
    """A trusted checkpoint the server may load: its name in specs, kind (``ppo``/``rllib``), path, game, players."""

    name: str
    kind: str
    path: Path
    game: str
    players: int

    def summary(self) -> str:
        """One line for the page."""
        return f"learned policy from checkpoint {self.name} ({self.game}, {self.players} players)"


def read_checkpoint(path: str | Path, games: tuple[str, ...]) -> Checkpoint:
    """A checkpoint file (``ppo``) or folder (``rllib``) of one of ``games``; ValueError naming the path otherwise.

    Only the JSON metadata is read here (nothing is unpickled): the file is loaded when an agent plays it.
    """
    from krypenv.agents.checkpoint import LEGACY_GAME, read_checked
    from krypenv.agents.rllib_agent import read_meta

    p = Path(path).expanduser().resolve()
    if p.is_dir():
        meta, kind = read_meta(p), "rllib"
        return Checkpoint(p.name, kind, p, str(meta["game"]), int(meta.get("players", 0)))
    meta = read_checked(p, None)  # the zip is read and checked once, whatever its game
    game = str(meta.get("game", LEGACY_GAME))
    if game not in games:
        raise ValueError(f"ppo checkpoint {p}: trained for {game}, not one of the games served ({', '.join(games)})")
    return Checkpoint(p.stem, "ppo", p, game, int(meta["players"]))


class AgentMenu:
    """The agents a server offers and accepts (see the module docstring)."""

    def __init__(self, checkpoints: list[Checkpoint]) -> None:
        self.checkpoints: dict[str, Checkpoint] = {}
        for c in checkpoints:
            if c.name in self.checkpoints:
                raise ValueError(f"two checkpoints are named {c.name!r} ({self.checkpoints[c.name].path} and {c.path});"
                                 f" rename one")
            if not c.name or not set(c.name) <= NAME_CHARS:
                raise ValueError(f"checkpoint {c.path}: its name {c.name!r} may hold only letters, digits and -_+.")
            if "," in str(c.path):
                raise ValueError(f"checkpoint {c.path}: a path with a comma cannot stand in an agent spec")
            self.checkpoints[c.name] = c

    @classmethod
    def build(cls, extra: list[str] | tuple[str, ...] = (), shipped: Path | None = None) -> AgentMenu:
        """The shipped checkpoints plus ``extra`` paths.

        ``shipped`` is the checkpoint folder, default :data:`krypenv.agents.checkpoint.SHIPPED`.
        """
        from krypenv.agents.checkpoint import SHIPPED
        from krypenv.games import names

        folder = SHIPPED if shipped is None else shipped
        found = [read_checkpoint(p, names()) for p in sorted(folder.glob("*.zip"))] if folder.is_dir() else []
        named = []
        for path in extra:
            try:
                named.append(read_checkpoint(path, names()))
            except ValueError as exc:
                raise ValueError(f"--checkpoint {path}: {exc}") from None
        replaced = {c.name for c in named}
        return cls([c for c in found if c.name not in replaced] + named)  # a named one replaces a shipped one

    # ------------------------------------------------------------------ what the page offers
    def offer(self, game: str) -> list[dict[str, Any]]:
        """The specs the page offers for ``game``: every registered name, then each checkpoint of the game.

        Each item is ``{spec, summary, players}`` (``players``: the table sizes it plays, None for any).
        """
        from krypenv import agents
        from krypenv.agents.base import find_entry

        out: list[dict[str, Any]] = []
        for name, summary in agents.known(game).items():
            entry = find_entry(name, game)
            if entry is not None and not entry.takes_path:
                out.append({"spec": name, "summary": summary, "players": None})
        for c in self.checkpoints.values():
            if c.game == game:
                out.append({"spec": f"{c.kind}:{c.name}", "summary": c.summary(), "players": [c.players]})
        return out

    # ------------------------------------------------------------------ checking a request's spec
    def _checkpoint(self, kind: str, name: str, game: str, spec: str) -> Path:
        """The path of trusted checkpoint ``name`` of ``kind`` for ``game``; ValueError listing the offered ones."""
        c = self.checkpoints.get(name)
        if c is None or c.kind != kind or c.game != game:
            names = ", ".join(f"{kind}:{k}" for k, v in self.checkpoints.items() if v.kind == kind and v.game == game)
            raise ValueError(f"agent {spec!r}: the server has no {kind} checkpoint named {name!r} for {game} "
                             f"(it loads only the shipped checkpoints and those named with --checkpoint at start-up, "
                             f"by name, never a path; offered: {names or 'none'})")
        return c.path

    def resolve(self, spec: Any, game: str) -> str:
        """The ``agents.load`` spec of a request's ``spec`` for ``game``; ValueError naming what is refused."""
        from krypenv import agents
        from krypenv.agents.base import find_entry, parse_options

        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"an agent must be a non-empty spec string, got {json.dumps(spec)[:80]}")
        spec = spec.strip()
        if len(spec) > MAX_SPEC:
            raise ValueError(f"agent spec of {len(spec)} characters is over the limit of {MAX_SPEC}")
        name, _, rest = spec.partition(":")
        entry = find_entry(name, game)
        if entry is None:
            offered = ", ".join(item["spec"] for item in self.offer(game))
            other = " (it plays another game)" if name in agents.known() else ""
            raise ValueError(f"unknown agent {name!r} for {game}{other}; the server plays only the agents it offers: "
                             f"{offered}")
        if entry.takes_path:
            return f"{name}:{self._checkpoint(name, rest.strip(), game, spec)}"
        options = parse_options(spec, rest)
        out = []
        for key, value in options.items():
            limit = entry.limits.get(key)
            if limit is None:
                allowed = ", ".join(entry.limits) or "none"
                raise ValueError(f"agent {spec!r}: option {key!r} cannot be set over the network "
                                 f"(options {name} takes here: {allowed})")
            kind = limit.checkpoint
            if kind and isinstance(value, str) and value.startswith(kind + ":"):
                value = f"{kind}:{self._checkpoint(kind, value[len(kind) + 1:], game, spec)}"
            elif not limit.admits(value):
                raise ValueError(f"agent {spec!r}: option {key} must be {limit.describe()}, got {value!r}")
            out.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
        return f"{name}:{','.join(out)}" if out else name
