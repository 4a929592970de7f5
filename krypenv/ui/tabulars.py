"""The tabular policies ``krypenv serve`` offers (``tabular:NAME``): read, bounded, and the table each one plays.

A tabular policy file (:mod:`krypenv.openspiel.policy`: JSON, never pickle) names the OpenSpiel
game it was solved for, e.g. ``python_krypkasino(players=2,preset=tiny,...)``.  The server's
menu (:mod:`krypenv.ui.menu`) offers each policy under its file name (``cfr-tiny`` for
``checkpoints/cfr-tiny.json.gz``) for the game, player count and preset read from that string,
and refuses it at any table whose rules differ from the policy's (the rules come from the
registered OpenSpiel game, as :meth:`krypenv.agents.tabular.TabularAgent.check_rules` reads them).

A file is read only when its size on disk and its JSON text are at most
:data:`MAX_TABULAR_BYTES` (a gzip file is decompressed no further than that), and it is
checked whole (:meth:`TabularPolicyFile.load`) when the server starts, so a bad file given
with ``--checkpoint`` stops the start with a ValueError naming it.  Without the extra
``openspiel`` (no ``pyspiel``) no policy is offered.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MAX_TABULAR_BYTES", "TABULAR", "TabularPolicy", "policy_name", "read_tabular", "shipped_tabulars"]

TABULAR = "tabular"  # the agent name of tabular policies (krypenv.agents.tabular)
MAX_TABULAR_BYTES = 64 * 1024 * 1024  # bytes of a policy file on disk, and of its JSON text (the shipped: 1.6 MB)
MAX_GAME_STRING = 1000  # characters of the OpenSpiel game string
OPENSPIEL_PREFIX = "python_"  # OpenSpiel's name of our game G is python_G


@dataclass(frozen=True)
class TabularPolicy:
    """A tabular policy the server may play: name in specs, file, game, the players and preset it was solved for.

    ``game_string`` is the OpenSpiel game it was solved for; :meth:`rules` loads that game once
    for the full rules (other rule keys than the preset's too).
    """

    name: str
    path: Path
    game: str
    players: int
    preset: str
    game_string: str
    _rules: list[Any] = field(default_factory=list, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def summary(self) -> str:
        """One line for the page."""
        return (f"tabular policy {self.name} solved by OpenSpiel, for the {self.preset} preset with "
                f"{self.players} players")

    def rules(self) -> Any:
        """The game's rules the policy was solved for (the registered OpenSpiel game's, read once)."""
        with self._lock:
            if not self._rules:
                import pyspiel

                import krypenv.openspiel  # noqa: F401  (registers the python_ games)

                self._rules.append(pyspiel.load_game(self.game_string).config.rules)
            return self._rules[0]


def policy_name(path: Path) -> str:
    """The name a policy file is offered by: its file name without ``.json`` or ``.json.gz``."""
    return path.name.removesuffix(".gz").removesuffix(".json")


def game_params(text: str) -> tuple[str, dict[str, str]]:
    """``python_G(k=v,...)`` as ``("python_G", {k: v})``; ValueError if it is not of that form."""
    short, paren, rest = text.partition("(")
    if paren and not rest.endswith(")"):
        raise ValueError(f"game string {text[:80]!r} is not NAME(key=value,...)")
    params = {}
    for item in filter(None, rest[:-1].split(",")) if paren else ():
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"game string {text[:80]!r}: parameter {item!r} is not key=value")
        params[key] = value
    return short, params


def _text(path: Path) -> bytes:
    """The JSON text of a policy file, at most :data:`MAX_TABULAR_BYTES` (ValueError beyond)."""
    size = path.stat().st_size
    if size > MAX_TABULAR_BYTES:
        raise ValueError(f"{size} bytes, over the limit of {MAX_TABULAR_BYTES} for a tabular policy")
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            raw = f.read(MAX_TABULAR_BYTES + 1)
    else:
        raw = path.read_bytes()
    if len(raw) > MAX_TABULAR_BYTES:
        raise ValueError(f"its JSON text is over the limit of {MAX_TABULAR_BYTES} bytes for a tabular policy")
    return raw


def read_tabular(path: str | Path, games: tuple[str, ...]) -> TabularPolicy:
    """A tabular policy file of one of ``games``, bounded and checked; ValueError naming the path otherwise.

    Needs the extra ``openspiel`` (ValueError saying so without it).
    """
    p = Path(path).expanduser().resolve()
    try:
        from krypenv.openspiel.policy import TabularPolicyFile
    except ImportError as exc:
        raise ValueError(f"tabular policy {p}: needs OpenSpiel: pip install 'krypenv[openspiel]' ({exc})") from None
    try:
        text = _text(p)
    except (OSError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt deflate stream
        raise ValueError(f"tabular policy {p}: cannot read it ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"tabular policy {p}: {exc}") from None
    table = TabularPolicyFile.from_json(text, p)  # checks the format and every entry; ValueError naming the file
    if len(table.game) > MAX_GAME_STRING:
        raise ValueError(f"tabular policy {p}: its game string is over {MAX_GAME_STRING} characters")
    short, params = game_params(table.game)
    game = short.removeprefix(OPENSPIEL_PREFIX)
    if not short.startswith(OPENSPIEL_PREFIX) or game not in games:
        raise ValueError(f"tabular policy {p}: solved for the OpenSpiel game {short!r}, not one of the games served "
                         f"({', '.join(OPENSPIEL_PREFIX + g for g in games)})")
    players = params.get("players", "")
    if not players.isdigit():
        raise ValueError(f"tabular policy {p}: its game string {table.game[:80]!r} gives no players")
    return TabularPolicy(policy_name(p), p, game, int(players), params.get("preset") or "standard", table.game)


def shipped_tabulars(folder: Path, games: tuple[str, ...]) -> list[TabularPolicy]:
    """The tabular policies in ``folder`` (``*.json``, ``*.json.gz``); none without the extra ``openspiel``."""
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return []
    files = sorted({p for pattern in ("*.json", "*.json.gz") for p in folder.glob(pattern)}) if folder.is_dir() else []
    return [read_tabular(p, games) for p in files]
