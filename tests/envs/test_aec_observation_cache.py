"""The AEC env's observation of the agent to act, written by the step kernel, is the one the batch computes afresh.

Each game's ``k_aec_step`` writes the next agent's observation and mask while the episode runs, and
``observe`` returns copies of them; this holds them, step by step over whole random episodes at every player
count, to :meth:`krypenv.envs.batch.EnvBatch.observe` of the same state (the path taken without the cache).
"""

from __future__ import annotations

import numpy as np
import pytest

from krypenv.games import GAMES

TABLES = [(name, players) for name in GAMES for players in GAMES[name].players]


@pytest.mark.parametrize(("name", "players"), TABLES)
def test_the_written_observation_is_the_fresh_one(name: str, players: int) -> None:
    """Every decision of 3 seeded episodes: the cached dict equals a fresh observe, and is a copy."""
    env = GAMES[name].part("entry").raw_env(players=players)
    rng = np.random.default_rng(players)
    cached = 0
    for seed in range(3):
        env.reset(seed=seed)
        while env.agents:
            agent = env.agent_selection
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            cached += env._cache is not None and env._cache[0] == agent
            fresh, mask = env.core.observe(0, env._seat_of[agent])
            assert np.array_equal(obs["observation"], fresh) and np.array_equal(obs["action_mask"], mask)
            obs["action_mask"][:] = 0  # a copy: changing it changes nothing the env holds
            assert np.array_equal(env.observe(agent)["action_mask"], mask)
            env.step(int(rng.choice(np.flatnonzero(mask))))
    assert cached > 0  # the kernel's observation was used, not only the fresh path
