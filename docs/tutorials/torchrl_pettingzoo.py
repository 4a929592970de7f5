"""TorchRL: Krypkasino's AEC env through TorchRL's ``PettingZooWrapper``, rolled out with masked random actions.

The wrapper turns the AEC env into a TensorDict env: with ``use_mask=True`` each group's
``action_mask`` (the agent on turn has its legal actions, the others none) and a ``mask`` of which
agents act. The rollout below is the loop a TorchRL collector runs; plug a policy module in the place
of ``masked_random``. Run: ``python docs/tutorials/torchrl_pettingzoo.py`` (``KRYPENV_TUTORIAL_STEPS``).
"""

from __future__ import annotations

import os

import torch
from torchrl.envs import PettingZooWrapper

from krypenv import krypkasino_v0

STEPS = int(os.environ.get("KRYPENV_TUTORIAL_STEPS", "2000"))


def masked_random(td, env: PettingZooWrapper, generator: torch.Generator):
    """Write into ``td`` a uniformly random legal action for every agent (an agent off turn has none: action 0)."""
    for group in env.group_map:
        mask = td[group, "action_mask"].bool()  # (agents in the group, 105)
        weights = mask.float() + (~mask.any(-1, keepdim=True)).float() * torch.nn.functional.one_hot(
            torch.zeros(mask.shape[:-1], dtype=torch.long), mask.shape[-1]).float()
        td[group, "action"] = torch.multinomial(weights, 1, generator=generator).squeeze(-1)
    return td


def main() -> None:
    """Play STEPS steps of 2-player deals and print the return each seat collected."""
    env = PettingZooWrapper(env=krypkasino_v0.env(players=2), use_mask=True, seed=0)
    print("groups:", env.group_map)
    print("action spec:", env.full_action_spec)
    generator = torch.Generator().manual_seed(0)
    td = env.reset()
    totals: dict[str, float] = {}
    for _ in range(STEPS):
        td = env.step(masked_random(td, env, generator))
        nxt = td["next"]
        for group in env.group_map:
            totals[group] = totals.get(group, 0.0) + float(nxt[group, "reward"].sum())
        td = env.reset() if bool(nxt["done"].all()) else env.step_mdp(td)
    print("summed rewards per group over", STEPS, "steps:", {g: round(v, 1) for g, v in totals.items()})


if __name__ == "__main__":
    main()
