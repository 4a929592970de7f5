"""``tabular:PATH``: a tabular policy solved by OpenSpiel, playing in our envs, ``krypenv eval``, terminal and web.

The file is a :mod:`krypenv.openspiel.policy` JSON table keyed by information state strings.
At each decision the agent writes its seat's information state as the OpenSpiel games do
(:func:`krypenv.openspiel.krypkasino.information_state_text`), looks it up and draws the
action from the stored distribution with a uniform from the game's stream; a state the table
does not hold is refused with a ValueError naming it.  ``PATH`` is a file, or the name of a
shipped policy in ``checkpoints/``: ``tabular:cfr-tiny`` is the CFR+ solution of Krypkasino's
``tiny`` preset (``python -m krypenv.openspiel.solve``, docs/OPENSPIEL.md).  The agent refuses a
table whose rules differ from the policy's game (ValueError naming both).  ``krypenv serve``
offers the shipped policies (and ``.json[.gz]`` files given with ``--checkpoint``) by name only,
never a path, at the table each was solved for: the players and preset of its game string
(:mod:`krypenv.ui.tabulars`, :mod:`krypenv.ui.menu`).  Needs the extra
``openspiel`` (the information state text comes from :mod:`krypenv.openspiel`).  A shipped
policy ``NAME`` is ``checkpoints/NAME.json.gz`` (or ``.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.checkpoint import SHIPPED

from krypenv.agent_api import DecisionBatch

__all__ = ["TabularAgent"]


def resolve(spec: str) -> Path:
    """The file of a ``tabular:`` spec: a shipped name (no separator, no suffix) or a path; ValueError if missing."""
    if not spec:
        raise ValueError("tabular agent needs a policy file: tabular:PATH (e.g. tabular:checkpoints/cfr-tiny.json)")
    path = Path(spec)
    if "/" not in spec and "\\" not in spec and not path.suffix:
        path = next((p for p in (SHIPPED / f"{spec}.json.gz", SHIPPED / f"{spec}.json") if p.is_file()), path)
    if not path.is_file():
        raise ValueError(f"tabular policy {spec!r}: no such file (shipped policies: {', '.join(shipped()) or 'none'})")
    return path


def shipped() -> list[str]:
    """The names of the shipped tabular policies (``checkpoints/NAME.json`` or ``NAME.json.gz``)."""
    if not SHIPPED.is_dir():
        return []
    return sorted({p.name.removesuffix(".gz").removesuffix(".json") for p in SHIPPED.glob("*.json*")})


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
        self.rules: Any = None  # the rules the policy was solved for, read on first use

    def check_rules(self, rules: Any) -> None:
        """ValueError unless ``rules`` are the rules the policy was solved for (preset, players, rule keys)."""
        if self.rules is None:
            import pyspiel

            self.rules = pyspiel.load_game(self.table.game).config.rules
        if rules != self.rules:
            raise ValueError(f"tabular policy {self.path} was solved for {self.rules}, not for this table's {rules}")

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """One action per decision, drawn from the table at its information state."""
        self.check_rules(batch.rules)
        u = batch.uniforms(1)[:, 0]
        keys = [self.text(batch.core, int(i), int(s)) for i, s in zip(batch.envs, batch.seats)]
        return np.array([self.table.sample(k, float(uk)) for k, uk in zip(keys, u)], np.int64)


def load(spec: str) -> Any:
    """``tabular:PATH`` (or a shipped policy's name)."""
    return TabularAgent(resolve(spec))


register("tabular", load, "a tabular policy solved by OpenSpiel (JSON), e.g. tabular:cfr-tiny; "
         "needs krypenv[openspiel]", takes_path=True, games=None)
