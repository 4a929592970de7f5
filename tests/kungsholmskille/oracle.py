"""A slow, obvious reference deal of Kungsholmskille, written from KILLE.md alone.

The property tests compare the compiled engine with this oracle at every decision: the
legal moves (L5–L11, as L17 strings in action-index order) and the result (L12–L15, L18).
It shares no code with ``krypenv`` on purpose; keep it plain rather than fast.

    deal = OracleDeal(players=4, dealer=3, pot=8, deck=[...42 rank names...])
    while not deal.done:
        deal.play(deal.legal_moves()[0])
    deal.result()   # {"outcome", "winner", "shower", "penalty", "money", "antes_next", "pot_next"}
"""

from __future__ import annotations

from typing import Any

# L1: rank names from lowest (index 0) to highest (index 20)
RANKS = ["blaren", "blompotta", "krans"] + [str(k) for k in range(1, 13)] + [
    "vardshus", "kavall", "svin", "husar", "gok", "kille",
]
N = len(RANKS)


def move_order(move: str) -> int:
    """The action index of a move string: calls 0–5, discard:X 6+x, discard:X,Y 27+pair, play:X 258+x."""
    calls = ["bud", "knacka", "fold", "stay", "stand", "show"]
    if move in calls:
        return calls.index(move)
    kind, _, arg = move.partition(":")
    if kind == "play":
        return 258 + RANKS.index(arg)
    names = arg.split(",")
    if len(names) == 1:
        return 6 + RANKS.index(names[0])
    x, y = RANKS.index(names[0]), RANKS.index(names[1])
    pairs = [(a, b) for a in range(N) for b in range(a, N)]
    return 27 + pairs.index((x, y))


class OracleDeal:
    """One deal played by the book, one move string at a time."""

    def __init__(self, players: int, dealer: int, pot: int, deck: list[str], last: bool = False) -> None:
        """Deal ``deck`` (42 rank names, or the lowest k ranks twice, L20; front first) per L4 with ``dealer`` and a
        starting ``pot``; ``last``: the pot's last deal, where a budrunda settles the pot (L21)."""
        k = len(deck) // 2
        assert 2 <= players <= 6 and 0 <= dealer < players and 2 * k - 5 * players >= 2 * players
        ranks = [RANKS.index(name) for name in deck]
        assert sorted(ranks) == sorted(list(range(k)) * 2)
        self.players, self.dealer, self.pot, self.last = players, dealer, pot, last
        self.forehand = (dealer + 1) % players  # L2
        self.hands = [[0] * N for _ in range(players)]
        order = [(self.forehand + k) % players for k in range(players)]
        for k in range(5 * players):  # L4: one card at a time, clockwise from forehand
            self.hands[order[k % players]][ranks[k]] += 1
        self.talon = ranks[5 * players:]
        self.discarded: list[int] = []
        self.played: list[int] = []
        self.folded = [False] * players
        self.done = False
        self.outcome: dict[str, Any] | None = None
        self.phase = "call1"
        self.knocker: int | None = None
        self.queue = order[:]  # seats still to speak in the current phase, in order
        self.trick: list[tuple[int, int]] = []  # (seat, rank) played to the current trick
        self.tricks_done = 0
        self.last_trick_winner: int | None = None

    # -- who is in, who acts ----------------------------------------------------------
    def still_in(self) -> list[int]:
        """Seats that have not folded."""
        return [s for s in range(self.players) if not self.folded[s]]

    def clockwise_from(self, start: int) -> list[int]:
        """Seats still in, clockwise starting at ``start`` (included if still in)."""
        return [(start + k) % self.players for k in range(self.players) if not self.folded[(start + k) % self.players]]

    @property
    def to_act(self) -> int | None:
        """The seat to act, None when the deal is over."""
        return None if self.done else self.queue[0]

    # -- legal moves ------------------------------------------------------------------
    def legal_moves(self) -> list[str]:
        """Every legal move of the seat to act as L17 strings, in action-index order."""
        if self.done:
            return []
        seat = self.queue[0]
        hand = self.hands[seat]
        held = [r for r in range(N) if hand[r] > 0]
        if self.phase in ("call1", "call2"):
            moves = ["bud", "knacka"]
        elif self.phase == "fold":
            moves = ["fold", "stay"]
        elif self.phase == "show":
            moves = ["bud", "show"]
        elif self.phase == "exchange":
            moves = ["stand"] + [f"discard:{RANKS[r]}" for r in held]
            for i, x in enumerate(held):
                for y in held[i:]:
                    if x != y or hand[x] >= 2:
                        moves.append(f"discard:{RANKS[x]},{RANKS[y]}")
        else:  # tricks, L10
            if not self.trick:
                playable = held
            else:
                top = max(r for _, r in self.trick)
                playable = [r for r in held if r >= top] or [min(held)]
            moves = [f"play:{RANKS[r]}" for r in playable]
        return sorted(moves, key=move_order)

    # -- playing ----------------------------------------------------------------------
    def play(self, move: str) -> None:
        """Make ``move`` for the seat to act; ValueError if it is not legal."""
        if move not in self.legal_moves():
            raise ValueError(f"illegal move {move!r}; legal: {self.legal_moves()}")
        seat = self.queue.pop(0)
        if self.phase in ("call1", "call2"):
            self._call(seat, move)
        elif self.phase == "fold":
            if move == "fold":
                self.folded[seat] = True
            if not self.queue:
                self._after_folds()
        elif self.phase == "exchange":
            if move != "stand":
                for name in move.split(":")[1].split(","):
                    r = RANKS.index(name)
                    self.hands[seat][r] -= 1
                    self.discarded.append(r)
                    self.hands[seat][self.talon.pop(0)] += 1  # L8: draw from the talon's front
            if not self.queue:
                self.phase = "call2"
                self.queue = self.clockwise_from(self.forehand)
        elif self.phase == "tricks":
            self._trick_card(seat, RANKS.index(move.split(":")[1]))
        else:  # show, L11
            if move == "show":
                self._showdown(seat)
            elif not self.queue:
                self._budrunda()

    def _call(self, seat: int, move: str) -> None:
        """L5 / L9: the first knacka ends the call; all bud is a budrunda."""
        if move == "knacka":
            if self.phase == "call1":
                self.knocker = seat
                self.phase = "fold"  # L6: every other player once, from the knocker's left
                self.queue = [(seat + k) % self.players for k in range(1, self.players)]
            else:
                self._start_tricks()
        elif not self.queue:
            self._budrunda()

    def _after_folds(self) -> None:
        """L6, L7, L15: walkover if only the knocker is in; else forehand moves on and the exchange starts."""
        if self.still_in() == [self.knocker]:
            self._end("walkover", winner=self.knocker, shower=None, penalty=0,
                      antes=[1] * self.players)
            return
        if self.folded[self.forehand]:
            self.forehand = self.clockwise_from(self.forehand)[0]
        self.phase = "exchange"
        self.queue = self.clockwise_from(self.forehand)

    def _start_tricks(self) -> None:
        """L10: forehand leads the first trick."""
        self.phase = "tricks"
        self.queue = self.clockwise_from(self.forehand)

    def _trick_card(self, seat: int, rank: int) -> None:
        """L10: add a card to the trick; settle the trick once everybody still in has played."""
        self.hands[seat][rank] -= 1
        self.played.append(rank)
        self.trick.append((seat, rank))
        if self.queue:
            return
        top = max(r for _, r in self.trick)
        winner = [s for s, r in self.trick if r == top][-1]  # ties: the last to play it
        self.trick = []
        self.tricks_done += 1
        self.last_trick_winner = winner
        if self.tricks_done < 4:
            self.queue = self.clockwise_from(winner)
        else:
            self.phase = "show"  # L11
            self.queue = self.clockwise_from(winner)

    def _last_card(self, seat: int) -> int:
        """The one rank a seat still in holds after four tricks."""
        (rank,) = [r for r in range(N) for _ in range(self.hands[seat][r])]
        return rank

    def _showdown(self, shower: int) -> None:
        """L13, L14: the shower wins if every other holds a higher rank; else it pays the penalty."""
        order = self.clockwise_from(self.last_trick_winner)  # L13
        card = {s: self._last_card(s) for s in order}
        others = [s for s in order if s != shower]
        lowest = min(card[s] for s in others)
        if lowest > card[shower]:
            winner, penalty = shower, 0
        else:
            winner = [s for s in order if s != shower and card[s] == lowest][-1]
            penalty = self.pot
        if len(order) == 2:
            antes = [1] * self.players
            antes[next(s for s in order if s != winner)] = 3
        else:
            antes = [2 if (s in card and s != winner) else 0 for s in range(self.players)]
        self._end("showdown", winner=winner, shower=shower, penalty=penalty, antes=antes)

    def _budrunda(self) -> None:
        """L12: the pot stays; antes from everybody, or from the folders only if someone folded.  L21 in the last
        deal: equal shares, the remainder one each from the dealer's left, antes 2 each for a new pot."""
        if self.last:
            n = self.players
            order = [(self.dealer + 1 + j) % n for j in range(n)]
            money = [self.pot // n] * n
            for s in order[:self.pot % n]:
                money[s] += 1
            self.outcome = {"outcome": "settled", "winner": None, "shower": None, "penalty": 0, "money": money,
                            "antes_next": [2] * n, "pot_next": 2 * n}
            self.done, self.queue, self.phase = True, [], "done"
            return
        if any(self.folded):
            antes = [1 if f else 0 for f in self.folded]
        else:
            antes = [1] * self.players
        self._end("budrunda", winner=None, shower=None, penalty=0, antes=antes)

    def _end(self, outcome: str, winner: int | None, shower: int | None, penalty: int, antes: list[int]) -> None:
        """Settle the money (L14, L15, L18) and finish the deal."""
        money = [0] * self.players
        if winner is not None:
            money[winner] += self.pot + penalty
            money[shower if shower is not None else winner] -= penalty
        pot_left = self.pot if outcome == "budrunda" else 0
        self.outcome = {
            "outcome": outcome, "winner": winner, "shower": shower, "penalty": penalty,
            "money": money, "antes_next": antes, "pot_next": pot_left + sum(antes),
        }
        self.done = True
        self.queue = []
        self.phase = "done"

    def result(self) -> dict[str, Any]:
        """The L18 result of the finished deal."""
        assert self.done and self.outcome is not None
        return dict(self.outcome)
