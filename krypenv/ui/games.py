"""The game adapters of the UI, by game name: each game's one module, imported when that game is played.

:func:`adapter` builds the adapter of a game (:class:`krypenv.ui.session.GameAdapter`);
:func:`replay_frames` turns a checked game record into the frames of the replay view.  The
imports sit inside the functions so that the UI's shared modules import no game at load time.
"""

from __future__ import annotations

from typing import Any

GAMES = ("krypkasino", "kungsholmskille")
DEFAULT_PLAYERS = {"krypkasino": 3, "kungsholmskille": 4}
DEFAULT_OPPONENT = {"krypkasino": "expert", "kungsholmskille": "random"}  # play and serve, no --agents


def _module(game: str) -> Any:
    """The adapter module of ``game``; ValueError naming the known games."""
    if game == "krypkasino":
        from krypenv.ui import krypkasino

        return krypkasino
    if game == "kungsholmskille":
        from krypenv.ui import kungsholmskille

        return kungsholmskille
    raise ValueError(f"unknown game {game!r}; known games: {', '.join(GAMES)}")


def adapter(game: str, players: int, seed: int | None, options: dict[str, Any]) -> Any:
    """A new adapter of ``game`` for ``players`` seats, decks from ``seed``, rules ``options``."""
    return _module(game).Adapter(players, seed, options)


def replay_frames(obj: dict[str, Any]) -> dict[str, Any]:
    """The replay of one record (already checked legal): its frames, every hand visible (see krypenv.ui.replay)."""
    return _module(obj["game"]).replay_frames(obj)
