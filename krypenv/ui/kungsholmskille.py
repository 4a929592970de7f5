"""Kungsholmskille at the UI's table: calls, exchanges and tricks with their table talk, money and the pot.

The adapter plays one deal at a time on a one-deal :class:`krypenv.kungsholmskille.engine.DealBatch`
and keeps the match's money itself (KILLE.md L2, L3, L12–L18): everybody puts 2 into the first
pot; deal k is dealt by seat ``P − 1 + k`` with the pot the previous deal left (``pot_next``),
each seat paying its ``antes_next`` into it as the deal starts.  Agents receive exactly the
observations and masks of the environments (:func:`krypenv.kungsholmskille.observation.encode_into`)
in a :class:`krypenv.agent_api.DecisionBatch` whose source is this adapter (uniforms from the
session's seed).  Moves are the L17 strings (``bud``, ``knacka``, ``discard:7,gok``,
``play:gok``); labels read ``discard 7 and gok``.  Typed short forms: the L17 string, the
label, or just the ranks (``gok`` plays it in a trick; ``7 gok`` discards them in the exchange).

Another seat's exchange shows only how many cards it changed (L8: discards stay face down);
the cards shown at a showdown (L14) are public.

Rules options (``--preset``, the web page's "Preset", a request's ``rules``): ``preset``
(``standard`` or ``small``, KILLE.md L22) and the rule keys ``ranks`` (L20) and ``max_deals``
(L21).  With a pot bound the adapter numbers the deals of each pot; a budrunda in a pot's
last deal settles it (L21) and the next deal opens a new pot.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np

from krypenv.agent_api import DecisionBatch, check_actions
from krypenv.kungsholmskille.actions import (
    DISCARD1,
    KNACKA,
    MAX_LEGAL,
    N_ACTIONS,
    PLAY,
    SHOW,
    STAND,
    action_name,
    parse_move,
)
from krypenv.kungsholmskille.cards import RANKS, names_from_counts
from krypenv.kungsholmskille.engine import (
    EXCHANGE,
    FIRST_CALL,
    FOLDING,
    PHASE_NAMES,
    SECOND_CALL,
    SHOWDOWN,
    TRICKS,
    DealBatch,
    kernels,
)
from krypenv.kungsholmskille.observation import OBS_DTYPE, encode_into, mask_into, obs_size
from krypenv.kungsholmskille.records import describe_result, parse_record, record_from_deals
from krypenv.kungsholmskille.rules import PRESETS, RULE_KEYS, Rules
from krypenv.rng import k_uniforms, seed_state
from krypenv.ui.moves import Choice, InputError, OneDealAdapter, softmax_masked
from krypenv.ui.terminal_text import BOLD, Style, never_red, seat_rows

GAME = "kungsholmskille"
WORDS = {"bud": "bud", "knacka": "knacka (knock)", "fold": "fold", "stay": "stay", "stand": "stand (keep your hand)",
         "show": "show"}
HELP = """Kungsholmskille moves: type the number of a move, or its word or cards:
  bud, knacka, fold, stay, stand, show          the calls (L5, L6, L9, L11) and keeping your hand (L8)
  7 gok  (or discard:7,gok)                     exchange those cards in the exchange (L8)
  gok    (or play:gok)                          play that card to the trick (L10)
Ranks from low to high: blaren blompotta krans 1..12 vardshus kavall svin husar gok kille.
The lowest card after four tricks wins the pot; money is in kronor."""


RULE_OPTIONS = ("preset", *(k for k in RULE_KEYS if k != "players"))  # preset (L22), ranks (L20), max_deals (L21)


def rules_meta() -> dict[str, Any]:
    """The rules options the web page offers: the preset (L22); ``small`` fits 2–3 players."""
    return {"preset": {"rule": "L22", "label": "Preset", "default": "standard", "players": [2, 3],
                       "choices": list(PRESETS),
                       "labels": {"standard": "standard (42 cards)",
                                  "small": "small (22 cards, at most 3 deals a pot)"},
                       "help": "small: the lowest 11 ranks twice (L20), and a pot still in after its third deal is "
                               "shared out (L21)"}}


def options_from_json(obj: Any, players: int) -> dict[str, Any]:
    """A request's ``rules`` object as the adapter's options; ValueError naming what is wrong (null: standard)."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise ValueError(f"rules must be an object with keys among {', '.join(RULE_OPTIONS)}, got "
                         f"{type(obj).__name__} {json.dumps(obj)[:80]}")
    unknown = sorted(set(obj) - set(RULE_OPTIONS))
    if unknown:
        raise ValueError(f"unknown {GAME} rules key(s) {unknown}; keys are {', '.join(RULE_OPTIONS)}")
    opts = {k: v for k, v in obj.items() if v is not None}
    rules_of(players, opts)  # ValueError naming preset, ranks or max_deals
    return opts


def trained_preset(meta: dict[str, Any], players: int) -> str:
    """The preset (L22) of a checkpoint's metadata: its ``rules`` keys (absent: standard), or custom."""
    return Rules.from_dict({"players": players, **(meta.get("rules") or {})}).preset_name


def rules_of(players: int, options: dict[str, Any]) -> Rules:
    """The rules of a match: ``options`` (``preset``, ``ranks``, ``max_deals``) for ``players`` seats (L20–L22)."""
    unknown = sorted(set(options) - set(RULE_OPTIONS))
    if unknown:
        raise ValueError(f"{GAME} rules options are {', '.join(RULE_OPTIONS)}, got {unknown}")
    keys = {k: v for k, v in options.items() if k != "preset"}
    return Rules.from_preset(options.get("preset", "standard"), players=players, **keys)


def label(a: int) -> str:
    """A move in words: ``knacka (knock)``, ``discard 7 and gok``, ``play gok``."""
    name = action_name(a)
    if name in WORDS:
        return WORDS[name]
    kind, _, arg = name.partition(":")
    return f"{kind} {' and '.join(arg.split(','))}"


class Adapter(OneDealAdapter):
    """One Kungsholmskille deal at a time for a :class:`krypenv.ui.session.Session`; also the agents' DecisionSource."""

    name = GAME
    record_of = staticmethod(record_from_deals)
    game = GAME  # what a checkpoint's table check reads (krypenv.agents.checkpoint.game_of)

    def __init__(self, players: int, seed: int | None, options: dict[str, Any]) -> None:
        """A match's adapter for ``players`` seats with rules ``options`` (preset, ranks, max_deals: L20–L22), streams
        from ``seed``."""
        self.rules = rules_of(players, options)
        self.players = players
        self.deals = DealBatch(self.rules, 1)
        decks, streams = np.random.SeedSequence(seed).spawn(2)
        self.deck_rng = np.random.default_rng(decks)
        self.rng = np.array([seed_state(int(streams.generate_state(1)[0]))], np.uint64)
        self.money = np.full(players, -2, np.int64)  # L3: everybody puts 2 into the first pot
        self.pot_next = 2 * players
        self.antes_next = np.zeros(players, np.int64)
        self.deal_no = 0
        self.pot_deal = 0  # the deal's number within its pot (L21)

    # ------------------------------------------------------------------ DecisionSource
    @property
    def cash(self) -> np.ndarray:
        """The deal's money rows, as the environments' core names them."""
        return self.deals.cash

    def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
        """(len(idx), k) uniforms from the session's agent stream."""
        out = np.empty((len(idx), k), np.float64)
        k_uniforms(self.rng, np.zeros(len(idx), np.int64), out)
        return out

    def seat_view(self, i: int, seat: int) -> Any:
        """Not offered here: an agent that needs a structured Kungsholmskille view cannot play in the UI yet."""
        raise ValueError("this agent asks for a Kungsholmskille seat view, which this checkout of the UI does not "
                         "build; agents that act on observations and masks (random, ppo) play")

    def action_name(self, i: int, action: int) -> str:
        """An action as its L17 string."""
        return action_name(action) if 0 <= action < N_ACTIONS else f"action {action}"

    def decisions(self, seat: int) -> DecisionBatch:
        """The decision of ``seat`` as the environments encode it."""
        obs = np.empty((1, obs_size(self.players)), OBS_DTYPE)
        mask = np.empty((1, N_ACTIONS), np.int8)
        row, cr = self.deals.state[0], self.deals.cash[0]
        encode_into(row, cr, self.money, self.deal_no, 0, False, self.players, seat, obs[0])
        mask_into(row, seat, False, mask[0], np.empty(MAX_LEGAL + 5, np.int64))
        return DecisionBatch(obs, mask, np.array([seat], np.int64), self, np.zeros(1, np.int64))

    # ------------------------------------------------------------------ dealing and turns
    def start_deal(self, k: int) -> list[str]:
        """Deal deal ``k``: the dealer passes left (L2), the antes for it go into the pot (L12, L14, L15)."""
        self.deal_no = k
        self.money -= self.antes_next
        dealer = (self.players - 1 + k) % self.players
        if self.rules.max_deals is not None:
            self.deals.reset(rng=self.deck_rng, dealers=dealer, pots=self.pot_next, deals=self.pot_deal)
        else:  # the standard game: the same call, so the same decks, as ever
            self.deals.reset(rng=self.deck_rng, dealers=dealer, pots=self.pot_next)
        paid = f", antes {', '.join(str(int(x)) for x in self.antes_next)}" if k else " (everybody put in 2, L3)"
        return [(f"deal {k + 1}: seat {dealer} deals, seat {int(self.deals.forehand[0])} is forehand; "
                 f"pot {int(self.deals.pot[0])}{paid}")]

    @property
    def to_act(self) -> int:
        """The seat to act, −1 when the deal is finished."""
        return -1 if self.done else int(self.deals.to_act[0])

    # ------------------------------------------------------------------ moves
    def legal(self) -> list[Choice]:
        """The legal moves of the seat to act, in action-index order."""
        out = []
        for a in self.deals.legal_actions(0):
            name = action_name(a)
            kind, _, arg = name.partition(":")
            ranks = arg.split(",") if arg else []
            out.append(Choice(label(a), name, a, ranks[0] if kind == "play" else None,
                              ranks if kind == "discard" else []))
        return out

    def parse(self, text: str, legal: list[Choice]) -> Choice:
        """A typed move (L17 string, label, or ranks) as one of ``legal``; InputError saying why not."""
        words = text.lower().replace(",", " ").replace(":", " ").split()
        if words and words[-1] in ("(knock)",):
            words = words[:-1]
        if words[:1] == ["knock"]:
            words = ["knacka"]
        ranks = [w for w in words if w not in ("discard", "play", "and")]
        cands = [" ".join(words)]
        if ranks and all(r in RANKS for r in ranks):
            lo_hi = sorted(ranks, key=RANKS.index)
            cands += [f"play:{ranks[0]}"] if len(ranks) == 1 else []
            cands += [f"discard:{','.join(lo_hi)}"]
        for c in legal:
            if c.key in cands or c.label == text.strip().lower():
                return c
        bad = [r for r in ranks if r not in RANKS and r not in WORDS]
        if bad:
            raise InputError(f"unknown word or rank {bad[0]!r}; ranks are {', '.join(RANKS)} (? for help)")
        for key in cands:
            try:
                a = parse_move(key)
            except ValueError:
                continue
            why = self.deals.why_illegal(0, a)
            if why:
                raise InputError(f"{label(a)} is not legal now: {why}")
        raise InputError(f"{text.strip()!r} is not one of your moves: {', '.join(c.key for c in legal)}")

    def play(self, choice: Choice) -> tuple[str, list[str]]:
        """Apply a legal move of the seat to act (the person's: their own draw is shown to them)."""
        return self._apply(int(choice.move), private=True)

    def agent_play(self, agent: Any) -> tuple[str, list[str]]:
        """Let ``agent`` make the move of the seat to act."""
        batch = self.decisions(self.to_act)
        return self._apply(int(check_actions(agent.name, batch, agent.act(batch))[0]), private=False)

    def agent_choice(self, agent: Any, stream: int) -> Choice:
        """The move ``agent`` would make now with uniforms from ``stream`` (on a copy; nothing changes)."""
        twin = copy.deepcopy(self)
        twin.rng[0] = seed_state(stream)
        batch = twin.decisions(twin.to_act)
        a = int(check_actions(agent.name, batch, agent.act(batch))[0])
        return next(c for c in self.legal() if c.move == a)

    def move_probabilities(self, agent: Any) -> list[float] | None:
        """Each legal move's probability under a policy with ``logits``, else None."""
        if not hasattr(agent, "logits"):
            return None
        batch = self.decisions(self.to_act)
        p = softmax_masked(agent.logits(batch.obs, batch.mask)[0])
        return [float(p[c.move]) for c in self.legal()]

    def _apply(self, a: int, private: bool) -> tuple[str, list[str]]:
        """Play action ``a``; the move in words (the draw only if ``private``) and the table talk after it."""
        d, s, ph = self.deals, self.to_act, int(self.deals.phase[0])
        hand_before, fh, trick = d.hands[0, s].astype(np.int64).copy(), int(d.forehand[0]), int(d.trick[0])
        d.play_action(0, a)
        talk: list[str] = []
        if ph in (FIRST_CALL, SECOND_CALL):
            text = "knackar! (knocks)" if a == KNACKA else "bud"
        elif ph == FOLDING:
            text = "folds (L6)" if action_name(a) == "fold" else "stays"
        elif ph == EXCHANGE:
            n = 0 if a == STAND else (1 if a < DISCARD1 + len(RANKS) else 2)
            text = "stands" if n == 0 else f"exchanges {n} card{'s' * (n > 1)} (L8)"
            if private and n:
                gone = action_name(a).split(":")[1].split(",")
                kept = hand_before.copy()
                for x in gone:
                    kept[RANKS.index(x)] -= 1
                drawn = np.maximum(d.hands[0, s].astype(np.int64) - kept, 0)
                text = f"discards {' and '.join(gone)}, draws {' '.join(names_from_counts(drawn))}"
        elif ph == TRICKS:
            text = f"plays {RANKS[a - PLAY]}"
            if int(d.trick[0]) != trick:
                talk.append(f"seat {int(d.trick_winner[0, trick])} takes trick {trick + 1}")
        else:
            text = "shows!" if a == SHOW else "bud"
        if int(d.forehand[0]) != fh:
            talk.append(f"forehand moves to seat {int(d.forehand[0])} (L7)")
        if d.done[0]:
            res = d.result(0)
            talk.append(describe_result(res, int(d.pot[0])))
            if res["outcome"] == "showdown":
                talk.append("shown: " + ", ".join(f"seat {t} {RANKS[int(kernels.last_card(d.state[0], t))]}"
                                                  for t in range(self.players) if not d.folded[0, t]))
        return text, talk

    # ------------------------------------------------------------------ what a seat sees
    def state(self, seat: int | None) -> dict[str, Any]:
        """The deal as ``seat`` sees it (its own hand, public calls and tricks), or everything for ``seat=None``."""
        d, P = self.deals, self.players
        row = d.state[0]
        hands = [names_from_counts(d.hands[0, s]) for s in range(P)]
        showdown = bool(d.done[0]) and int(d.outcome[0]) == SHOWDOWN
        shown = [RANKS[int(kernels.last_card(row, s))] if showdown and not d.folded[0, s] else None for s in range(P)]
        tricks = []
        for t in range(4):
            cards = [None if x < 0 else RANKS[int(x)] for x in d.trick_cards[0, t]]
            if any(c is not None for c in cards):
                tricks.append({"cards": cards, "lead": int(d.trick_lead[0, t]),
                               "winner": int(d.trick_winner[0, t]) if t < int(d.trick[0]) else None})

        def word(v: int, one: int, yes: str, no: str) -> str | None:
            return None if v < 0 else (yes if v == one else no)

        calls = []
        for s in range(P):
            said = [word(int(d.call1[0, s]), KNACKA, "knacka", "bud"), word(int(d.fold_calls[0, s]), 2, "fold", "stay"),
                    None if d.exchanged[0, s] < 0 else f"changed {int(d.exchanged[0, s])}",
                    word(int(d.call2[0, s]), KNACKA, "knacka", "bud"),
                    word(int(d.show_calls[0, s]), SHOW, "show", "bud")]
            calls.append([x for x in said if x])
        return {
            "phase": PHASE_NAMES[int(d.phase[0])], "pot": int(d.pot[0]), "money": [int(x) for x in self.money],
            "hand": hands[seat] if seat is not None else None, "hands": hands if seat is None else None,
            "hand_sizes": [int(x) for x in d.hands[0].sum(axis=1)], "folded": [bool(x) for x in d.folded[0]],
            "calls": calls, "tricks": tricks, "shown": shown, "talon": len(d.talon(0)),
            "dealer": int(d.dealer[0]), "forehand": int(d.forehand[0]), "turn": self.to_act, "done": self.done,
            "result": d.result(0) if self.done else None, "rules": self.rules.to_dict(), "score_name": "money",
        }

    def deal_scores(self) -> list[int]:
        """Each seat's money from the deal's ending (L18)."""
        return [int(x) for x in self.deals.result(0)["money"]]

    def finish_deal(self) -> list[str]:
        """Book the deal's money; the next pot and its antes wait for the next deal (L18)."""
        res = self.deals.result(0)
        self.money += np.asarray(res["money"], np.int64)
        self.antes_next = np.asarray(res["antes_next"], np.int64)
        self.pot_next = int(res["pot_next"])
        self.pot_deal = 0 if self.deals.pot_settled[0] else self.pot_deal + 1  # L21: a new pot after it went out
        return [(f"end of the deal: {describe_result(res, int(self.deals.pot[0]))}; "
                 f"next pot {self.pot_next} if another deal follows")]

    def totals(self) -> list[int]:
        """Each seat's net money in the match so far (L3)."""
        return [int(x) for x in self.money]

    def help_text(self) -> str:
        """How Kungsholmskille moves are typed."""
        return HELP


def replay_frames(obj: dict[str, Any]) -> dict[str, Any]:
    """Every position of a legal record, every hand visible, and each move with its table talk."""
    parsed = parse_record(obj)
    variant = {k: v for k, v in parsed.rules.to_dict().items() if k != "players"}
    game = Adapter(parsed.rules.players, 0, variant)
    game.deals.reset(decks=parsed.deck[None, :], dealers=parsed.dealer, pots=parsed.pot, deals=parsed.deal)
    game.money[:] = 0
    frames, moves = [game.state(None)], []
    for a in parsed.moves:
        seat = game.to_act
        text, talk = game._apply(int(a), private=True)
        kind, _, arg = action_name(a).partition(":")
        moves.append({"seat": seat, "text": text, "talk": talk, "card": arg if kind == "play" else None,
                      "capture": arg.split(",") if kind == "discard" else []})
        frames.append(game.state(None))
    return {"game": GAME, "players": game.players, "frames": frames, "moves": moves, "result": obj.get("result"),
            "final": game.deal_scores() if game.done else None}


# --------------------------------------------------------------------------- krypenv play in the terminal
RESULT_NAME = "money won (kronor)"  # what a deal's result is, in the match's closing lines
TOTAL_NAME = "net money"
red_card = never_red  # ranks without suits: no card prints red


def terminal_state(st: dict[str, Any], style: Style) -> list[str]:
    """The deal's lines above the person's hand: the deal and pot, every seat's cards, money and calls, the tricks."""
    lines = [style.wrap(f"Kungsholmskille, deal {st['deal_no'] + 1}/{st['deals']}, {st['phase']}, pot "
                        f"{st['pot']}, talon {st['talon']}, dealer seat {st['dealer']}, forehand seat "
                        f"{st['forehand']}", BOLD)]
    said = [" ".join(c[-2:]) or "-" for c in st["calls"]]
    lines += seat_rows(st, [("cards", st["hand_sizes"]), ("money", st["money"])])
    lines = lines[:2] + [row + f"   {said[s]}" + ("  (folded)" if st["folded"][s] else "")
                         for s, row in enumerate(lines[2:])]
    for t, trick in enumerate(st["tricks"]):
        cards = ", ".join(f"seat {s} {c}" for s, c in enumerate(trick["cards"]) if c is not None)
        won = f" -> seat {trick['winner']}" if trick["winner"] is not None else ""
        lines.append(f"trick {t + 1}: {cards}{won}")
    return lines


def terminal_end(st: dict[str, Any], names: list[str], totals: list[int]) -> list[str]:
    """The match's last lines after the net money: none (the money says who won)."""
    return []
