"""Tabular policy files: a policy solved by OpenSpiel, as JSON (never pickle), playable by our agents and measured.

A file is one JSON object::

    {"format": "krypenv-tabular/1",
     "game": "python_krypkasino(last_capture_point=False,players=2,preset=tiny,...)",
     "meta": {...},                                   # free: solver, iterations, NashConv, date
     "policy": {"<information state string>": {"<action>": probability, ...}, ...}}

keyed by the game's ``information_state_string`` (the same text our envs give,
:func:`krypenv.openspiel.krypkasino.information_state_text`), actions as OpenSpiel (= env)
action ids.  Probabilities are written with 6 decimals and the actions of probability 0 are
left out.  To keep a shipped policy small, a file may key its entries by the first 16 hex
digits of the SHA-1 of the information state string instead (``"keys": "sha1-16"``; 64 bits,
so a collision among the tiny preset's 40 540 information states has odds below 1e-10), and a
path ending in ``.gz`` is read and written gzip-compressed.  :meth:`TabularPolicyFile.load`
checks the format, that every entry is a distribution (sums to 1 within 1e-4), and names the
first bad entry in a ValueError.

Playing it (:mod:`krypenv.agents.tabular`): the agent looks up its seat's information state;
a state missing from the table is refused with a ValueError naming it (the policy covers
every information state of its game, so a miss means another game or preset), and an action
is drawn from the stored distribution with a uniform from the game's stream.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FORMAT", "HASHED", "TabularPolicyFile", "hashed_key"]

FORMAT = "krypenv-tabular/1"
TOLERANCE = 1e-4
HASHED = "sha1-16"


def hashed_key(infostate: str) -> str:
    """The hashed key of an information state string: the first 16 hex digits of its SHA-1."""
    return hashlib.sha1(infostate.encode("utf-8")).hexdigest()[:16]


class TabularPolicyFile:
    """A game string and, per information state string, a distribution over actions."""

    def __init__(self, game: str, table: dict[str, dict[int, float]], meta: dict[str, Any] | None = None,
                 hashed: bool = False) -> None:
        self.game = game
        self.table = table
        self.meta = dict(meta or {})
        self.hashed = hashed  # keys are hashed_key(information state)

    # ------------------------------------------------------------------ files
    @classmethod
    def load(cls, path: str | Path) -> TabularPolicyFile:
        """Read and check a policy file; ValueError naming the file and what is wrong."""
        try:
            raw = Path(path).read_bytes()
            text = gzip.decompress(raw) if str(path).endswith(".gz") else raw
        except (OSError, ValueError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt deflate stream
            raise ValueError(f"tabular policy {path}: cannot read it as JSON ({exc})") from None
        return cls.from_json(text, path)

    @classmethod
    def from_json(cls, text: bytes | str, path: str | Path) -> TabularPolicyFile:
        """Check a policy's JSON text, read from ``path``; ValueError naming the file and what is wrong."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"tabular policy {path}: cannot read it as JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"tabular policy {path}: format must be {FORMAT!r}")
        if not isinstance(data.get("game"), str) or not isinstance(data.get("policy"), dict):
            raise ValueError(f"tabular policy {path}: needs a game string and a policy object")
        table: dict[str, dict[int, float]] = {}
        for key, dist in data["policy"].items():
            try:
                probs = {int(a): float(p) for a, p in dist.items()}
            except (AttributeError, TypeError, ValueError):
                raise ValueError(f"tabular policy {path}: entry {key!r} is not an action -> probability "
                                 "object") from None
            if not probs or min(probs.values()) < 0 or abs(sum(probs.values()) - 1.0) > TOLERANCE:
                raise ValueError(f"tabular policy {path}: entry {key!r} is not a probability distribution")
            table[key] = probs
        keys = data.get("keys", "text")
        if keys not in ("text", HASHED):
            raise ValueError(f"tabular policy {path}: keys must be 'text' or {HASHED!r}, got {keys!r}")
        meta = data.get("meta", {})
        return cls(data["game"], table, meta if isinstance(meta, dict) else {}, hashed=keys == HASHED)

    def save(self, path: str | Path, hashed: bool | None = None) -> None:
        """Write the policy as JSON (6 decimals, zero-probability actions left out; gzip for ``.gz``).

        ``hashed=True`` keys the entries by :func:`hashed_key` (default: as this table is keyed).
        """
        hashed = self.hashed if hashed is None else hashed
        if self.hashed and not hashed:
            raise ValueError("a table keyed by hashes cannot be written with text keys")
        policy = {}
        for text in sorted(self.table):
            key = hashed_key(text) if hashed and not self.hashed else text
            dist = {a: round(p, 6) for a, p in sorted(self.table[text].items()) if round(p, 6) > 0}
            if not dist:  # all below 1e-6: keep the likeliest
                best = max(self.table[text], key=lambda a: self.table[text][a])
                dist = {best: 1.0}
            total = sum(dist.values())  # the renormalised entries are rounded again: one that rounds to 0 is left out
            policy[key] = {str(a): q for a, p in dist.items() if (q := round(p / total, 6)) > 0}
        data = {"format": FORMAT, "game": self.game, "keys": HASHED if hashed else "text", "meta": self.meta,
                "policy": policy}
        text_out = (json.dumps(data, indent=0, sort_keys=False) + "\n").encode("utf-8")
        Path(path).write_bytes(gzip.compress(text_out, mtime=0) if str(path).endswith(".gz") else text_out)

    # ------------------------------------------------------------------ use
    def probabilities(self, infostate: str) -> dict[int, float]:
        """The distribution at an information state; ValueError if the table does not hold it."""
        dist = self.table.get(hashed_key(infostate) if self.hashed else infostate)
        if dist is None:
            raise ValueError(f"tabular policy for {self.game}: no entry for information state {infostate!r} "
                             "(the policy was solved for another game, preset or player count?)")
        return dist

    def sample(self, infostate: str, u: float) -> int:
        """The action of the stored distribution at ``infostate`` that the uniform ``u`` in [0, 1) picks."""
        dist = self.probabilities(infostate)
        actions = sorted(dist)
        cum = np.cumsum([dist[a] for a in actions])
        return int(actions[min(int(np.searchsorted(cum, u * cum[-1], side="right")), len(actions) - 1)])

    def openspiel_policy(self, game: Any) -> Any:
        """The table as an OpenSpiel ``TabularPolicy``-like policy of ``game`` (which must be the file's game)."""
        from open_spiel.python import policy as os_policy

        if str(game) != self.game:
            raise ValueError(f"tabular policy is for {self.game}, not {game}")
        table = self

        class _Lookup(os_policy.Policy):
            """The file's table as an OpenSpiel policy."""

            def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
                dist = table.probabilities(state.information_state_string())
                return {a: dist.get(a, 0.0) for a in state.legal_actions()}

        return _Lookup(game, list(range(game.num_players())))

    @classmethod
    def from_openspiel(cls, game: Any, policy: Any, meta: dict[str, Any] | None = None) -> TabularPolicyFile:
        """The table of an OpenSpiel ``TabularPolicy`` (e.g. CFR's average policy) of ``game``."""
        table = {}
        for key, index in policy.state_lookup.items():
            probs = policy.action_probability_array[index]
            table[key] = {int(a): float(probs[a]) for a in np.flatnonzero(probs > 0)}
        return cls(str(game), table, meta)
