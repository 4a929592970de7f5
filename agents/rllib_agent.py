"""``rllib:PATH``: a policy trained with RLlib (``examples/rllib_ppo.py``), loaded from its checkpoint folder.

    krypenv eval --agents rllib:checkpoints/rllib-2p,expert --players 2 --deals 200

``PATH`` is the folder ``examples/rllib_ppo.py`` saves: RLlib's algorithm checkpoint
(``algo.save_to_path``) plus ``krypenv.json`` (format ``krypenv-rllib/1``: the game, its
env keywords, the learner's module id, the observation length and number of actions).  The
learner's RLModule is restored from ``learner_group/learner/rl_module/<module>`` with
``RLModule.from_checkpoint``; this needs the ``ray`` extra (``pip install "krypenv[ray]"``),
imported only when such an agent is loaded.

**Trusted folders only.**  RLlib restores the module with pickle: load only checkpoints you
trust (``docs/SECURITY.md``); ``krypenv serve`` loads only those named on its command line.

Every problem is a one-line ValueError naming the path: no such folder, no or a bad
``krypenv.json``, no module checkpoint, Ray missing, and at the first decision a game whose
observation length or number of actions differs from the checkpoint's.

**Acting.**  One forward pass over the whole batch (``forward_inference``, torch, no
gradients) with the observation and mask as float32, and the argmax of the masked logits:
deterministic, the same for a decision alone or in a batch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from krypenv.agents.base import register

from krypenv.agent_api import DecisionBatch
from krypenv.games import names

FORMAT = "krypenv-rllib/1"
META_NAME = "krypenv.json"


def read_meta(path: Path) -> dict[str, Any]:
    """The checkpoint's ``krypenv.json`` (ValueError naming the path and the problem)."""
    if not path.is_dir():
        raise ValueError(f"rllib:{path}: no such checkpoint folder (examples/rllib_ppo.py --out writes one)")
    try:
        meta = json.loads((path / META_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"rllib:{path}: no {META_NAME} in the folder (not saved by examples/rllib_ppo.py)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"rllib:{path}: unreadable {META_NAME} ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("game") not in names():
        raise ValueError(f"rllib:{path}: {META_NAME} is not of format {FORMAT} for a known game")
    return meta


class RLlibAgent:
    """A learned RLlib module playing from a batch's observations and masks."""

    name = "rllib"

    def __init__(self, module: Any, meta: dict[str, Any], path: Path) -> None:
        self.module, self.meta, self.path = module, meta, path

    @classmethod
    def load(cls, path: str | Path) -> RLlibAgent:
        """Restore the learner's module from a checkpoint folder (ValueError in one line on any problem)."""
        path = Path(path).expanduser()
        meta = read_meta(path)
        module_dir = path / "learner_group" / "learner" / "rl_module" / str(meta.get("module", "main"))
        if not (module_dir / "module_state.pkl").is_file():
            raise ValueError(f"rllib:{path}: no RLModule checkpoint at {module_dir.relative_to(path)}")
        try:
            from ray.rllib.core.rl_module.rl_module import RLModule
        except ImportError:
            raise ValueError(f"rllib:{path}: loading an RLlib policy needs Ray: pip install \"krypenv[ray]\"") from None
        try:
            module = RLModule.from_checkpoint(str(module_dir))
        except Exception as exc:  # noqa: BLE001 - RLlib's own errors are long; one line naming the path
            raise ValueError(f"rllib:{path}: cannot restore the module ({type(exc).__name__}: {exc})") from None
        module.eval()
        return cls(module, meta, path)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The argmax of the masked logits for every decision."""
        import torch
        from ray.rllib.core.columns import Columns

        obs_dim, actions = int(self.meta["obs_dim"]), int(self.meta["actions"])
        if batch.obs.shape[1] != obs_dim or batch.mask.shape[1] != actions:
            raise ValueError(f"rllib:{self.path} was trained on {self.meta['game']} with observations of {obs_dim} "
                             f"and {actions} actions; this game has {batch.obs.shape[1]} and {batch.mask.shape[1]}")
        obs = {"observations": torch.as_tensor(np.asarray(batch.obs, np.float32)),
               "action_mask": torch.as_tensor(np.asarray(batch.mask, np.float32))}
        with torch.no_grad():
            logits = self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        logits = logits.numpy().astype(np.float64)
        logits[np.asarray(batch.mask) == 0] = -np.inf  # the module masks too; never pick an illegal action
        return logits.argmax(axis=1).astype(np.int64)


register("rllib", RLlibAgent.load, "a policy trained with RLlib (examples/rllib_ppo.py; needs krypenv[ray])",
         takes_path=True, games=None)
