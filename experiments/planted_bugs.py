"""Plant realistic bugs by hand, one at a time, and check that the targeted tests catch each (issue 34).

    python experiments/planted_bugs.py                 # every bug; a Markdown table on stdout
    python experiments/planted_bugs.py --only K3 L1    # some of them

Each bug is one textual edit of a source file (the text it replaces must occur exactly once),
applied to the working tree, tested with ``python -m pytest -x -q`` on the tests named, and
reverted (also on Ctrl-C).  A bug is *caught* when those tests fail.  The big OpenSpiel game
modules (``krypenv/openspiel/krypkasino.py``, ``kungsholmskille.py``), too slow for mutation
testing, get the bugs ``K…`` and ``L…``; the others are the bugs each new test was written to
catch (the house rule: plant the bug a test is meant to catch and watch it fail).  Bugs in the
engines' and envs' files are planted only in this working tree, never committed.  Results:
docs/results/test-strength.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OS = "tests/openspiel/"
CONTRACTS, RL, TINY, GAMES = OS + "test_contracts.py", OS + "test_rl_loop.py", OS + "test_tiny.py", OS + "test_games.py"
INFO, KILLE_RESAMPLE = OS + "test_information_states.py", OS + "test_kille_resample.py"
KR, KI = "krypenv/openspiel/krypkasino.py", "krypenv/openspiel/kungsholmskille.py"
PIMC, LABELS, DISTILL = "agents/krypkasino/pimc.py", "krypenv/training/labels.py", "krypenv/training/distill.py"
STUDENT = "krypenv/training/student.py"
ENSEMBLE, ENSEMBLE_TESTS = "krypenv/training/ensemble.py", "tests/training/test_ensemble.py"
PIMC_VALUES, LABEL_TESTS = "tests/agents/krypkasino/test_pimc_values.py", "tests/training/test_labels.py"
DISTILL_TESTS, STUDENT_TESTS = "tests/training/test_distill.py", "tests/training/test_student.py"
ENGINE_TESTS = ("tests/krypkasino/test_golden.py", "tests/krypkasino/test_rules.py", "tests/krypkasino/test_engine.py")
ACTION_TESTS = (*ENGINE_TESTS, "tests/krypkasino/test_properties.py", "tests/krypkasino/test_actions.py")
CAPTURE_LOG_TEST = "tests/krypkasino/test_properties.py::test_capture_log_holds_every_copy_each_move_took"
KR_FINISH = "    _finish_range(st, rng, ints, base, cfg, lo, hi, rew, dones, final, term_obs, term_mask, scr)\n"
KR_OBSERVE = "    _observe_range(st, ints, cfg, lo, hi, obs, masks, scr)\n"
KI_FINISH = ("    _finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, rew, over, final, term_obs, "
             "term_mask)\n")
KI_OBSERVE = "    _observe_range(st, cash, ep, cfg, lo, hi, obs, masks)\n"
SEEDING = "                seed = (self.seed * 1_000_003 + zlib.crc32(key.encode())) % 2**32"


@dataclass(frozen=True)
class Bug:
    """One planted bug: where, the text replaced and its replacement, what it breaks, the tests that must fail."""

    key: str
    path: str
    old: str
    new: str
    what: str
    tests: tuple[str, ...]


BUGS = [
    # ---- krypenv/openspiel/krypkasino.py
    Bug("K1", KR, "utility_sum=0.0 if relative else float(-total * seats_per_side)",
        "utility_sum=0.0 if relative else float(-total)",
        "declared utility sum forgets that every seat of a team gets the team's return (K18)", (CONTRACTS,)),
    Bug("K2", KR, "worst = total + 10 * per_seat * max(1, rules.players)", "worst = total + 5 * per_seat",
        "utility bounds too tight for tabbes (K14)", (CONTRACTS,)),
    Bug("K3", KR, "max_game_length=self.dealt + rules.decisions_per_deal * (1 + self.dealt))",
        "max_game_length=self.dealt + rules.decisions_per_deal)",
        "max game length forgets the capture-choice actions", (CONTRACTS,)),
    Bug("K4", KR, "utility = pyspiel.GameType.Utility.ZERO_SUM if relative else pyspiel.GameType.Utility.CONSTANT_SUM",
        "utility = pyspiel.GameType.Utility.CONSTANT_SUM", "relative rewards declared constant-sum",
        (CONTRACTS,)),
    Bug("K5", KR, '            actor = self.cached["player"]\n', "            actor = None\n",
        "no seat is ever marked as having acted: rewards paid only at the end", (CONTRACTS,)),
    Bug("K6", KR, "P, dealer = rules.players, rules.players - 1", "P, dealer = rules.players, 0",
        "deal groups labelled from the wrong dealer: a seat's drawn packet is another seat's hand (K6)", (INFO,)),
    Bug("K7", KR, 'moves.append(card_name(int(deals.hist_card[i, m])) + (f">{caps}" if caps else ""))',
        "moves.append(card_name(int(deals.hist_card[i, m])))",
        "information state string loses the captured cards (no perfect recall)", (INFO,)),
    Bug("K8", KR, "                moves[m, 52:] = env.deals.move_capture(0, m)\n", "",
        "information state tensor loses the captured cards", (INFO,)),
    Bug("K9", KR, 'kwargs["two_player_deal"] = str(kwargs["two_player_deal"]).replace("x", "+")',
        'kwargs["two_player_deal"] = str(kwargs["two_player_deal"])', "two_player_deal=5x6 not translated",
        (CONTRACTS,)),
    Bug("K10", KR, 'kwargs["teams"] = parse_teams(str(teams) if teams else None, int(kwargs.get("players", 2)))',
        'kwargs["teams"] = parse_teams(None, int(kwargs.get("players", 2)))', "the teams parameter is ignored",
        (CONTRACTS,)),
    Bug("K11", KR, "earned = [0.0 - float(values[self._game.rules.team_of(s)])",
        "earned = [0.0 - float(values[min(s, len(values) - 1)])", "a seat gets another side's value with teams",
        (CONTRACTS,)),
    # ---- krypenv/openspiel/kungsholmskille.py
    Bug("L1", KI, "zero_sum = rules.max_deals is not None and rules.max_deals <= deals",
        "zero_sum = rules.max_deals is not None and rules.max_deals < deals",
        "a pot bound equal to max_deals declared general-sum", (CONTRACTS,)),
    Bug("L2", KI, "max_game_length=deals * (self.deck_size + 9 * P))", "max_game_length=deals * self.deck_size)",
        "max game length forgets the players' decisions", (CONTRACTS,)),
    Bug("L3", KI, "bound = 2 + deals * P + 2 * (2 * P + deals * P)", "bound = 2 + deals * P",
        "utility bounds forget the pot and the penalty (L14)", (CONTRACTS,)),
    Bug("L4", KI, "            deck[nth * P + seat_offset] = self.cards[j]",
        "            deck[seat_offset * HAND + nth] = self.cards[j]",
        "drawn hands laid into the deck seat by seat: seats get other hands than drawn (L4)", (CONTRACTS,)),
    Bug("L5", KI, "return (self._game.config.dealer0 + deal + 1) % self._game.config.players",
        "return (self._game.config.dealer0 + 1) % self._game.config.players",
        "forehand never moves: the deal does not pass left (L2)", (CONTRACTS,)),
    Bug("L6", KI, "    if seat != observer and DISCARD1 <= action < PLAY:", "    if False:",
        "other seats' discards shown in the information state (L8: face down)", (OS + "test_kille_resample.py",)),
    Bug("L7", KI, "        money = self.rows[2][8:8 + self._game.config.players]",
        "        money = self.rows[2][8:8 + self._game.config.players][::-1]",
        "money read for the wrong seats", (GAMES,)),
    Bug("L8", KI, "        self._settle(seat)\n", "        self._settle(None)\n",
        "no seat is ever marked as having acted: rewards paid only at the end", (CONTRACTS,)),
    Bug("L9", KI, "        self.pay.settle(self.money(), actor, self.current_player(), self.is_terminal())",
        "        self.pay.settle(self.money(), actor, self.current_player(), False)",
        "nobody is paid at the end of a pot", (CONTRACTS,)),
    Bug("L10", KI, "    first = int(params[\"first_dealer\"])", "    first = -1",
        "first_dealer ignored", (CONTRACTS,)),
    Bug("L11", KI, "        if state.dealing:\n            obs = obs.copy()",
        "        if False:\n            obs = obs.copy()",
        "while a later deck is drawn the observation shows the env's own interim deal", (KILLE_RESAMPLE,)),
    # ---- the fix of issue 34 and the new tests' targets
    Bug("R1", "krypenv/openspiel/rewards.py", "            if terminal or (seat == to_act and self.acted[seat]):",
        "            if terminal or seat == to_act:", "a seat is paid before its first action (learners drop it)",
        (RL,)),
    Bug("R2", "krypenv/openspiel/rewards.py", "            if terminal or (seat == to_act and self.acted[seat]):",
        "            if terminal or self.acted[seat]:",
        "every seat paid after every transition (the next seat's learner alone sees it)", (RL,)),
    Bug("S1", "krypenv/openspiel/krypkasino_resample.py", "        if weight < 1.0 and rng.random() >= weight:",
        "        if False:", "resampling without the duplicate-copy correction",
        (OS + "test_krypkasino_resample.py",)),
    Bug("S2", "krypenv/openspiel/krypkasino_resample.py",
        "            for c in played[g]:\n                rest.remove(c)\n", "",
        "played cards left in the pool of hidden cards (dealt twice)", (OS + "test_krypkasino_resample.py",)),
    Bug("S3", "krypenv/openspiel/kungsholmskille_resample.py", "    rng.shuffle(rest)\n", "",
        "the unconstrained hidden cards are not shuffled", (OS + "test_kille_resample.py",)),
    Bug("S4", "krypenv/openspiel/kungsholmskille_resample.py", "len(trick) + 1 == P - len(folded)",
        "len(trick) + 1 == P + len(folded)", "a trick's end counts the seats that folded (L6, L10)",
        (OS + "test_kille_resample.py",)),
    Bug("E1", "krypenv/openspiel/exploit.py", SEEDING, "                seed = self.seed",
        "one stream for every information state", (OS + "test_exploit_contracts.py",)),
    Bug("E2", "krypenv/openspiel/exploit.py", SEEDING,
        "                seed = (self.seed * 1_000_003 + hash(key)) % 2**32",
        "seeding by Python's hash: other figures in another process", (OS + "test_exploit_contracts.py",)),
    Bug("P1", "krypenv/openspiel/policy.py", "int(np.searchsorted(cum, u * cum[-1], side=\"right\"))",
        "int(np.searchsorted(cum, u * cum[-1], side=\"left\"))",
        "inverse CDF on the wrong side: a zero-probability action can be drawn", (OS + "test_policy_file.py",)),
    Bug("P2", "agents/tabular.py", "        u = batch.uniforms(1)[:, 0]", "        u = np.full(len(batch), 0.5)",
        "the tabular agent does not draw: always the median action", (OS + "test_policy_file.py",)),
    Bug("A1", "agents/base.py", "and self.lo <= value <= self.hi)", "and self.lo <= value < self.hi)",
        "a range excludes its upper bound", ("tests/agents/test_limits.py",)),
    Bug("A2", "agents/base.py", "        if (isinstance(value, bool) or not isinstance(value, (int, float))",
        "        if (not isinstance(value, (int, float))", "a bool passes as a number",
        ("tests/agents/test_limits.py",)),
    Bug("X1", "krypenv/training/exploit.py", "        out[key.strip()] = int(value) if value.isdigit() else value",
        "        out[key.strip()] = value", "--rules values never integers",
        ("tests/training/test_exploit_options.py",)),
    # ---- env seeding (engine files: planted here only, never committed)
    Bug("N1", "krypenv/rng.py", "        values[fresh] = np.frombuffer(os.urandom(8 * len(fresh)), np.uint64)\n", "",
        "no seed means seed 0, not fresh entropy (the envs seed through seed_states)", ("tests/envs/test_seeding.py",)),
    Bug("N2", "krypenv/envs/gym.py", "        if seed is not None or not self._seeded:\n            core.seed([seed])",
        "        if True:\n            core.seed([seed])", "reset() without a seed draws fresh entropy instead of "
        "continuing the stream", ("tests/envs/test_seeding.py",)),
    # ---- issue 40: expert iteration (labels, the student, the loop)
    Bug("D1", PIMC, "acc[2, m] += vals[m]", "acc[2, m] += vals[e]", "a move's label is the baseline's score",
        (PIMC_VALUES,)),
    Bug("D2", PIMC, "_at_least(out, TAKE + c, mean)\n                more = True\n",
        "_at_least(out, TAKE + c, mean)\n                more = True\n                break\n",
        "during a capture choice only the first table card leads to a capture", (PIMC_VALUES,)),
    Bug("D3", LABELS, 'tmp = final.with_name(final.name + f".tmp{os.getpid()}")', "tmp = final",
        "a shard is written under its own name (a kill leaves half a shard)", (LABEL_TESTS,)),
    Bug("D4", LABELS, "            p.unlink()", "            pass", "a killed shard's temporary is left behind",
        (LABEL_TESTS,)),
    Bug("D5", LABELS, " or not legal[np.arange(n), np.clip(a, 0, None)].all():", ":",
        "an illegal teacher action is read without a word", (LABEL_TESTS,)),
    Bug("D6", LABELS, "EOFError, zlib.error,", "EOFError,",
        "a corrupt shard is a zlib traceback, not an error naming it", (LABEL_TESTS,)),
    Bug("D7", DISTILL, "by_teacher = u[:, 0] < beta", "by_teacher = u[:, 0] < 1 - beta",
        "DAgger's mixing probability inverted", (DISTILL_TESTS,)),
    Bug("D8", STUDENT, "z = np.where(mask, values / temperature, -np.inf)", "z = np.where(mask, values, -np.inf)",
        "the target's temperature ignored", (DISTILL_TESTS,)),
    Bug("D9", STUDENT, "policy = -(target * logp).sum(-1).mean()", "policy = -(target * logp.exp()).sum(-1).mean()",
        "the policy loss on probabilities, not log-probabilities", (DISTILL_TESTS,)),
    Bug("D10", DISTILL, "or iteration < args.guide_from or", "or iteration <= args.guide_from or",
        "the guided teacher starts an iteration late", (DISTILL_TESTS,)),
    Bug("D11", STUDENT, "(args.value_scale * taught)", "(0.1 * taught)", "--value-scale ignored", (DISTILL_TESTS,)),
    Bug("D12", STUDENT, "+ np.repeat(lo, hi - lo)", "+ np.repeat(lo, hi - lo) * 0",
        "a minibatch reads the first labels' features", (DISTILL_TESTS,)),
    Bug("D13", DISTILL, "rng = np.random.default_rng([args.seed, it])",
        "rng = np.random.default_rng(args.seed) if it == min(set(range(args.iterations)) - done) else rng",
        "a resumed run trains another network than an uninterrupted one", (DISTILL_TESTS,)),
    Bug("D14", "agents/mlp.py", "ib + (h @ cw.T + cb)[b], 0.0)", "ib, 0.0)", "the numpy scorer forgets the state",
        (STUDENT_TESTS,)),
    Bug("D15", "krypenv/training/student.py", "scale = pol.pi_features_extractor.inv_high[:agent.obs_dim]",
        "scale = 1 + 0 * pol.pi_features_extractor.inv_high[:agent.obs_dim]",
        "a converted PPO network reads unscaled observations", (STUDENT_TESTS,)),
    Bug("D16", "agents/krypkasino/guided.py", "values[g, cands[g]] = -m", "values[g, cands[g]] = m",
        "the guided teacher's values have the wrong sign", (STUDENT_TESTS,)),
    Bug("D17", "agents/kungsholmskille/pimc.py", "out[k] = legal[int(np.argmax(values[k, legal]))]",
        "out[k] = legal[int(np.argmin(values[k, legal]))]", "Kungsholmskille's teacher plays its worst move",
        (DISTILL_TESTS,)),
    # ---- issue 42, session 23: the VecEnv step phase by phase, captures by card sets, vector copies
    Bug("V1", "krypenv/krypkasino/engine/kernels.py", "            x = cap[c]\n            table[c] -= x",
        "            x = 1\n            table[c] -= x",
        "apply_move takes one copy where the capture took two", ENGINE_TESTS),
    Bug("V2", "krypenv/krypkasino/engine/kernels.py", "        cards |= np.int64(cap[c] != 0) << c",
        "        cards |= np.int64(cap[c] != 0 and c > 0) << c",
        "apply_move's card set misses card 0", ENGINE_TESTS),
    Bug("V3", "krypenv/krypkasino/engine/kernels.py", "            log[k + x - 1] = c  # a second copy, if taken\n", "",
        "a card taken twice is logged once (the capture log's second copy stale)", (CAPTURE_LOG_TEST,)),
    Bug("V4", "krypenv/krypkasino/engine/kernels.py", "        for c in range(39, 39 + rolled(13)):",
        "        for c in range(39, 38 + rolled(13)):",
        "K8 misses a spade", (*ENGINE_TESTS, "tests/krypkasino/test_variants.py")),
    Bug("V5", "krypenv/krypkasino/engine/kernels.py", "            for c in range(13 * suit + 10, 13 * suit + 13):",
        "            for c in range(13 * suit + 10, 13 * suit + 12):",
        "K8 leaves the kings", ENGINE_TESTS),
    Bug("V6", "krypenv/krypkasino/engine/kernels.py", "        for suit in range(rolled(4)):",
        "        for suit in range(rolled(3)):",
        "K8 leaves one suit's court cards", ENGINE_TESTS),
    Bug("V7", "krypenv/krypkasino/actions.py", "    sums = subset_sums(tkey)  #",
        "    sums = subset_sums(tkey) | 1 << 13  #",
        "the card action's subset sums of another table", ACTION_TESTS),
    Bug("V8", "krypenv/krypkasino/actions.py", "maximal_captures_k(tkey, sums, HAND_VALUE[card], scr)",
        "maximal_captures_k(tkey, 0, HAND_VALUE[card], scr)",
        "the card action's captures ignore the sums it knows", ACTION_TESTS),
    Bug("V9", "krypenv/krypkasino/env_kernels.py", KR_FINISH + KR_OBSERVE, KR_OBSERVE + KR_FINISH,
        "the fused VecEnv step observes before it finishes", ("tests/krypkasino/test_vec.py", "tests/envs")),
    Bug("V10", "krypenv/kungsholmskille/env_kernels.py", KI_FINISH + KI_OBSERVE, KI_OBSERVE + KI_FINISH,
        "Kungsholmskille's fused VecEnv step observes before it finishes",
        ("tests/kungsholmskille/test_vec.py", "tests/envs")),
    Bug("V11", "krypenv/krypkasino/observation.py", "        o_seen[c] = hand[c] + table[c] + aside[c]",
        "        o_seen[c] = hand[c] + table[c]",
        "the observation's seen cards without the set-aside pile", ("tests/krypkasino/test_observation.py",)),
    Bug("V12", "krypenv/krypkasino/observation.py", "    for c in range(n):\n        o_aside[c] = aside[c]\n",
        "",
        "the observation's aside block not copied", ("tests/krypkasino/test_observation.py",)),
    Bug("V13", "krypenv/gpu_lean.py", "    return _unseen(n)", "    return n",
        "looped is the constant on the CPU (no vectorised copy)", ("tests/test_gpu_lean.py",)),
    Bug("V14", "krypenv/envs/vec.py", '"terminal_observation": term_obs[k]',
        '"terminal_observation": self._term_obs[i]',
        "terminal observations are views of the env's own buffer", ("tests/envs/test_conformance.py",)),
    Bug("V15", "krypenv/envs/vec.py", '"terminal_observation": term_obs[k]',
        '"terminal_observation": term_obs[0]',
        "two games' terminal observations share a row", ("tests/envs/test_conformance.py",)),
    Bug("V16", "krypenv/__init__.py", '_COMPILED_MARKS = (b"numba", b"krypenv.jit")',
        '_COMPILED_MARKS = (b"njit",)',
        "numba's cache folder hashes only the modules that say njit", ("tests/test_layout.py",)),
    Bug("V17", "krypenv/envs/vec.py", "    return list(starmap(dict, repeat((), n)))", "    return [{}] * n",
        "every game's info is one shared dict", ("tests/envs/test_conformance.py",)),
    # ---- issue 40, session 25: an ensemble of students as one network
    Bug("M1", ENSEMBLE, "np.concatenate([w * k for w, k in zip(ws, weights)], axis=1)",
        "np.concatenate(list(ws), axis=1)", "the members' logits summed, not weighted", (ENSEMBLE_TESTS,)),
    Bug("M2", ENSEMBLE, "sum(b * k for b, k in zip(bs, weights)))", "sum(bs))",
        "the members' biases summed, not weighted", (ENSEMBLE_TESTS,)),
    Bug("M3", ENSEMBLE, "        r, c = r + m.shape[0], c + m.shape[1]", "        r = r + m.shape[0]",
        "block-diagonal layers read the first member's units", (ENSEMBLE_TESTS,)),
    Bug("M4", ENSEMBLE, "    folded = None if shared else [", "    folded = None if True else [",
        "different input scalings not folded", (ENSEMBLE_TESTS,)),
    Bug("M5", ENSEMBLE, "len(units) == 1 and None not in units", "len(units) >= 1 and None not in units",
        "value heads of other units averaged", (ENSEMBLE_TESTS,)),
    Bug("M6", ENSEMBLE, '"obs_size", "n_actions", "action_features", "activation", "layers")',
        '"obs_size", "n_actions", "action_features", "layers")', "members of other activations merged",
        (ENSEMBLE_TESTS,)),
    Bug("M7", ENSEMBLE, "    if not 2 <= len(paths) <= MAX_MEMBERS:", "    if not 2 <= len(paths) < MAX_MEMBERS:",
        "the member bound one short", (ENSEMBLE_TESTS,)),
    Bug("M8", ENSEMBLE, "np.any(w <= 0)", "np.any(w < 0)", "a weight of 0 taken", (ENSEMBLE_TESTS,)),
    Bug("M9", ENSEMBLE, "    return w / w.sum()", "    return w", "weights not normalised", (ENSEMBLE_TESTS,)),
    Bug("M10", ENSEMBLE, "        if args.out.suffix != \".npz\":", "        if False:",
        "an output name without .npz taken", (ENSEMBLE_TESTS,)),
    Bug("M11", ENSEMBLE, '"inp_w": np.concatenate([s["inp"][0] for s in sc])',
        '"inp_w": _block([s["inp"][0] for s in sc])',
        "the scorer's feature layer block-diagonal (members past the first read no features)", (ENSEMBLE_TESTS,)),
    Bug("M12", ENSEMBLE, "len(units) == 1 and None not in units and len(", "len(units) == 1 and len(",
        "value heads whose cards name no unit merged (and the unit read from a card without one)", (ENSEMBLE_TESTS,)),
]


def run(bug: Bug) -> tuple[bool, float]:
    """Plant ``bug``, run its tests, revert; (caught, seconds)."""
    path = ROOT / bug.path
    original = path.read_text(encoding="utf-8")
    if original.count(bug.old) != 1:
        raise SystemExit(f"{bug.key}: the text to replace occurs {original.count(bug.old)} times in {bug.path}")
    start = time.perf_counter()
    try:
        path.write_text(original.replace(bug.old, bug.new), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *bug.tests],
                              cwd=ROOT, capture_output=True, text=True, check=False)
    finally:
        path.write_text(original, encoding="utf-8")
    return proc.returncode == 1, time.perf_counter() - start


def main() -> int:
    """Plant every bug (or ``--only`` some) and print the table; exit status 1 if one went unnoticed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="bug keys to plant (default: all)")
    args = parser.parse_args()
    chosen = [b for b in BUGS if not args.only or b.key in args.only]
    print("| bug | file | what | tests | caught | s |\n|---|---|---|---|---|---:|")
    missed = 0
    for bug in chosen:
        caught, seconds = run(bug)
        missed += not caught
        tests = ", ".join(t.removeprefix("tests/") for t in bug.tests)
        print(f"| {bug.key} | `{bug.path}` | {bug.what} | {tests} | {'yes' if caught else '**no**'} | {seconds:.0f} |",
              flush=True)
    print(f"\n{len(chosen) - missed} of {len(chosen)} caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
