"""Hints: what an agent would play in the person's place, and why, with its top moves.

``h`` in ``krypenv play`` and the hint button of ``krypenv serve`` ask :func:`hint`.  The
agent is any spec the game knows; by default the strongest shipped one that plays the table
(:func:`default_hint_spec`: ``champion``, the strongest search measured for the table, then
``pimc``, ``expert``, ``timid``, ``random``, whichever the game has and plays the table's preset).
Its top moves are measured in one of two ways:

* a policy with ``logits`` (a ``ppo:PATH`` agent) gives each legal move its **probability**
  (in Krypkasino the product over the card and capture-choice actions of the move);
* any other agent is asked ``votes`` times on copies of the game, each time with fresh random
  numbers, and each move's share of the **votes** is shown: a search such as ``pimc`` samples
  different hidden hands each time, so the share says how clear its choice is; a
  deterministic agent gives one move all the votes ("would play").

Nothing in the game changes: the agent acts on copies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from krypenv.ui.session import Choice, Session

PREFERENCE = ("champion", "pimc", "expert", "timid", "random")  # strongest first
TOP = 5


def default_hint_spec(game: str, rules: Any = None) -> str:
    """The strongest shipped agent of ``game`` by :data:`PREFERENCE` that plays the preset of ``rules`` (K22, L22;
    None: the standard game)."""
    from krypenv.agents.base import find_entry

    preset = "standard" if rules is None else str(rules.preset_name)
    for name in PREFERENCE:
        entry = find_entry(name, game)
        if entry is not None and (entry.presets is None or preset in entry.presets):
            return name
    return "random"


@dataclass
class Hint:
    """An agent's advice: the move it would play, and its top moves with probabilities or vote shares."""

    spec: str
    summary: str
    kind: str  # "probability" or "votes"
    best: Choice
    top: list[tuple[Choice, float]] = field(default_factory=list)
    votes: int = 0

    def lines(self) -> list[str]:
        """The hint as text lines for the terminal."""
        head = f"hint from {self.spec} ({self.summary}): play {self.best.label}  [{self.best.key}]"
        if self.kind == "probability":
            why = "its policy's probabilities:"
        elif len(self.top) == 1:
            why = f"it chose this move in all {self.votes} of {self.votes} tries"
        else:
            why = f"how often it chose each move in {self.votes} tries with fresh random numbers:"
        out = [head, "  " + why]
        if not (self.kind == "votes" and len(self.top) == 1):
            out += [f"  {p:6.1%}  {c.label}" for c, p in self.top]
        return out

    def to_json(self, legal: list[Choice]) -> dict[str, Any]:
        """The hint for the page, moves by their 1-based number in ``legal``."""
        number = {c.key: i + 1 for i, c in enumerate(legal)}
        return {"spec": self.spec, "summary": self.summary, "kind": self.kind, "votes": self.votes,
                "best": {"n": number[self.best.key], "label": self.best.label},
                "top": [{"n": number[c.key], "label": c.label, "p": p} for c, p in self.top],
                "text": "\n".join(self.lines())}


class HintCancelled(Exception):
    """The hint was given up before it was ready (the person interrupted it, or the client went away)."""


MAX_CACHED = 4  # hint agents kept per session (a new spec beyond that replaces the oldest)


def hint(session: Session, spec: str | None = None, votes: int = 12, shown: str | None = None,
         stop: Callable[[], bool] | None = None) -> Hint:
    """The advice of agent ``spec`` (default: :func:`default_hint_spec`) for the person's decision.

    ``shown`` is the name the hint gives its agent (default ``spec``; the server shows the
    request's spec, not the path it resolved to); ``stop`` is asked between votes, and when it
    says True the hint is abandoned with :class:`HintCancelled`.
    """
    from krypenv import agents

    legal = session.legal()
    if not legal:
        raise ValueError("a hint needs your turn: " + ("the match is over" if session.over else "you are not to act"))
    game = session.game_name
    spec = spec or default_hint_spec(game, session.game.rules)
    shown = shown or spec
    cache: dict[str, Any] = session.__dict__.setdefault("_hint_agents", {})
    if spec not in cache:
        while len(cache) >= MAX_CACHED:
            cache.pop(next(iter(cache)))
        cache[spec] = agents.load(spec, game=game)
    agent = cache[spec]
    summary = agents.known(game).get(shown.split(":")[0], "your agent")
    probs = session.game.move_probabilities(agent)
    if probs is not None:
        ranked = sorted(zip(legal, probs), key=lambda cp: -cp[1])
        return Hint(shown, summary, "probability", ranked[0][0], ranked[:TOP])
    start = 1000 + 7919 * len(session.events)  # fresh streams per decision, the same for the same position
    chosen = []
    for k in range(votes):
        if stop is not None and stop():
            raise HintCancelled("the hint was cancelled")
        chosen.append(session.game.agent_choice(agent, start + k))
    count = Counter(c.key for c in chosen)
    by_key = {c.key: c for c in chosen}
    ranked = [(by_key[k], n / votes) for k, n in count.most_common(TOP)]
    return Hint(shown, summary, "votes", ranked[0][0], ranked, votes)
