"""A match in progress with a person at the table: the game-generic layer under ``krypenv play`` and ``krypenv serve``.

A :class:`Session` plays ``deals`` deals of one game on a one-deal engine (through the game's
adapter, the ``ui`` part of its declaration in :mod:`krypenv.games`).  One seat is the human's;
every other seat is an agent named by a spec string (``agents.load(spec, game=...)``: ``expert``, ``pimc:samples=16``,
``ppo:checkpoints/ppo-2p.zip``, ...), which acts through the shared
:class:`krypenv.agent_api.DecisionBatch` exactly as in the environments and in ``krypenv eval``.

* :meth:`Session.legal` lists the human's legal moves as :class:`Choice` objects: a readable
  label (Krypkasino ``8H takes 6C 2D``, one line per (card, capture) move, so nobody walks a
  capture protocol by hand; Kungsholmskille ``discard 7 and gok``), a short form to type
  (``8h 6c 2d``, ``discard:7,gok``) and the engine move.  :meth:`Session.parse` reads a
  number or a short form and raises :class:`InputError` with the reason otherwise.
* :meth:`Session.play` applies the human's move (the engine decides legality) and lets the
  agents play until the human must act again or the match is over; every move becomes an
  :class:`Event` with the table talk of the rule texts.
* :meth:`Session.state` is one seat's view as plain JSON: only what that seat may see, with the
  teams of a team game (``teams``: seat lists or None, Krypkasino K18) and their ``team_totals``.
* :meth:`Session.advance` plays the agents' moves (``max_moves`` at a time: the web server plays
  them one by one on its worker pool); ``moves`` counts every move made, the ``move_index`` a
  web move must name.
* Every deal becomes a game record (the game's ``record_from_deals``); :meth:`Session.records`
  lists them, the unfinished deal as a partial record, and :meth:`Session.save` writes them
  as JSON Lines, readable by ``krypenv replay`` (beside the file, then renamed over it); a save
  that fails at a deal's end is noted in ``record_error`` and the match goes on.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from krypenv import games
from krypenv.ui.moves import Choice, InputError

__all__ = ["Choice", "Event", "GameAdapter", "InputError", "Session", "default_record_path", "parse_specs"]

HUMAN = "human"


@dataclass
class Event:
    """One move made at the table: who, what, and the table talk that followed it."""

    deal: int
    seat: int
    text: str
    talk: list[str] = field(default_factory=list)
    view: dict[str, Any] | None = None  # the table as the person's seat saw it right after, for the page's animation

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the page."""
        return {"deal": self.deal, "seat": self.seat, "text": self.text, "talk": self.talk, "view": self.view}


class GameAdapter(Protocol):
    """What a game offers the session: one deal at a time on a one-deal engine (see krypkasino.py)."""

    name: str
    players: int
    rules: Any  # the game's rules of the match (players, preset_name, to_dict()): what agents must fit

    def start_deal(self, k: int) -> list[str]:
        """Deal the k-th deal of the match; the talk that goes with it."""
        ...

    @property
    def done(self) -> bool:
        """The current deal is finished."""
        ...

    @property
    def to_act(self) -> int:
        """The seat to act, −1 when the deal is finished."""
        ...

    def legal(self) -> list[Choice]:
        """The legal moves of the seat to act."""
        ...

    def parse(self, text: str, legal: list[Choice]) -> Choice:
        """A typed short form as one of ``legal``; InputError saying why not."""
        ...

    def play(self, choice: Choice) -> tuple[str, list[str]]:
        """Apply a legal move of the seat to act; (what it was, the talk after it)."""
        ...

    def agent_play(self, agent: Any) -> tuple[str, list[str]]:
        """Let ``agent`` make the whole move of the seat to act; (what it was, the talk after it)."""
        ...

    def agent_choice(self, agent: Any, stream: int) -> Choice:
        """The move ``agent`` would make now with uniforms from stream ``stream``, on a copy (nothing changes)."""
        ...

    def move_probabilities(self, agent: Any) -> list[float] | None:
        """The probability of every legal move under ``agent``'s policy if it has ``logits``, else None."""
        ...

    def state(self, seat: int | None) -> dict[str, Any]:
        """The JSON state of the deal as ``seat`` sees it (None: every hand, for replays)."""
        ...

    def record(self) -> dict[str, Any]:
        """The game record of the current deal (partial until it is finished)."""
        ...

    def deal_scores(self) -> list[int]:
        """Each seat's result of the finished deal: deal score (Krypkasino) or money won (Kungsholmskille)."""
        ...

    def finish_deal(self) -> list[str]:
        """Book the finished deal into the match totals; the talk of its end."""
        ...

    def totals(self) -> list[int]:
        """Match totals per seat so far (scores or net money)."""
        ...

    def help_text(self) -> str:
        """How moves are typed in this game, for ``?``."""
        ...


def parse_specs(specs: list[str], players: int, seat: int | None, agents_name: str = "--agents",
                seat_name: str = "--seat") -> tuple[list[str], int]:
    """Per-seat specs and the human's seat from ``--agents`` and ``--seat``; ValueError saying what is wrong.

    ``specs`` lists every seat in order with one ``human`` (``human,expert,expert``), or the
    opponents only (one spec for all of them, or one per other seat), the human at ``seat``
    (default 0).  Errors name the two inputs ``agents_name`` and ``seat_name`` (the web API's
    fields are ``agents`` and ``seat``).
    """
    specs = [s.strip() for s in specs if s.strip()]
    if not specs:
        raise ValueError(f"{agents_name} needs at least one agent spec, e.g. human,expert")
    humans = [i for i, s in enumerate(specs) if s == HUMAN]
    if len(humans) > 1:
        raise ValueError(f"{agents_name} names {len(humans)} humans; one person plays, the other seats are agents")
    if humans:
        if len(specs) != players:
            raise ValueError(f"{agents_name} {','.join(specs)} lists {len(specs)} seats for {players} players; "
                             f"name one spec per seat, or only the opponents")
        if seat is not None and seat != humans[0]:
            raise ValueError(f"{seat_name} {seat} disagrees with {agents_name}, where human sits at seat {humans[0]}")
        return specs, humans[0]
    seat = 0 if seat is None else seat
    if not 0 <= seat < players:
        raise ValueError(f"{seat_name} must be a seat 0..{players - 1}, got {seat}")
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise ValueError(f"{agents_name} lists {len(specs)} opponents for {players} players; name {players - 1} "
                         f"(or one for all of them)")
    return specs[:seat] + [HUMAN] + specs[seat:], seat


def default_record_path(game: str, seed: int | None) -> Path:
    """``games/<game>-<date>-<time>-s<seed>.jsonl`` under the working directory."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("games") / f"{game}-{stamp}-s{'none' if seed is None else seed}.jsonl"


class Session:
    """A match of ``deals`` deals between one person and agents (see the module docstring)."""

    def __init__(self, game: str, players: int, specs: list[str], seat: int | None = None, seed: int | None = None,
                 deals: int = 1, options: dict[str, Any] | None = None, record: str | Path | None = None,
                 advance: bool = True, loaded: dict[int, Any] | None = None) -> None:
        """Load the agents, deal the first deal and (with ``advance``) let the agents play up to the human's decision.

        ``loaded`` gives seats' agents already built (the server builds them from checked specs);
        the other seats' agents are loaded from ``specs``.
        """
        from krypenv import agents  # the UI is the top layer: agents load here, never below

        if not isinstance(deals, int) or deals < 1:
            raise ValueError(f"deals must be a positive integer, got {deals!r}")
        self.game_name = game
        self.seed = seed
        self.specs, self.human = parse_specs(specs, players, seat)
        self.agents: dict[int, Any] = {s: (loaded or {}).get(s) or agents.load(spec, game=game)
                                       for s, spec in enumerate(self.specs) if spec != HUMAN}
        self.game: GameAdapter = games.game(game).part("ui").Adapter(players, seed, options or {})
        self.players = players
        self.deals = deals
        self.deal_no = 0
        self.finished: list[dict[str, Any]] = []  # records of finished deals
        self.results: list[list[int]] = []  # per finished deal, each seat's result
        self.events: list[Event] = []
        self.record_path = Path(record) if record is not None else default_record_path(game, seed)
        self.names = [("you" if s == self.human else f"seat {s} ({spec})") for s, spec in enumerate(self.specs)]
        self.over = False
        # moves made in the match, every seat's: the move_index a move request must name (see the server)
        self.moves = 0
        self.record_error: str | None = None  # why the last save failed, if it did; the game goes on
        self._talk(-1, self.game.start_deal(0))
        if advance:
            self.advance()

    # ------------------------------------------------------------------ playing
    def _talk(self, seat: int, talk: list[str], text: str = "") -> None:
        if text or talk:
            self.events.append(Event(self.deal_no, seat, text, talk, self.game.state(self.human)))

    @property
    def to_act(self) -> int:
        """The seat to act, −1 when the match is over."""
        return -1 if self.over else self.game.to_act

    @property
    def human_to_act(self) -> bool:
        """True when the person must choose a move."""
        return not self.over and self.game.to_act == self.human

    def legal(self) -> list[Choice]:
        """The human's legal moves (empty when it is not their turn)."""
        return self.game.legal() if self.human_to_act else []

    def parse(self, text: str) -> Choice:
        """A typed move: its number in :meth:`legal` or its short form; InputError with the reason otherwise."""
        legal = self.legal()
        if not legal:
            raise InputError("it is not your turn" if not self.over else "the match is over")
        text = text.strip()
        if text.isdigit():
            n = int(text)
            if not 1 <= n <= len(legal):
                raise InputError(f"there is no move {n}: choose 1 to {len(legal)}")
            return legal[n - 1]
        return self.game.parse(text, legal)

    def play(self, choice: Choice | int | str, advance: bool = True) -> list[Event]:
        """Apply the human's move (a Choice, its 0-based index, or typed text), then (``advance``) the agents'; the
        new events."""
        legal = self.legal()
        if not legal:
            raise InputError("it is not your turn" if not self.over else "the match is over")
        if isinstance(choice, bool):
            raise InputError("a move is a number or a short form")
        if isinstance(choice, int):
            if not 0 <= choice < len(legal):
                raise InputError(f"there is no move {choice + 1}: choose 1 to {len(legal)}")
            choice = legal[choice]
        elif isinstance(choice, str):
            choice = self.parse(choice)
        elif not any(choice.key == c.key for c in legal):
            raise InputError(f"{choice.label} is not a legal move now")
        start = len(self.events)
        text, talk = self.game.play(choice)
        self.moves += 1
        self._talk(self.human, talk, f"{self.names[self.human]}: {text}")
        if advance:
            self.advance()
        return self.events[start:]

    @property
    def agents_to_act(self) -> bool:
        """True while agents have moves (or a deal's end) to play before the human acts or the match ends."""
        return not self.over and (self.game.done or self.game.to_act != self.human)

    def advance(self, max_moves: int | None = None) -> None:
        """Let the agents play (at most ``max_moves`` moves) until the human must act or the match is over."""
        made = 0
        while self.agents_to_act and (max_moves is None or made < max_moves):
            if self.game.done:
                self._end_deal()
                continue
            seat = self.game.to_act
            text, talk = self.game.agent_play(self.agents[seat])
            self.moves += 1
            made += 1
            self._talk(seat, talk, f"{self.names[seat]}: {text}")

    def _end_deal(self) -> None:
        self.finished.append(self.game.record())
        self.results.append(self.game.deal_scores())
        self._talk(-1, self.game.finish_deal())
        self.save_or_note()
        if self.deal_no + 1 >= self.deals:
            self.over = True
            return
        self.deal_no += 1
        self._talk(-1, self.game.start_deal(self.deal_no))

    # ------------------------------------------------------------------ what a seat sees
    def state(self, seat: int | None = None, events_from: int = 0) -> dict[str, Any]:
        """The JSON state as ``seat`` (default: the human) sees it, with the events from ``events_from`` on."""
        seat = self.human if seat is None else seat
        out = self.game.state(seat)
        legal = self.legal() if seat == self.human else []
        totals = self.game.totals()
        teams = out.setdefault("teams", None)  # seat lists of a team game (Krypkasino K18), else None
        out.update({
            "game": self.game_name, "players": self.players, "names": self.names, "specs": self.specs,
            "seat": seat, "human": self.human, "to_act": self.to_act, "your_turn": bool(legal),
            "deal_no": self.deal_no, "deals": self.deals, "over": self.over, "move_index": self.moves,
            "record_error": self.record_error,
            "legal": [c.to_json(i) for i, c in enumerate(legal)],
            "totals": totals, "results": self.results,
            "team_totals": None if teams is None else [sum(totals[s] for s in team) for team in teams],  # K18
            "events": [e.to_json() for e in self.events[events_from:]], "n_events": len(self.events),
        })
        return out

    # ------------------------------------------------------------------ records
    def records(self) -> list[dict[str, Any]]:
        """Every deal's record: the finished ones, then the unfinished deal as a partial record."""
        out = list(self.finished)
        if not self.over and not self.game.done:
            out.append(self.game.record())
        return out

    def finished_records(self) -> list[dict[str, Any]]:
        """The records of the finished deals only: what may be replayed while the match goes on (no hidden hands)."""
        return list(self.finished)

    def save(self) -> Path:
        """Write :meth:`records` to the record file as JSON Lines (creating its folder); its path.

        The file is written beside the record and then renamed over it, so a failed save never
        leaves half a file in place of the last good one; the OSError then says what was wrong.
        """
        tmp = self.record_path.with_name(self.record_path.name + ".part")
        try:
            self.record_path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(rec) + "\n" for rec in self.records())
            tmp.replace(self.record_path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            folder = next((p for p in self.record_path.parents if p.exists()), None)
            why = (f"{folder} is not a folder" if folder is not None and not folder.is_dir()
                   else exc.strerror or str(exc))
            raise OSError(f"the record could not be saved to {self.record_path}: {why}") from None
        self.record_error = None
        return self.record_path

    def save_or_note(self) -> Path | None:
        """:meth:`save`, or None with the reason in ``record_error`` (shown to the person): the match goes on."""
        try:
            return self.save()
        except OSError as exc:
            self.record_error = str(exc)
            return None
