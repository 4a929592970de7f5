"""Plant the bugs the GPU round's tests are meant to catch, one at a time, and check that each is caught.

    nice python experiments/planted_gpu.py [--only NAME,...] [--timeout SECONDS]

Each bug is one textual change to one module (the engines' no-allocation rewrite, the device env's per-seat
rewards and observations, its shell, the CUDA kernels, seeding, the mlp agent, self-play's credit); the
named tests run against it (a fresh numba cache where the file is compiled code, so it is rebuilt); the
file is restored whatever happens.  A bug is *caught* when the tests fail (a test looping past the suite's
per-test limit, ``faulthandler_timeout`` in pyproject.toml, fails too), and *hung* when the run passes ``--timeout``
and is killed (an endless loop outside any test's limit, such as at import), which counts as caught too.
Prints one line per bug and a summary; the exit status is the number of bugs not caught.  The numba modules
make this slow (each bug recompiles): about an hour on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BUGS = [  # (name, file, text, planted text, tests)
    ('seed-words', 'krypenv/rng.py',
     'n_words = 2 if words[1] != 0 else 1',
     'n_words = 1',
     'tests/test_rng.py'),
    ('deck-uniforms', 'krypenv/rng.py',
     '    for k in range(n - 1):\n        u[k] = rand_float(rng, i)',
     '    for k in range(n - 2):\n        u[k] = rand_float(rng, i)',
     'tests/test_rng.py'),
    ('reward-sign', 'krypenv/krypkasino/device_drivers.py',
     'rew[i, s] = base[i, s] - v',
     'rew[i, s] = v - base[i, s]',
     'tests/envs/test_device.py -k krypkasino'),
    ('kille-base-reset', 'krypenv/kungsholmskille/device_drivers.py',
     '    E.reset_one(st, cash, ep, rng, cfg, i, buf)\n    base[i] = 0\n    return True',
     '    E.reset_one(st, cash, ep, rng, cfg, i, buf)\n    return True',
     'tests/envs/test_device.py -k kungsholmskille'),
    ('observe-learner', 'krypenv/krypkasino/device_drivers.py',
     'seat = np.int64(st[i, K.TURN])',
     'seat = np.int64(E.learner_seat(st, cfg, i))',
     'tests/envs/test_device.py -k self_play'),
    ('terminal-perspective', 'krypenv/kungsholmskille/device_drivers.py',
     'E.observe_one(st, cash, ep, cfg, i, actor, term_obs[i]',
     'E.observe_one(st, cash, ep, cfg, i, 0, term_obs[i]',
     "tests/envs/test_device.py -k 'kungsholmskille and (vecenv or aec)'"),
    ('candidate-order', 'krypenv/krypkasino/engine/expansion.py',
     '        if m < size:\n            card_capture',
     '        if m <= size:\n            card_capture',
     'tests/krypkasino/test_golden.py tests/krypkasino/test_properties.py'),
    ('choice-min', 'krypenv/krypkasino/actions.py',
     '        lo[c] = 127\n',
     '        lo[c] = 1\n',
     'tests/krypkasino/test_actions.py tests/krypkasino/test_properties.py'),
    ('choice-confirm', 'krypenv/krypkasino/actions.py',
     '            if _same(cand, fixed):\n                confirm = 1',
     '            if holds(cand, fixed):\n                confirm = 1',
     'tests/krypkasino/test_actions.py'),
    ('random-choice-mask', 'krypenv/krypkasino/env_kernels.py',
     '        mask_into(hand, table, choice, 0, mask, scr)\n        return pick_legal(mask, u), -1',
     '        mask_into(hand, table, choice, 0, mask, scr)\n        return pick_legal(mask[::-1], u), -1',
     'tests/krypkasino/test_vec.py tests/envs/test_conformance.py'),
    ('expert-terms', 'agents/krypkasino/tactics.py',
     '        setup = p + dub\n',
     '        setup = p\n',
     'tests/agents/krypkasino'),
    ('kille-work', 'agents/kungsholmskille/tactics.py',
     '        u2[x] = unseen[x]\n',
     '        u2[x] = 0\n',
     'tests/agents/kungsholmskille'),
    ('gae-lambda', 'krypenv/training/selfplay.py',
     'value[t] + lam * gae[col, a]',
     'value[t] + gae[col, a]',
     'tests/training/test_selfplay.py -k oracle'),
    ('check-skipped', 'krypenv/envs/device.py',
     '            if not self._lose:\n                self._check_cpu(b["actions"])',
     '            if False:\n                self._check_cpu(b["actions"])',
     'tests/envs/test_device.py -k bad_input'),
    ('mlp-unmasked', 'agents/mlp.py',
     '        return np.where(legal, logits, -np.inf)\n',
     '        return logits\n',
     'tests/agents/test_mlp.py'),
    ('kernel-no-finish', 'krypenv/envs/cuda.py',
     '("finish", STEP), ("seats", AGAIN), ',
     '("seats", AGAIN), ',
     'tests/cuda/test_cuda.py -k simulator'),
    ('kernel-no-second-seats', 'krypenv/envs/cuda.py',
     '("finish", STEP), ("seats", AGAIN), ',
     '("finish", STEP), ',
     'tests/cuda/test_cuda.py -k simulator'),
    ('kernel-policy-uniform', 'krypenv/kungsholmskille/cuda_kernels.py',
     '            for _ in range(uniforms):',
     '            for _ in range(uniforms + 1):',
     'tests/cuda/test_cuda.py -k simulator'),
]


def run(bug: tuple[str, str, str, str, str], timeout: float) -> str:
    """Plant one bug, run its tests, restore the file: ``caught`` (the tests failed), ``hung`` (they ran past
    ``timeout`` seconds and were killed: an endless loop that CI would stop, red) or ``NOT CAUGHT``."""
    name, file, old, new, tests = bug
    path = ROOT / file
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise SystemExit(f"{name}: the text to change is not found exactly once in {file}")
    with tempfile.TemporaryDirectory() as cache:  # compiled modules: a fresh numba cache, so the bug is compiled in
        env = {**os.environ, "NUMBA_CACHE_DIR": cache} if "@njit" in text or "jit(" in text else dict(os.environ)
        try:
            path.write_text(text.replace(old, new), encoding="utf-8")
            proc = subprocess.Popen(f"{sys.executable} -m pytest -x -q -p no:cacheprovider {tests}", shell=True,
                                    cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)  # its own process group: the shell and pytest killed
            try:
                return "caught" if proc.wait(timeout=timeout) != 0 else "NOT CAUGHT"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return "hung"
        finally:
            path.write_text(text, encoding="utf-8")


def main() -> int:
    """Plant every bug (or the named ones); print which were caught."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds a bug's tests may run (default 1800)")
    args = parser.parse_args()
    chosen = [b for b in BUGS if not args.only or b[0] in args.only.split(",")]
    missed = 0
    for bug in chosen:
        verdict = run(bug, args.timeout)
        missed += verdict == "NOT CAUGHT"
        print(f"{bug[0]:24s} {verdict}  ({bug[1]}; {bug[4]})", flush=True)
    print(f"{len(chosen) - missed} of {len(chosen)} planted bugs caught")
    return missed


if __name__ == "__main__":
    raise SystemExit(main())
