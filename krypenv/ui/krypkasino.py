"""Krypkasino at the UI's table: moves listed once per (card, capture), table talk, seat states, replay frames.

The adapter runs one deal at a time in a one-env :class:`krypenv.krypkasino.batch.KrypkasinoBatch` whose
seats are all external, so agents act through :meth:`KrypkasinoBatch.decisions` exactly as in the
environments and in ``krypenv eval`` (a card with several captures is the same agent's
capture choice in the ``Discrete(105)`` protocol).  The person never sees that protocol: the
legal moves are the engine's own (card, capture) pairs (``DealBatch.legal_moves``), each listed
once (``8H takes 6C 2D``, ``3D creeps``), and the chosen one is applied with the engine's move
API (``DealBatch.step_checked``).  Deal k of a match is dealt by seat ``P − 1 + k`` (K5), from
decks drawn from the session's seed.

Typed short forms (case-insensitive): the card, then the table cards it takes, e.g. ``8h 6c
2d``; a card alone when it has one legal move (``3d``); ``8h creeps``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from krypenv.agent_api import check_actions
from krypenv.krypkasino.actions import ILLEGAL, MOVED, actions_for_move
from krypenv.krypkasino.batch import KrypkasinoBatch
from krypenv.krypkasino.cards import N_CODES, POINTS, card_code, card_name, names_from_counts
from krypenv.krypkasino.config import EXTERNAL, EnvConfig
from krypenv.krypkasino.engine import DealBatch
from krypenv.krypkasino.engine.captures import hand_sweep_values
from krypenv.krypkasino.records import describe_move, parse_record, record_from_deals
from krypenv.krypkasino.render import announcement
from krypenv.krypkasino.rules import (
    PRESET_PLAYERS,
    PRESETS,
    SET_ASIDE_VARIANTS,
    TWO_PLAYER_DEALS,
    VARIANT_DEFAULTS,
    Rules,
    alternating_teams,
    parse_teams,
)
from krypenv.rng import seed_state
from krypenv.ui.moves import Choice, InputError, OneDealAdapter, softmax_masked
from krypenv.ui.terminal_text import BOLD, Style, seat_rows

GAME = "krypkasino"
RULE_OPTIONS = ("teams", "two_player_deal", "set_aside", "last_capture_point", "preset")
HELP = """Krypkasino moves: type the number of a move, or the card you play and the table cards it takes:
  8h 6c 2d      play 8H, taking 6C and 2D        3d       play 3D (when it has one legal move)
  8h creeps     play 8H without taking anything  (a card that can take must take, K12)
Cards are rank then suit: A 2 .. 10 J Q K and C D H S (10d, qs).  The lowest score wins; a sweep
(tabbe, K13-K14) costs the player before the sweeper 5 and gives the sweeper 5."""


def _names(counts: np.ndarray) -> list[str]:
    return names_from_counts(counts)


def _team_layouts(players: int) -> list[list[list[int]]]:
    """Every K18 team seating of ``players`` seats (none for 2, 3 or 5 players), as seat lists."""
    out = []
    for k in (2, 3):
        try:
            out.append([list(team) for team in alternating_teams(k, players)])
        except ValueError:
            continue
    return out


def _preset_label(name: str) -> str:
    """``tiny (8 cards, 2 players)``: a preset's name, deck size and player counts (K22)."""
    allowed = PRESET_PLAYERS[name]
    size = Rules.from_preset(name, players=allowed[0]).deck_size
    who = f"{allowed[0]}-{allowed[-1]}" if len(allowed) > 1 else str(allowed[0])
    return f"{name} ({size} cards, {who} players)"


def rules_meta() -> dict[str, Any]:
    """Krypkasino's rules options for the web page: rule id, default, choices, the players and presets they fit."""
    default = Rules()
    return {
        "teams": {"rule": "K18", "label": "Teams", "default": None, "players": [4, 6],
                  "choices": {str(p): t for p in range(2, 7) if (t := _team_layouts(p))},
                  "help": "seats alternate so that neighbours are opponents; a team's score is the sum of its "
                          "seats' scores"},
        "two_player_deal": {"rule": "K6", "label": "2-player deal", "default": default.two_player_deal,
                            "players": [2], "presets": ["standard"], "choices": list(TWO_PLAYER_DEALS),
                            "labels": {"6+4": "6+4 (hand 6, table 4)", "5+6": "5+6 (hand 5, table 6)"},
                            "help": "the initial deal of a 2-player game: 6 cards in hand and 4 on the table, or "
                                    "5 and 6; 12 rounds either way"},
        "set_aside": {"rule": "K8", "label": "Set aside", "default": default.set_aside, "players": [2, 3, 4, 5, 6],
                      "choices": list(SET_ASIDE_VARIANTS),
                      "labels": {"court": "court cards (J Q K)", "spades": "spades"},
                      "help": "what leaves the table after the deal and at each round's end, for the last capturer"},
        "preset": {"rule": "K22", "label": "Deck and deal", "default": "standard", "players": [2, 3, 4, 5, 6],
                   "choices": list(PRESETS), "labels": {name: _preset_label(name) for name in PRESETS},
                   "help": "the standard game, or a smaller deck and deal (tiny: 2 players; small: 2 or 3 players)"},
        "last_capture_point": {"rule": "K17", "label": "Last capture +1 point", "default": default.last_capture_point,
                               "players": [2, 3, 4, 5, 6], "choices": [False, True],
                               "help": "the last capturer gets 1 extra point: a deal sums to 43 instead of 42"},
    }


def options_from_json(obj: Any, players: int) -> dict[str, Any]:
    """A request's ``rules`` object as the adapter's options (record rules keys); ValueError naming what is wrong.

    Strict: an object whose keys are among :data:`RULE_OPTIONS`, each null (the default) or of
    its type: ``teams`` a number of teams (2 or 3) or a list of seat lists (K18),
    ``two_player_deal`` and ``set_aside`` strings (K6, K8), ``last_capture_point`` true or false
    (K17), ``preset`` a preset's name (K22); then the whole set is checked by :class:`Rules` for
    ``players`` seats.
    """
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        why = f"rules must be an object with keys among {', '.join(RULE_OPTIONS)}, got {type(obj).__name__}"
        raise ValueError(why)  # a ValueError is the API's 400, as in Rules' own checks
    unknown = sorted(set(obj) - set(RULE_OPTIONS))
    if unknown:
        where = " (players is a field of the request itself)" if "players" in unknown else ""
        raise ValueError(f"unknown Krypkasino rules key(s) {unknown}{where}; keys are {', '.join(RULE_OPTIONS)}")
    opts: dict[str, Any] = {}
    teams = obj.get("teams")
    if isinstance(teams, bool) or not (teams is None or isinstance(teams, (int, list))):
        raise ValueError(f"rules.teams must be null, a number of teams (2 or 3) or a list of seat lists such as "
                         f"[[0, 2], [1, 3]] (K18), got {type(teams).__name__} {teams!r}")
    if isinstance(teams, int):
        try:
            teams = [list(team) for team in alternating_teams(teams, players)]
        except ValueError as exc:  # names the layouts K18 allows for this many players
            raise ValueError(f"rules.teams: {exc}") from None
    elif isinstance(teams, list) and not all(
            isinstance(t, list) and all(isinstance(s, int) and not isinstance(s, bool) for s in t) for t in teams):
        raise ValueError(f"rules.teams must be a list of seat lists of integers such as [[0, 2], [1, 3]] (K18), "
                         f"got {teams!r}")
    if teams is not None:
        opts["teams"] = teams
    for key, choices in (("two_player_deal", TWO_PLAYER_DEALS), ("set_aside", SET_ASIDE_VARIANTS),
                         ("preset", tuple(PRESETS))):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"rules.{key} must be a string, one of {', '.join(choices)}; "
                             f"got {type(value).__name__} {value!r}")
        if value is not None:
            opts[key] = value
    lcp = obj.get("last_capture_point")
    if lcp is not None and not isinstance(lcp, bool):
        raise ValueError(f"rules.last_capture_point must be true or false (K17), got {type(lcp).__name__} {lcp!r}")
    if lcp is not None:
        opts["last_capture_point"] = lcp
    try:
        rules = rules_of(players, opts)
    except ValueError as exc:
        raise ValueError(f"rules: {exc}") from None
    if rules.teams is not None:
        opts["teams"] = [list(team) for team in rules.teams]
    return opts


def trained_preset(meta: dict[str, Any], players: int) -> str:
    """The preset (K22) of a checkpoint's metadata: its deck and deal keys (K20, K21; absent: standard), or custom."""
    return Rules.from_dict({"players": players, **{k: meta[k] for k in VARIANT_DEFAULTS if k in meta}}).preset_name


def rules_of(players: int, options: dict[str, Any]) -> Rules:
    """The :class:`Rules` of adapter options (record rules keys and ``preset``, K22), ValueError naming the field."""
    rest = {k: v for k, v in options.items() if k != "preset"}
    return Rules.from_preset(options.get("preset", "standard"), players=players, **rest)


class Adapter(OneDealAdapter):
    """One Krypkasino deal at a time for a :class:`krypenv.ui.session.Session` (see the module docstring)."""

    name = GAME
    record_of = staticmethod(record_from_deals)

    def __init__(self, players: int, seed: int | None, options: dict[str, Any]) -> None:
        """A match's adapter: rules from ``players`` and ``options`` (record rules keys), streams from ``seed``."""
        unknown = sorted(set(options) - set(RULE_OPTIONS) - set(VARIANT_DEFAULTS))  # a record's deck keys (K20, K21)
        if unknown:
            raise ValueError(f"unknown Krypkasino rules option(s) {unknown}; options are {', '.join(RULE_OPTIONS)}")
        if isinstance(options.get("teams"), str):  # command-line text (krypenv play --teams): parsed as eval does
            options = {**options, "teams": parse_teams(options["teams"], players)}
        self.rules = rules_of(players, {k: v for k, v in options.items() if v is not None})
        self.players = players
        cfg = EnvConfig.from_rules(self.rules, deals=1)
        self.core = KrypkasinoBatch(cfg, 1, seat=0, kinds=[EXTERNAL] * players)
        decks, streams = np.random.SeedSequence(seed).spawn(2)
        self.deck_rng = np.random.default_rng(decks)
        self.core.seed([int(streams.generate_state(1)[0])])
        self._totals = np.zeros(players, np.int64)

    @property
    def deals(self) -> DealBatch:
        """The engine's view of the one deal."""
        return self.core.deals

    # ------------------------------------------------------------------ dealing and turns
    def start_deal(self, k: int) -> list[str]:
        """Deal deal ``k`` of the match, dealt by seat P−1+k (K5)."""
        d = DealBatch(self.rules, 1)
        d.reset(rng=self.deck_rng, dealers=(self.players - 1 + k) % self.players)
        self.core.load(d)
        talk = [f"deal {k + 1}: seat {int(d.dealer[0])} deals; table {' '.join(_names(d.table[0])) or '-'}"]
        call = announcement(d.table[0])
        return talk + ([call] if call else [])

    @property
    def to_act(self) -> int:
        """The seat to play, −1 when the deal is finished."""
        return -1 if self.done else int(self.deals.turn[0])

    # ------------------------------------------------------------------ moves
    def legal(self) -> list[Choice]:
        """Every legal (card, capture) move of the seat to play, once each, cards in code order."""
        table = self.deals.table[0]
        out = []
        for card, cap in self.deals.legal_moves(0):
            label = describe_move(card, cap)
            if cap.any() and np.array_equal(cap, table):
                label += " (sweeps the table: TABBE)"
            taken = _names(cap)
            out.append(Choice(label, " ".join([card_name(card)] + taken).lower(), (card, cap), card_name(card), taken))
        return out

    def parse(self, text: str, legal: list[Choice]) -> Choice:
        """A typed short form (``8h 6c 2d``, ``3d``, ``8h creeps``) as one of ``legal``; InputError otherwise."""
        words = text.replace(",", " ").split()
        if not words:
            raise InputError("type a move's number or its card and captures, e.g. 8h 6c 2d (? for help)")
        try:
            codes = [card_code(w) for w in words if w.lower() not in ("creeps", "creep", "-")]
        except ValueError as exc:
            raise InputError(f"{exc} (? for help)") from None
        creeps = len(codes) < len(words)
        if not codes:
            raise InputError("name the card you play first, e.g. 8h creeps")
        card, cap = codes[0], np.bincount(np.array(codes[1:], np.int64), minlength=N_CODES)
        mine = [c for c in legal if c.move[0] == card]
        if not mine:
            hand = self.deals.hands[0, self.to_act]
            if not hand[card]:
                raise InputError(f"{card_name(card)} is not in your hand; you hold {' '.join(_names(hand))}")
            raise InputError(f"{card_name(card)} may not be played: a sweep is forced (K13); "
                             f"legal: {' | '.join(c.label for c in legal)}")
        if len(codes) == 1 and not creeps:
            if len(mine) == 1:
                return mine[0]
            raise InputError(f"{card_name(card)} can take in {len(mine)} ways; type one of: "
                             f"{' | '.join(c.key for c in mine)}")
        for c in mine:
            if np.array_equal(c.move[1].astype(np.int64), cap):
                return c
        wanted = f"take {' '.join(card_name(x) for x in codes[1:])}" if codes[1:] else "creep"
        raise InputError(f"{card_name(card)} cannot {wanted} here; its legal moves: "
                         f"{' | '.join(c.label for c in mine)}")

    def play(self, choice: Choice) -> tuple[str, list[str]]:
        """Apply a (card, capture) move of the seat to play with the engine's move API."""
        seat, before = self.to_act, self._before()
        card, cap = choice.move
        self.deals.step_checked(np.array([card]), np.asarray(cap, np.int8)[None, :])
        return self._after(seat, before)

    def _agent_move(self, core: KrypkasinoBatch, agent: Any) -> None:
        """Let ``agent`` play one whole move in ``core`` (a card, then its capture choice if it has several)."""
        seat = int(core.deals.turn[0])
        while True:
            batch = core.decisions(np.zeros(1, np.int64), np.array([seat], np.int64))
            action = int(check_actions(agent.name, batch, agent.act(batch))[0])
            status = core.act(0, action)
            if status == ILLEGAL:  # check_actions passed, so the engine disagrees with the mask: a bug
                raise ValueError(f"agent {agent.name!r}: action {action} was refused by the engine")
            if status == MOVED:
                return

    def agent_play(self, agent: Any) -> tuple[str, list[str]]:
        """Let ``agent`` make the move of the seat to play."""
        seat, before = self.to_act, self._before()
        self._agent_move(self.core, agent)
        return self._after(seat, before)

    def agent_choice(self, agent: Any, stream: int) -> Choice:
        """The move ``agent`` would make now, found on a copy of the game with uniforms from ``stream``."""
        twin = copy.deepcopy(self.core)
        twin.seed([int(seed_state(stream))])
        n = int(twin.deals.n_moves[0])
        self._agent_move(twin, agent)
        card, cap = int(twin.deals.hist_card[0, n]), twin.deals.move_capture(0, n)
        return next(c for c in self.legal() if c.move[0] == card and np.array_equal(c.move[1], cap))

    def move_probabilities(self, agent: Any) -> list[float] | None:
        """Each legal move's probability under a policy with ``logits`` (the product over its actions), else None."""
        if not hasattr(agent, "logits"):
            return None
        seat = self.to_act
        forced = bool(hand_sweep_values(self.deals.hands[0, seat], self.deals.table[0]))
        out = []
        for c in self.legal():
            twin, p = copy.deepcopy(self.core), 1.0
            for a in actions_for_move(self.deals.table[0], c.move[0], c.move[1], forced):
                batch = twin.decisions(np.zeros(1, np.int64), np.array([seat], np.int64))
                x = batch.obs
                if getattr(agent, "features", None) is not None:
                    from krypenv.agents.krypkasino.move_features import action_features
                    from krypenv.agents.krypkasino.move_policy import with_features

                    x = with_features(batch.obs, action_features(batch.core, batch.envs))
                p *= float(softmax_masked(agent.logits(x, batch.mask)[0])[a])
                twin.act(0, a)
            out.append(p)
        return out

    def _before(self) -> tuple[np.ndarray, int]:
        return self.deals.tabbes[0].astype(np.int64).copy(), int(self.deals.round[0])

    def _after(self, seat: int, before: tuple[np.ndarray, int]) -> tuple[str, list[str]]:
        """The move just played by ``seat`` in words, and the table talk after it (K7, K13–K15)."""
        d, P = self.deals, self.players
        m = int(d.n_moves[0]) - 1
        text = describe_move(int(d.hist_card[0, m]), d.move_capture(0, m))
        talk = []
        gained = int(d.tabbes[0, seat]) - int(before[0][seat])
        if gained > 0:
            call = "DUBBELTABBE" if gained == 2 else "TABBE"
            talk.append(f"{call}! +{5 * gained} for seat {seat}, −{5 * gained} for seat {(seat - 1) % P}")
        if d.done[0]:
            talk.append(f"seat {int(d.taker[0])} took last and takes the rest of the table and the set-aside pile "
                        f"(K15)")
        else:
            if int(d.round[0]) != before[1]:
                talk.append(f"round {int(d.round[0]) + 1}" + (": sistan!" if d.pos[0] >= d.deck_len[0] else ""))
            call = announcement(d.table[0])
            if call:
                talk.append(call)
        return text, talk

    # ------------------------------------------------------------------ what a seat sees
    def state(self, seat: int | None) -> dict[str, Any]:
        """The deal as ``seat`` sees it (its own hand only), or every hand for ``seat=None`` (replays)."""
        d, P = self.deals, self.players
        hands = [_names(d.hands[0, s]) for s in range(P)]
        out: dict[str, Any] = {
            "table": _names(d.table[0]), "aside": _names(d.aside[0]),
            "hand": hands[seat] if seat is not None else None,
            "hands": hands if seat is None else None,
            "hand_sizes": [int(x) for x in d.hands[0].sum(axis=1)],
            "pile_sizes": [int(x) for x in d.piles[0].sum(axis=1)],
            "scores": [int(x) for x in d.scores_of(0)],
            "card_points": [int(x) for x in d.piles[0].astype(np.int64) @ POINTS],
            "tabbes": [int(x) for x in d.tabbes[0]], "dealer": int(d.dealer[0]), "turn": self.to_act,
            "round": int(d.round[0]) + 1, "rounds": self.rules.rounds, "deck_left": int(d.deck_len[0]) - int(d.pos[0]),
            "sistan": bool(d.pos[0] >= d.deck_len[0]), "call": None if self.done else announcement(d.table[0]),
            "done": self.done, "rules": self.rules.to_dict(), "score_name": "score",
        }
        out["teams"] = out["rules"]["teams"]  # K18 seat lists, or None: the page marks partners and team totals
        return out

    def deal_scores(self) -> list[int]:
        """Each seat's deal score (K16, K17)."""
        return [int(x) for x in self.deals.scores_of(0)]

    def finish_deal(self) -> list[str]:
        """Add the deal's scores to the match totals; the talk of the deal's end."""
        scores = self.deal_scores()
        self._totals += scores
        sides = "".join(f"; team {'+'.join(map(str, t))} {sum(scores[s] for s in t)}" for t in self.rules.teams or ())
        return ["end of the deal: scores " + ", ".join(f"seat {s} {v}" for s, v in enumerate(scores))
                + sides + " (the lowest wins)"]

    def totals(self) -> list[int]:
        """Match scores per seat so far (finished deals)."""
        return [int(x) for x in self._totals]

    def help_text(self) -> str:
        """How Krypkasino moves are typed."""
        return HELP

    @classmethod
    def from_record(cls, obj: dict[str, Any]) -> Adapter:
        """An adapter dealt from a record's deck and dealer, before its first move."""
        parsed = parse_record(obj)
        r = parsed.rules
        self = cls(r.players, 0, {k: getattr(r, k) for k in (*RULE_OPTIONS[:-1], *VARIANT_DEFAULTS)})
        d = DealBatch(r, 1)
        d.reset(decks=parsed.deck[None, :], dealers=parsed.dealer)
        self.core.load(d)
        self._parsed = parsed
        return self


def replay_frames(obj: dict[str, Any]) -> dict[str, Any]:
    """Every position of a legal record, every hand visible, and each move with its table talk."""
    game = Adapter.from_record(obj)
    frames, moves = [game.state(None)], []
    for card, cap in game._parsed.moves:
        seat = game.to_act
        choice = Choice(describe_move(card, cap), "", (card, cap), card_name(card), _names(cap))
        text, talk = game.play(choice)
        moves.append({"seat": seat, "text": text, "talk": talk, "card": choice.card, "capture": choice.capture})
        frames.append(game.state(None))
    return {"game": GAME, "players": game.players, "frames": frames, "moves": moves,
            "result": obj.get("result"), "final": game.deal_scores() if game.done else None}



# --------------------------------------------------------------------------- krypenv play in the terminal
RESULT_NAME = "score (the lowest wins)"  # what a deal's result is, in the match's closing lines
TOTAL_NAME = "total"


def red_card(name: str) -> bool:
    """Hearts and diamonds print red on a terminal."""
    return name[-1:] in ("H", "D")


def terminal_state(st: dict[str, Any], style: Style) -> list[str]:
    """The deal's lines above the person's hand: the deal, the table, the set-aside pile, every seat's counts."""
    sistan = " (sistan)" if st["sistan"] else ""
    preset = Rules.from_dict(st["rules"]).preset_name
    deck = "" if preset == "standard" else f" ({preset} deck)"
    lines = [style.wrap(f"Krypkasino{deck}, deal {st['deal_no'] + 1}/{st['deals']}, round {st['round']}/{st['rounds']}"
                        f"{sistan}, deck {st['deck_left']} cards, dealer seat {st['dealer']}", BOLD),
             f"table:      {style.cards(st['table'], red_card)}" + (f"    ({st['call']})" if st["call"] else ""),
             f"set aside:  {style.cards(st['aside'], red_card)}"]
    return lines + seat_rows(st, [("hand", st["hand_sizes"]), ("pile", st["pile_sizes"]),
                                  ("points", st["card_points"]), ("tabbes", st["tabbes"]), ("score", st["scores"]),
                                  ("match", [t + s for t, s in zip(st["totals"], st["scores"])])])


def terminal_end(st: dict[str, Any], names: list[str], totals: list[int]) -> list[str]:
    """The match's last lines: the team totals (K18: a team scores the sum of its seats) and the winner."""
    lines = []
    teams, sides = st["teams"], st["team_totals"]
    if teams:
        lines.append("  teams: " + ", ".join(" + ".join(names[s] for s in team) + f" {v}"
                                             for team, v in zip(teams, sides)))
    else:
        teams, sides = [(s,) for s in range(len(totals))], totals
    best = min(sides)
    lines.append("  winner: " + " and ".join(" + ".join(names[s] for s in team)
                                            for team, v in zip(teams, sides) if v == best))
    return lines
