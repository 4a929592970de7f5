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
  pickle (SB3, RLlib), so only those are ever loaded;
* a tabular policy solved by OpenSpiel (``tabular:NAME``, :mod:`krypenv.agents.tabular`) is
  likewise a name, never a path: the shipped ``checkpoints/NAME.json.gz`` (``tabular:cfr-tiny``)
  and the ``.json`` or ``.json.gz`` files given with ``--checkpoint``.  It is JSON (no pickle),
  read at most :data:`MAX_TABULAR_BYTES` of text, and offered only where the extra
  ``openspiel`` imports (without it, none is offered and nothing fails);
* an agent bound to a table (a checkpoint's or a tabular policy's player count and preset,
  the policy's other rule keys too) is refused at any other table before it is built, naming
  what differs and what is offered at that table.

:meth:`AgentMenu.offer` lists, per game, what the page offers to pick from: ``{spec, summary,
players, presets}``, where ``players`` are the table sizes it plays and ``presets`` the presets
(K22, L22) it plays, each None for any; the page offers only those that fit the chosen player
count and preset.  :meth:`AgentMenu.resolve` turns a checked spec into the one ``agents.load``
builds for a table of given rules (names replaced by their paths), or raises ValueError naming
what is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from krypenv.ui.tabulars import MAX_TABULAR_BYTES, TABULAR, TabularPolicy, read_tabular, shipped_tabulars

__all__ = ["MAX_TABULAR_BYTES", "AgentMenu", "Checkpoint", "TabularPolicy", "read_checkpoint", "read_tabular"]

MAX_SPEC = 200  # characters of one agent spec from a request
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+.")


@dataclass(frozen=True)
class Checkpoint:
    """A trusted checkpoint the server may load: name in specs, kind (``ppo``/``rllib``), path, game, players, preset.

    ``preset`` is the preset its metadata says it was trained on (None where that cannot be read).
    """

    name: str
    kind: str
    path: Path
    game: str
    players: int
    preset: str | None = "standard"

    def summary(self) -> str:
        """One line for the page."""
        preset = "" if self.preset in (None, "standard") else f", preset {self.preset}"
        return f"learned policy from checkpoint {self.name} ({self.game}, {self.players} players{preset})"


def read_checkpoint(path: str | Path, games: tuple[str, ...]) -> Checkpoint:
    """A checkpoint file (``ppo``) or folder (``rllib``) of one of ``games``; ValueError naming the path otherwise.

    Only the JSON metadata is read here (nothing is unpickled): the file is loaded when an agent plays it.
    """
    from krypenv.agents.checkpoint import LEGACY_GAME, read_checked
    from krypenv.agents.rllib_agent import read_meta

    p = Path(path).expanduser().resolve()
    if p.is_dir():
        meta, kind = read_meta(p), "rllib"
        game, players = str(meta["game"]), int(meta.get("players", 0))
    else:
        meta, kind = read_checked(p, None), "ppo"  # the zip is read and checked once, whatever its game
        game, players = str(meta.get("game", LEGACY_GAME)), int(meta["players"])
        if game not in games:
            raise ValueError(f"ppo checkpoint {p}: trained for {game}, not one of the games served "
                             f"({', '.join(games)})")
    name = p.name if kind == "rllib" else p.stem
    return Checkpoint(name, kind, p, game, players, _trained_preset(game, meta, players))


def _trained_preset(game: str, meta: dict[str, Any], players: int) -> str | None:
    """The preset a checkpoint's metadata names (read by the game's UI adapter); None if unreadable."""
    from krypenv.games import GAMES

    try:
        return str(GAMES[game].part("ui").trained_preset(meta, players))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def is_tabular_file(path: str | Path) -> bool:
    """True for a ``--checkpoint`` that names a tabular policy (``.json`` or ``.json.gz``), not a ppo/rllib one."""
    return str(path).endswith((".json", ".json.gz"))


class AgentMenu:
    """The agents a server offers and accepts (see the module docstring)."""

    def __init__(self, checkpoints: list[Checkpoint], tabulars: list[TabularPolicy] | tuple[TabularPolicy, ...] = ()
                 ) -> None:
        self.checkpoints: dict[str, Checkpoint] = {}
        self.tabulars: dict[str, TabularPolicy] = {}
        for c in [*checkpoints, *tabulars]:
            held: dict[str, Any] = self.tabulars if isinstance(c, TabularPolicy) else self.checkpoints
            if c.name in held:
                raise ValueError(f"two checkpoints are named {c.name!r} ({held[c.name].path} and {c.path});"
                                 f" rename one")
            if not c.name or not set(c.name) <= NAME_CHARS:
                raise ValueError(f"checkpoint {c.path}: its name {c.name!r} may hold only letters, digits and -_+.")
            if "," in str(c.path):
                raise ValueError(f"checkpoint {c.path}: a path with a comma cannot stand in an agent spec")
            held[c.name] = c

    @classmethod
    def build(cls, extra: list[str] | tuple[str, ...] = (), shipped: Path | None = None) -> AgentMenu:
        """The shipped checkpoints and tabular policies plus ``extra`` paths (``.json[.gz]``: a tabular policy).

        ``shipped`` is the checkpoint folder, default :data:`krypenv.agents.checkpoint.SHIPPED`.
        """
        from krypenv.agents.checkpoint import SHIPPED
        from krypenv.games import names

        folder = SHIPPED if shipped is None else shipped
        found = [read_checkpoint(p, names()) for p in sorted(folder.glob("*.zip"))]  # none where no folder
        tabulars = shipped_tabulars(folder, names())
        named: list[Any] = []
        for path in extra:
            try:
                named.append(read_tabular(path, names()) if is_tabular_file(path) else read_checkpoint(path, names()))
            except ValueError as exc:
                raise ValueError(f"--checkpoint {path}: {exc}") from None
        replaced = {(type(c), c.name) for c in named}  # a named one replaces a shipped one of its kind
        kept = [c for c in [*found, *tabulars] if (type(c), c.name) not in replaced] + named
        return cls([c for c in kept if isinstance(c, Checkpoint)], [c for c in kept if isinstance(c, TabularPolicy)])

    # ------------------------------------------------------------------ what the page offers
    def offer(self, game: str) -> list[dict[str, Any]]:
        """The specs the page offers for ``game``: every registered name, each checkpoint, each tabular policy.

        Each item is ``{spec, summary, players, presets}``: the table sizes and presets it plays, each None for any.
        """
        from krypenv import agents
        from krypenv.agents.base import find_entry

        out: list[dict[str, Any]] = []
        for name, summary in agents.known(game).items():
            entry = find_entry(name, game)
            if entry is not None and not entry.takes_path:
                out.append({"spec": name, "summary": summary, "players": None,
                            "presets": None if entry.presets is None else list(entry.presets)})
        for c in self.checkpoints.values():
            if c.game == game:
                out.append({"spec": f"{c.kind}:{c.name}", "summary": c.summary(), "players": [c.players],
                            "presets": None if c.preset is None else [c.preset]})
        for t in self.tabulars.values():
            if t.game == game and find_entry(TABULAR, game) is not None:
                out.append({"spec": f"{TABULAR}:{t.name}", "summary": t.summary(), "players": [t.players],
                            "presets": [t.preset]})
        return out

    def offered_at(self, game: str, rules: Any) -> str:
        """The specs offered at a table of ``rules`` (players and preset), comma-separated, for error messages."""
        return ", ".join(item["spec"] for item in self.offer(game) if _fits(item, rules)) or "none"

    # ------------------------------------------------------------------ checking a request's spec
    def _checkpoint(self, kind: str, name: str, game: str, spec: str, rules: Any) -> Path:
        """The path of trusted checkpoint ``name`` of ``kind`` for ``game`` at a table of ``rules``; ValueError else."""
        c = self.checkpoints.get(name)
        if c is None or c.kind != kind or c.game != game:
            names = ", ".join(f"{kind}:{k}" for k, v in self.checkpoints.items() if v.kind == kind and v.game == game)
            raise ValueError(f"agent {spec!r}: the server has no {kind} checkpoint named {name!r} for {game} "
                             f"(it loads only the shipped checkpoints and those named with --checkpoint at start-up, "
                             f"by name, never a path; offered: {names or 'none'})")
        item = {"players": [c.players] if c.players else None, "presets": None if c.preset is None else [c.preset]}
        if not _fits(item, rules):
            raise ValueError(f"agent {spec!r}: checkpoint {name} was trained for {c.players} players and the "
                             f"{c.preset} preset, not this table's {rules.players} players and "
                             f"{rules.preset_name} preset; offered at this table: {self.offered_at(game, rules)}")
        return c.path

    def _tabular(self, name: str, game: str, spec: str, rules: Any) -> Path:
        """The file of tabular policy ``name`` for ``game``, checked against the table's ``rules``; ValueError else."""
        t = self.tabulars.get(name)
        if t is None or t.game != game:
            names = ", ".join(f"{TABULAR}:{k}" for k, v in self.tabulars.items() if v.game == game)
            raise ValueError(f"agent {spec!r}: the server has no tabular policy named {name!r} for {game} (it plays "
                             f"only the shipped policies and those named with --checkpoint at start-up, by name, "
                             f"never a path; offered: {names or 'none'})")
        mine, theirs = rules.to_dict(), t.rules().to_dict()
        differ = [k for k in sorted(set(mine) | set(theirs), key=str) if mine.get(k) != theirs.get(k)]
        if differ:
            what = "; ".join(f"{k} {mine.get(k)!r} here, {theirs.get(k)!r} in the policy" for k in differ)
            raise ValueError(f"agent {spec!r}: tabular policy {name} was solved for {t.players} players and the "
                             f"{t.preset} preset, not this table ({rules.players} players, {rules.preset_name} "
                             f"preset; {what}); offered at this table: {self.offered_at(game, rules)}")
        return t.path

    def resolve(self, spec: Any, game: str, rules: Any) -> str:
        """The ``agents.load`` spec of a request's ``spec`` for ``game`` at a table of ``rules``; ValueError naming
        what is refused.  ``rules`` are the table's game rules (``players``, ``preset_name``, ``to_dict()``)."""
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
        if name == TABULAR:
            return f"{name}:{self._tabular(rest.strip(), game, spec, rules)}"
        if entry.takes_path:
            return f"{name}:{self._checkpoint(name, rest.strip(), game, spec, rules)}"
        if not _fits({"players": None, "presets": entry.presets}, rules):
            raise ValueError(f"agent {spec!r}: {name} plays only the {' or '.join(entry.presets or ())} preset, not "
                             f"this table's {rules.preset_name} one; offered at this table: "
                             f"{self.offered_at(game, rules)}")
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
                value = f"{kind}:{self._checkpoint(kind, value[len(kind) + 1:], game, spec, rules)}"
            elif not limit.admits(value):
                raise ValueError(f"agent {spec!r}: option {key} must be {limit.describe()}, got {value!r}")
            out.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
        return f"{name}:{','.join(out)}" if out else name


def _fits(item: dict[str, Any], rules: Any) -> bool:
    """True when an offered item (``players``, ``presets``: lists or None for any) plays at a table of ``rules``."""
    return ((item["players"] is None or rules.players in item["players"])
            and (item["presets"] is None or rules.preset_name in item["presets"]))
