"""Labelled decisions on disk: the shards that :mod:`krypenv.training.distill` writes and trains on.

A *label* is one decision of a game with the teacher's verdict on every legal action.  A
*label set* is a folder::

    LABELS/card.json                  the set's card: what every shard must agree with
    LABELS/it000-00000.npz            shard 0 of iteration 0
    LABELS/it000-00001.npz
    LABELS/it001-00000.npz            iteration 1 (a new student plays, a new teacher labels), ...

``card.json`` is ``{"format": "krypenv-labels/1", "game", "players", "preset", "obs_size",
"n_actions", "state_size"}``.  A shard is a NumPy ``.npz`` file (zip members, each with its CRC;
read with ``allow_pickle=False``: loading runs no code) holding, for its ``N`` labels:

==============  ================  ===========================================================================
array           shape, dtype      meaning
==============  ================  ===========================================================================
``obs``         (N, D) game's     the acting seat's observation vector, as the game's envs emit it
``mask``        (N, A) bool       its legal actions
``values``      (N, A) float32    the teacher's value of every legal action to the mover (higher is better:
                                  Krypkasino minus the mean score of the mover's side at the rollouts' stop,
                                  Kungsholmskille the mean money); NaN at illegal actions
``teacher``     (N,) int16        the action the teacher plays
``played``      (N,) int16        the action that was played (the teacher's, or the student's: DAgger)
``by_teacher``  (N,) bool         whether the DAgger draw gave the decision to the teacher (probability ``beta``)
``seat``        (N,) int8         the acting seat
``seed``        (N,) int64        the seed of the game the decision comes from (its deck and streams)
``state``       (N, S) int8       the game's whole state row (Krypkasino: the engine record and the capture
                                  choice; hidden cards included), from which action features are recomputed
``card``        JSON text         the shard's card: ``format``, ``game``, ``iteration``, ``shard``, ``games``,
                                  ``labels``, ``seed`` (the run's), ``teacher`` and ``student`` specs, ``beta``
                                  (the probability that the teacher's action was played), ``seconds``
==============  ================  ===========================================================================

Only decisions with two or more legal actions are labelled (a forced one teaches nothing).

**Resumable.**  A shard's content is a function of (the run's seed, iteration, shard index) and
the student and teacher it names, so shards are independent work units: a run that is killed
and started again writes the shards that are missing and leaves the others as they are.  A shard
is written to a temporary name in the same folder and renamed when complete (``os.replace``,
atomic), so a kill never leaves a partial shard under a shard's name; leftover temporaries are
removed by :meth:`LabelSet.clean`.  A shard that cannot be read (truncated, corrupt, another
format, another game or shapes that do not fit the set's card) is a ``ValueError`` naming the file.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FORMAT", "LabelSet", "Labels", "card_for"]

FORMAT = "krypenv-labels/1"
CARD_KEYS = ("game", "players", "preset", "obs_size", "n_actions", "state_size")
ARRAYS = ("obs", "mask", "values", "teacher", "played", "by_teacher", "seat", "seed", "state")
DTYPES = {"mask": np.bool_, "values": np.float32, "teacher": np.int16, "played": np.int16,
          "by_teacher": np.bool_, "seat": np.int8,
          "seed": np.int64, "state": np.int8}
SHARD = re.compile(r"^it(\d{3})-(\d{5})\.npz$")
MAX_SHARD_LABELS = 1 << 20  # a shard bigger than this is refused (bounded reads)


def card_for(game: str, players: int, preset: str, core: Any) -> dict[str, Any]:
    """A label set's card for the decisions of ``core`` (a distillation core: its ``dim``, ``n_actions``, ``state``)."""
    return {"game": game, "players": players, "preset": preset, "obs_size": core.dim, "n_actions": core.n_actions,
            "state_size": core.state.shape[1]}


@dataclass
class Labels:
    """Labels in memory: the arrays of :data:`ARRAYS` (first axis: labels) and where they came from."""

    obs: np.ndarray
    mask: np.ndarray
    values: np.ndarray
    teacher: np.ndarray
    played: np.ndarray
    by_teacher: np.ndarray
    seat: np.ndarray
    seed: np.ndarray
    state: np.ndarray

    def __len__(self) -> int:
        return int(self.obs.shape[0])

    @staticmethod
    def concat(parts: list[Labels]) -> Labels:
        """One set of labels from several, in order."""
        return Labels(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in ARRAYS})

    def check(self, card: dict[str, Any], where: str) -> None:
        """ValueError naming ``where`` unless every array has the card's shape and the label count agrees."""
        n = len(self)
        shapes = {"obs": (n, card["obs_size"]), "mask": (n, card["n_actions"]), "values": (n, card["n_actions"]),
                  "teacher": (n,), "played": (n,), "by_teacher": (n,), "seat": (n,), "seed": (n,),
                  "state": (n, card["state_size"])}
        for k, shape in shapes.items():
            if getattr(self, k).shape != shape:
                raise ValueError(f"label shard {where}: array {k} has shape {getattr(self, k).shape}, "
                                 f"the set's card says {shape}")
        legal = np.asarray(self.mask) != 0  # a mask of 0/1 integers reads as one of booleans (not as indices)
        if n and not (legal.sum(axis=1) >= 2).all():
            raise ValueError(f"label shard {where}: a label with fewer than two legal actions")
        if np.isnan(self.values[legal]).any() or not np.isnan(self.values[~legal]).all():
            raise ValueError(f"label shard {where}: values must be numbers exactly at the legal actions")
        for k in ("teacher", "played"):
            a = getattr(self, k).astype(np.int64)
            if ((a < 0) | (a >= card["n_actions"])).any() or not legal[np.arange(n), np.clip(a, 0, None)].all():
                raise ValueError(f"label shard {where}: a {k} action that is not legal")


class LabelSet:
    """A folder of label shards (the module docstring): create or open, write shards, read them back."""

    def __init__(self, path: str | Path, card: dict[str, Any] | None = None) -> None:
        """Open the set at ``path``; with ``card`` create it (or check that the existing one is the same)."""
        self.path = Path(path)
        card_file = self.path / "card.json"
        if card is not None:
            card = {"format": FORMAT, **{k: card[k] for k in CARD_KEYS}}
            if card_file.exists():
                found = self._read_card(card_file)
                if found != card:
                    diff = sorted(k for k in card if found.get(k) != card[k])
                    raise ValueError(f"label set {self.path} holds other labels ({', '.join(diff)} differ): "
                                     "use another folder")
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                tmp = card_file.with_suffix(".json.tmp")
                tmp.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
                os.replace(tmp, card_file)
        elif not card_file.is_file():
            raise ValueError(f"label set {self.path}: no card.json (not a label set)")
        self.card = self._read_card(card_file)

    @staticmethod
    def _read_card(path: Path) -> dict[str, Any]:
        """The set's card; ValueError naming the file when it is not one."""
        try:
            card = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ValueError(f"label set card {path}: not readable JSON ({e})") from None
        if not isinstance(card, dict) or card.get("format") != FORMAT:
            raise ValueError(f"label set card {path}: format {card.get('format') if isinstance(card, dict) else None!r}"
                             f", expected {FORMAT!r}")
        missing = [k for k in CARD_KEYS if k not in card]
        if missing:
            raise ValueError(f"label set card {path}: missing {', '.join(missing)}")
        return card

    def shard_path(self, iteration: int, index: int) -> Path:
        """Where shard ``index`` of ``iteration`` lives."""
        if not (0 <= iteration < 1000 and 0 <= index < 100_000):
            raise ValueError(f"shard numbers out of range: iteration {iteration} (0-999), index {index} (0-99999)")
        return self.path / f"it{iteration:03d}-{index:05d}.npz"

    def shards(self, iteration: int | None = None) -> list[Path]:
        """The complete shards (of one iteration, or all), in order."""
        found = []
        for p in self.path.iterdir():
            m = SHARD.match(p.name)
            if m and (iteration is None or int(m.group(1)) == iteration):
                found.append(p)
        return sorted(found)

    def clean(self) -> list[Path]:
        """Remove the temporaries of shards whose writing was interrupted; return them."""
        left = sorted(self.path.glob("*.npz.tmp*"))
        for p in left:
            p.unlink()
        return left

    def write(self, iteration: int, index: int, labels: Labels, card: dict[str, Any]) -> Path:
        """Write one shard atomically (a temporary, then a rename); its card gets ``format``, ``iteration``,
        ``shard``, ``labels``."""
        labels.check(self.card, f"it{iteration:03d}-{index:05d} (being written)")
        final = self.shard_path(iteration, index)
        shard_card = {**card, "format": FORMAT, "game": self.card["game"], "iteration": iteration, "shard": index,
                      "labels": len(labels)}
        arrays = {k: np.asarray(getattr(labels, k), DTYPES.get(k)) for k in ARRAYS}
        tmp = final.with_name(final.name + f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, card=np.array(json.dumps(shard_card, sort_keys=True)), **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        return final

    def read(self, path: str | Path) -> tuple[Labels, dict[str, Any]]:
        """(the labels, the card) of one shard; ValueError naming the file when it is not a whole shard of this set."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                missing = [k for k in ("card", *ARRAYS) if k not in data.files]
                if missing:
                    raise ValueError(f"label shard {path}: missing arrays {', '.join(missing)}")
                card = json.loads(str(data["card"]))
                n = int(card.get("labels", -1)) if isinstance(card, dict) else -1
                if not 0 <= n <= MAX_SHARD_LABELS:
                    raise ValueError(f"label shard {path}: {n} labels (0 to {MAX_SHARD_LABELS})")
                labels = Labels(**{k: data[k] for k in ARRAYS})
        except (OSError, zipfile.BadZipFile, EOFError, zlib.error, json.JSONDecodeError) as e:
            raise ValueError(f"label shard {path}: truncated or corrupt ({type(e).__name__}: {e})") from None
        except ValueError as e:
            if str(e).startswith("label shard"):
                raise
            raise ValueError(f"label shard {path}: truncated or corrupt ({e})") from None
        if card.get("format") != FORMAT or card.get("game") != self.card["game"]:
            raise ValueError(f"label shard {path}: format {card.get('format')!r} of game {card.get('game')!r}, "
                             f"this set holds {FORMAT} of {self.card['game']}")
        if len(labels) != n:
            raise ValueError(f"label shard {path}: {len(labels)} labels, its card says {n}")
        labels.check(self.card, str(path))
        return labels, card

    def load(self, iterations: list[int] | None = None) -> tuple[Labels, list[dict[str, Any]]]:
        """Every shard (of the given iterations) read and joined in order, with their cards."""
        paths = [p for p in self.shards() if iterations is None or int(SHARD.match(p.name).group(1)) in iterations]
        parts, cards = [], []
        for p in paths:
            labels, card = self.read(p)
            parts.append(labels)
            cards.append(card)
        if not parts:
            which = f" of iterations {iterations}" if iterations else ""
            raise ValueError(f"label set {self.path}: no shards{which}")
        return Labels.concat(parts), cards
