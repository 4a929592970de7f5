"""``tabular:PATH``: a tabular policy solved by OpenSpiel, playing in our envs, ``krypenv eval``, terminal and web.

The file is a :mod:`krypenv.openspiel.policy` JSON table keyed by information state strings.
At each decision the agent writes its seat's information state as the OpenSpiel games do
(:func:`krypenv.openspiel.krypkasino.information_state_text`), looks it up and draws the
action from the stored distribution with a uniform from the game's stream; a state the table
does not hold is refused with a ValueError naming it.  ``PATH`` is a file, or the name of a
shipped policy in ``checkpoints/`` (``tabular:cfr-tiny``); ``cfr-tiny`` alone names the CFR
solution of Krypkasino's ``tiny`` preset (``experiments/solve_tiny.py``).  Needs the extra
``openspiel`` (the information state text comes from :mod:`krypenv.openspiel`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.checkpoint import SHIPPED

from krypenv.agent_api import DecisionBatch

__all__ = ["TabularAgent"]

SHIPPED_TINY = "cfr-tiny"


def resolve(spec: str) -> Path:
    """The file of a ``tabular:`` spec: a shipped name (no separator, no suffix) or a path; ValueError if missing."""
    if not spec:
        raise ValueError("tabular agent needs a policy file: tabular:PATH (e.g. tabular:checkpoints/cfr-tiny.json)")
    path = Path(spec)
    if "/" not in spec and "\\" not in spec and not path.suffix:
        path = SHIPPED / f"{spec}.json"
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in SHIPPED.glob("*.json"))) if SHIPPED.is_dir() else "none"
        raise ValueError(f"tabular policy {spec!r}: no such file (shipped policies: {shipped or 'none'})")
    return path


class TabularAgent:
    """Plays a tabular policy file: looks up each decision's information state and samples the stored action."""

    name = "tabular"

    def __init__(self, path: str | Path) -> None:
        try:
            from krypenv.openspiel import information_state_texts
            from krypenv.openspiel.policy import TabularPolicyFile
        except ImportError as exc:  # the extra is absent
            raise ValueError(f"tabular agent needs OpenSpiel: pip install 'krypenv[openspiel]' ({exc})") from None
        self.path = Path(path)
        self.table = TabularPolicyFile.load(self.path)
        short = self.table.game.partition("(")[0]
        if short not in information_state_texts:
            raise ValueError(f"tabular policy {path}: unknown game {short!r}")
        self.text = information_state_texts[short]

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """One action per decision, drawn from the table at its information state."""
        u = batch.uniforms(1)[:, 0]
        keys = [self.text(batch.core, int(i), int(s)) for i, s in zip(batch.envs, batch.seats)]
        return np.array([self.table.sample(k, float(uk)) for k, uk in zip(keys, u)], np.int64)


def load(spec: str) -> Any:
    """``tabular:PATH`` (or a shipped policy's name)."""
    return TabularAgent(resolve(spec))


register("tabular", load, "a tabular policy solved by OpenSpiel (JSON), e.g. tabular:checkpoints/cfr-tiny.json; "
         "needs krypenv[openspiel]", takes_path=True, games=None)
register(SHIPPED_TINY, lambda: TabularAgent(resolve(SHIPPED_TINY)),
         "the CFR+ solution of the tiny preset (2 players, 8 cards): tabular:cfr-tiny")
