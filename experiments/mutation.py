"""Mutation testing of the small high-risk modules with mutmut: stage a copy, then run mutmut in it.

    pip install -e ".[test]"                          # brings mutmut
    python experiments/mutation.py /tmp/krypenv-mutants [--set research|device|speed]
    cd /tmp/krypenv-mutants && nice -n 10 mutmut run --max-children 2 $(cat mutmut-functions.txt)
    python experiments/mutation.py --summary /tmp/krypenv-mutants [--set ...]   # the per-module table

Twenty sets (:data:`SETS`): ``draw`` (the student's draw from its policy, a label set's card),
``pimcdevice`` (issue 40: pimc's options, ``device`` among them),
``record`` (a training run's machine record, the BLAS-threads helper),
``search`` (issue 40: the guided search's forced rows and legal
features), ``views`` (issue 40: the guided search's shared views and the network's BLAS threads), ``house``
(issue 42: the device kernels' builder, the GPU engine benchmark's CPU twin), ``bench`` (issue 41: the
evaluation's pot bound, the mlp agent's draw), ``endgame`` (issue 40: the exact endgame's wrapper and pimc's game
vector),
``loop`` (issue 41: the self-play network's compact arithmetic), ``average``
(issue 41: the average policy's buffers and fit), ``explore`` (issue 41: the behaviour policy and its importance
weights),
``distill`` (issue 40: label shards, expert iteration's pure parts,
the student, the mlp network), ``research`` (issue 34: the agents' option limits, tabular policies,
``exploit``, the OpenSpiel deal, rewards and resampling), ``speed`` (issue 42: the register report, the
kernels' disk-cache plumbing), ``aec`` (issue 42: the entry modules' lazy loader, the steps' action check)
``vec`` (issue 42: the VecEnv's Python between its kernels), ``ensemble`` (issue 40: students merged into one
network), ``warm`` (issue 40: ``--init-from`` a student, the networks' shapes), ``launch`` (the simulator's launch,
``krypenv exploit``'s learner) and ``device`` (issue 33: the Python
of the device env's shell, the ``mlp`` agent, self-play's per-seat advantages; the compiled
rules are not mutated here, mutmut's trampolines do not compile, and the GPU round's bugs were
planted by hand instead: ``experiments/planted_gpu.py``).  The web server's guard, store and menu
have their own configuration (``[tool.mutmut]`` in pyproject.toml, docs/results/mutation.md).

Survivors can be run again after the tests improve: stage anew into another directory, ``mutmut
run NAME ...`` there, and ``--summary FIRST SECOND`` lets the later verdicts count.

mutmut 3 mutates a copy of the package under ``mutants/`` and names each function by its file's
path, so it needs the wheel's layout: here ``agents/`` is the package ``krypenv.agents`` and
``checkpoints/`` is ``krypenv/checkpoints`` (``[tool.setuptools.package-dir]``).  This script
copies the tracked files into a directory in that layout and adds mutmut's configuration
(the set's modules and tests); the repository itself is never touched.  Only the mutants of the
set's functions are run.  ``--summary`` counts them per module, the survivors judged equivalent
(``experiments/mutation_equivalent.txt``, each with why) apart.  The figures:
docs/results/test-strength.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# research: the modules mutated, as files of the wheel's layout
MODULES = [
    "krypenv/agents/base.py",  # the option limits and parsing (only those mutants are counted, see FUNCTIONS)
    "krypenv/agents/tabular.py",
    "krypenv/openspiel/policy.py",
    "krypenv/openspiel/exploit.py",
    "krypenv/training/exploit.py",
    "krypenv/openspiel/deal.py",
    "krypenv/openspiel/rewards.py",
    "krypenv/openspiel/krypkasino_resample.py",
    "krypenv/openspiel/kungsholmskille_resample.py",
]
# mutmut's names of the functions whose mutants are run (the option limits of base.py; exploit's CLI and inputs,
# not its PPO training, which tests/training/test_exploit.py runs end to end)
FUNCTIONS = [
    "krypenv.agents.base.xǁLimitǁ*", "krypenv.agents.base.x__parse_value*", "krypenv.agents.base.x_parse_options*",
    "krypenv.agents.tabular.*", "krypenv.openspiel.policy.*", "krypenv.openspiel.exploit.*",
    "krypenv.training.exploit.xǁApproxConfigǁ*", "krypenv.training.exploit.x_parse_rules*",
    "krypenv.training.exploit.x__at_least*", "krypenv.training.exploit.x_run*", "krypenv.training.exploit.x_exact*",
    "krypenv.training.exploit.x_result_text*", "krypenv.openspiel.deal.*", "krypenv.openspiel.rewards.*",
    "krypenv.openspiel.krypkasino_resample.*", "krypenv.openspiel.kungsholmskille_resample.*",
]
TESTS = ["tests/openspiel", "tests/agents/test_limits.py", "tests/agents/test_base.py",
         "tests/training/test_exploit.py", "tests/training/test_exploit_options.py"]

# device: the env shell's Python (the compiled drivers and kernels run under it), the mlp agent, self-play's credit
SETS = {
    "research": (MODULES, FUNCTIONS, TESTS),
    "device": (["krypenv/envs/device.py", "krypenv/agents/mlp.py", "krypenv/training/selfplay.py"],
               ["krypenv.envs.device.*", "krypenv.agents.mlp.*", "krypenv.training.selfplay.x_seat_advantages*"],
               ["tests/envs/test_device.py", "tests/agents/test_mlp.py", "tests/training/test_selfplay.py"]),
    # speed (issue 42): the register report and its budgets, the kernels' disk-cache plumbing, the env's parts and
    # their launches (compiled code is not mutated: the legality check first_illegal had its bugs planted by hand)
    "speed": (["krypenv/eval/ptxas.py", "krypenv/envs/cuda.py"],
              ["krypenv.eval.ptxas.*", "krypenv.envs.cuda.x_rebind*", "krypenv.envs.cuda.x_source_digest*",
               "krypenv.envs.cuda.x_cached*", "krypenv.envs.cuda.x_threads_per_sm*", "krypenv.envs.cuda.x_env_kernels*",
               "krypenv.envs.cuda.xǁEnvKernelsǁ*"],
              ["tests/cuda/test_registers.py", "tests/cuda/test_ptxas_report.py", "tests/cuda/test_cache.py",
               "tests/envs/test_cuda_parts.py"]),
}
# distill (issue 40): the label shards, expert iteration's pure parts (targets, loss, arguments, schedule, data), the
# student and the mlp format's network; the whole loop's end-to-end tests are left out of the mutants' runs (minutes
# each), the pieces they drive are tested one by one
SETS["distill"] = (
    ["krypenv/training/labels.py", "krypenv/training/distill.py", "krypenv/training/student.py",
     "krypenv/agents/mlp.py"],
    ["krypenv.training.labels.*", "krypenv.training.distill.x_check_args*",
     "krypenv.training.distill.x_sizes*",
     "krypenv.training.distill.x_shard_seeds*", "krypenv.training.distill.x_teacher_of*",
     "krypenv.training.distill.x_jobs_of*", "krypenv.training.distill.x__number*", "krypenv.training.student.*",
     "krypenv.agents.mlp.xǁNetworkǁ*"],
    ["tests/training/test_labels.py", "tests/training/test_distill.py", "tests/training/test_student.py",
     "tests/agents/test_mlp.py"])
# aec (issue 42, the AEC step's speed-up): the entry modules' lazy loader and the action check of every env's step
SETS["aec"] = (["krypenv/games.py", "krypenv/envs/spaces.py"],
               ["krypenv.games.x_lazy_exports*", "krypenv.envs.spaces.x_as_action*"],
               ["tests/test_games.py", "tests/envs/test_env_inputs.py"])
# loop (issue 41, the fast CPU loop): the self-play network's compact arithmetic and the helpers it rests on
SETS["loop"] = (["krypenv/training/mmdnet.py"],
                ["krypenv.training.mmdnet.x_used_columns*", "krypenv.training.mmdnet.x_padded*",
                 "krypenv.training.mmdnet.x_compact*", "krypenv.training.mmdnet.x_probabilities*",
                 "krypenv.training.mmdnet.xǁPolicyǁevaluate*", "krypenv.training.mmdnet.x__head*",
                 "krypenv.training.mmdnet.x_sample*"],
                ["tests/training/test_mmdnet.py"])
# average (issue 41, the sampled learner's average policy): the buffers, the cross-entropy fit and Polyak averaging
SETS["average"] = (["krypenv/training/average.py"], ["krypenv.training.average.*"], ["tests/training/test_average.py"])
# explore (issue 41, the sampled learner's exploration): the behaviour policy and the opponents' importance weights
SETS["explore"] = (["krypenv/training/mmdnet.py", "krypenv/training/critic.py"],
                   ["krypenv.training.mmdnet.x_behaviour*", "krypenv.training.critic.x_opponent_ratios*"],
                   ["tests/training/test_mmdnet.py", "tests/training/test_critic.py"])
# endgame (issue 40, the exact 2-player endgame): the wrapper's Python (which decisions it solves, the sub-batches, the
# spec) and pimc's game vector; the compiled solver is not mutated (mutmut's trampolines do not compile), its bugs were
# planted by hand (docs/results/test-strength.md)
SETS["endgame"] = (["krypenv/agents/krypkasino/endgame.py", "krypenv/agents/krypkasino/pimc.py"],
                   ["krypenv.agents.krypkasino.endgame.xǁEndgameAgentǁ*", "krypenv.agents.krypkasino.endgame.x_sub*",
                    "krypenv.agents.krypkasino.endgame.x_solve_batch*",
                    "krypenv.agents.krypkasino.endgame.x_make*", "krypenv.agents.krypkasino.pimc.x_game_vector*"],
                   ["tests/agents/krypkasino/test_endgame.py", "tests/agents/krypkasino/test_pimc.py"])
# bench (issue 41, the learners' benchmark on Kungsholmskille): the evaluation's pot bound and the mlp agent's draw that
# the benchmark's seat policies play by (the driver in experiments/ is not a package: its bugs were planted by hand)
SETS["bench"] = (["krypenv/eval/kungsholmskille/config.py", "krypenv/agents/mlp.py"],
                 ["krypenv.eval.kungsholmskille.config.*", "krypenv.agents.mlp.x_draw*"],
                 ["tests/eval/kungsholmskille/test_eval_small.py", "tests/agents/test_mlp.py"])
# house (issue 42, the shells hold what both games share): the device kernels' builder and the GPU engine benchmark's
# CPU twin; the kernels' shared launch tests (sits_out, set_status) are compiled, their bugs were planted by hand
SETS["house"] = (["krypenv/envs/cuda.py", "krypenv/bench.py"],
                 ["krypenv.envs.cuda.x_kernel_builder*", "krypenv.bench.x_gpu_engine*"],
                 ["tests/envs/test_cuda_parts.py", "tests/test_bench.py"])
# search (issue 40, the guided search's speed): the rollouts' forced rows and draws, the legal actions' features and
# the network's two feature layouts; the compiled feature kernels are not mutated, their bugs were planted by hand
SETS["search"] = (["krypenv/agents/krypkasino/guided.py", "krypenv/agents/krypkasino/move_features.py",
                   "krypenv/agents/mlp.py"],
                  ["krypenv.agents.krypkasino.guided.xǁGuidedPIMCǁ_rollout_actions*",
                   "krypenv.agents.krypkasino.guided.xǁGuidedPIMCǁ_pick*",
                   "krypenv.agents.krypkasino.guided.xǁGuidedPIMCǁ_logits*",
                   "krypenv.agents.krypkasino.guided.xǁGuidedPIMCǁ_observe*",
                   "krypenv.agents.krypkasino.move_features.x__features*",
                   "krypenv.agents.krypkasino.move_features.x_legal_features*",
                   "krypenv.agents.krypkasino.move_features.x_action_features*",
                   "krypenv.agents.krypkasino.move_features.x_row_features*", "krypenv.agents.mlp.x_legal_rows*"],
                  ["tests/agents/krypkasino/test_move_features.py", "tests/agents/krypkasino/test_guided.py",
                   "tests/agents/test_mlp.py"])
SETS["views"] = (["krypenv/agents/krypkasino/guided.py", "krypenv/agents/krypkasino/policy_nets.py",
                  "krypenv/agents/mlp.py"],
                 ["krypenv.agents.krypkasino.guided.xǁGuidedPIMCǁ_shared_views*",
                  "krypenv.agents.krypkasino.guided.xǁGuidedPIMCǁ_rollout_actions*",
                  "krypenv.agents.mlp.x__blas_controller*", "krypenv.agents.mlp.x_blas_threads*",
                  "krypenv.agents.krypkasino.policy_nets.xǁMLPNetǁ*"],
                 ["tests/agents/krypkasino/test_guided.py", "tests/agents/krypkasino/test_shared_views.py",
                  "tests/agents/test_mlp.py"])
SETS["record"] = (["krypenv/training/common.py", "krypenv/agents/mlp.py", "krypenv/training/distill.py"],
                  ["krypenv.training.common.x_machine*", "krypenv.training.common.x__version*",
                   "krypenv.agents.mlp.x__blas_controller*", "krypenv.agents.mlp.x_blas_threads*",
                   "krypenv.training.distill.x_label_shard*"],
                  ["tests/training/test_krypkasino.py", "tests/agents/test_mlp.py", "tests/training/test_distill.py"])
SETS["draw"] = (["krypenv/agents/mlp.py", "krypenv/training/labels.py"],
                ["krypenv.agents.mlp.x_policy_draw*", "krypenv.training.labels.x_card_for*"],
                ["tests/training/test_distill.py", "tests/training/test_labels.py"])
# vec (issue 42, the VecEnv's Python between the kernels): the terminal rows taken in one copy, the info dicts, the
# action check and the SB3 plumbing; the compiled step is not mutated, its bugs were planted by hand (V14, V15, V17)
SETS["vec"] = (["krypenv/envs/vec.py"], ["krypenv.envs.vec.*"],
               ["tests/envs/test_conformance.py", "tests/envs/test_env_inputs.py", "tests/envs/test_env_keywords.py",
                "tests/envs/test_seeding.py"])
SETS["ensemble"] = (["krypenv/training/ensemble.py"], ["krypenv.training.ensemble.*"],
                    ["tests/training/test_ensemble.py"])
# warm (issue 40, PPO fine-tuning a distilled student): --init-from's warm starts, the student copied into a train.py
# network, the networks' critic and scorer shapes, and the checkpoints that keep them
SETS["warm"] = (["krypenv/training/warm.py", "krypenv/training/student.py", "krypenv/agents/krypkasino/move_policy.py",
                 "krypenv/training/krypkasino.py", "krypenv/training/kungsholmskille.py",
                 "krypenv/agents/kungsholmskille/ppo.py"],
                ["krypenv.training.warm.xǁWarmStartǁ*", "krypenv.training.warm.x_init_checkpoint*",
                 "krypenv.training.warm.x__check_sizes*", "krypenv.training.warm.x_load_weights*",
                 "krypenv.training.warm.x__value_scale*",
                 "krypenv.training.student.x_to_policy*", "krypenv.training.student.x__names*",
                 "krypenv.training.student.x__parts*", "krypenv.training.student.x__pairs*",
                 "krypenv.training.student.x__widths*", "krypenv.training.student.x_policy_shapes*",
                 "krypenv.agents.krypkasino.move_policy.xǁMoveScorerǁ__init__*",
                 "krypenv.agents.krypkasino.move_policy.xǁMovePolicyǁ__init__*",
                 "krypenv.agents.krypkasino.move_policy.xǁMovePolicyǁ_build_mlp_extractor*",
                 "krypenv.agents.krypkasino.move_policy.xǁMovePolicyǁ_get_constructor_parameters*",
                 "krypenv.training.krypkasino.x_network*", "krypenv.training.krypkasino.x_action_features*",
                 "krypenv.training.krypkasino.x_check_init*", "krypenv.training.kungsholmskille.x_network*",
                 "krypenv.agents.kungsholmskille.ppo.x_policy_kwargs*",
                 "krypenv.agents.kungsholmskille.ppo.x__custom_objects*"],
                ["tests/training/test_warm_start.py"])
SETS["launch"] = (["krypenv/envs/cuda.py", "krypenv/training/exploit.py"],
                  ["krypenv.envs.cuda.x_launch*", "krypenv.training.exploit.x_train_learner*"],
                  ["tests/cuda/test_cuda.py", "tests/envs/test_cuda_parts.py", "tests/training/test_exploit.py",
                   "tests/training/test_warm_start.py"])
# pimcdevice (issue 40, pimc on a GPU): the agent's options (``device`` among them) and the spec's builder; the
# device path's Python (the kernel's arguments, its launch) is checked in the simulator's subprocess, which mutmut
# cannot see into, so its bugs were planted by hand (docs/results/gpu.md)
SETS["pimcdevice"] = (["krypenv/agents/krypkasino/pimc.py"],
                      ["krypenv.agents.krypkasino.pimc.xǁPIMCAgentǁ__init__*", "krypenv.agents.krypkasino.pimc.x_make*",
                       "krypenv.agents.krypkasino.pimc.x__int_option*"],
                      ["tests/agents/krypkasino/test_pimc.py"])
# per set, what pytest is told besides (speed: the kernels' compiles run in subprocesses mutmut cannot see into;
# distill: the whole loop's runs are minutes a mutant)
PYTEST_ARGS = {"pimcdevice": ["-k", "option or device"],
               "speed": ["-m", "not slow"], "distill": ["-k", "not tiny_run and not init_from_ppo"],
               "aec": ["-k", "entry_loads or test_env_inputs"],  # aec: the registry tests that need docs/ left out
               "house": ["-k", "not interleaved"],  # house: the rounds of experiments/bench_compare.py (not staged)
               "search": ["-k", ("legal or forced or lockstep or either_layout or parallel_and_serial or refused or "
                                 "reproducible or softmax or never_ask or vecenv_appends")],
               "views": ["-k", ("shared or threads_option or forced or lockstep or never_ask or network_pieces or "
                                "option_errors or bad_policies")],
               "record": ["-k", "machine or blas or threadpoolctl"],
               "draw": ["-k", "policy_draw or label or shard or card"],
               "launch": ["-k", "not kernels_in_the_simulator"]}  # launch: not the 3-minute simulator check
MOVED = {"agents": "krypenv/agents", "eval": "krypenv/eval", "checkpoints": "krypenv/checkpoints"}


def stage(dest: Path, chosen: str) -> None:
    """Copy the tracked files into ``dest`` in the wheel's layout and add mutmut's configuration for set ``chosen``."""
    modules, functions, tests = SETS[chosen]
    if dest.exists():
        shutil.rmtree(dest)
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        top, _, rest = name.partition("/")
        target = dest / (f"{MOVED[top]}/{rest}" if top in MOVED and rest else name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    shutil.copytree(ROOT / "checkpoints", dest / "checkpoints", dirs_exist_ok=True)  # tests read it from the root
    quoted = ", ".join(f'"{t}"' for t in tests)
    config = (f"\n[tool.mutmut]\nsource_paths = [\"krypenv/\"]\nalso_copy = [\"checkpoints\"]"
              f"\nonly_mutate = [{', '.join(repr(m) for m in modules)}]"
              f"\npytest_add_cli_args = [\"-p\", \"no:cacheprovider\", \"-p\", \"no:xdist\""
              f"{''.join(f', {chr(34)}{a}{chr(34)}' for a in PYTEST_ARGS.get(chosen, []))}]"
              f"\npytest_add_cli_args_test_selection = [{quoted}]\n").replace("'", '"')
    project = (dest / "pyproject.toml").read_text(encoding="utf-8")
    start = project.find("\n[tool.mutmut]")  # the web server's set (used in the repository itself) gives way
    if start >= 0:
        end = project.find("\n[", start + 1)
        project = project[:start] + (project[end:] if end >= 0 else "\n")
    (dest / "pyproject.toml").write_text(project + config, encoding="utf-8")
    (dest / "mutmut-functions.txt").write_text("\n".join(functions) + "\n", encoding="utf-8")


STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", None: "not checked", 36: "timeout",
          24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout"}  # mutmut's exit codes (mutmut.stats)


def summary(runs: list[Path], equivalent: Path, functions: list[str]) -> str:
    """Per module: mutants of ``functions``, killed (a timeout counts as killed), survivors judged equivalent
    (``equivalent``: one mutant name per line, ``#`` comments), other survivors, and the kill rate of the others.

    ``runs`` are staged directories of runs of the same mutants, oldest first: a later run's verdict on a mutant
    (survivors of a run run again with more tests) replaces an earlier one.
    """
    judged = {line.split("#")[0].strip() for line in equivalent.read_text(encoding="utf-8").splitlines()} - {""}
    verdicts: dict[str, int | None] = {}
    for staged in runs:
        for meta in sorted((staged / "mutants").rglob("*.py.meta")):
            for name, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items():
                if code is not None or name not in verdicts:
                    verdicts[name] = code
    rows: dict[str, Counter] = {}
    for name, code in sorted(verdicts.items()):
        if not any(fnmatch.fnmatch(name, pattern) for pattern in functions):
            continue
        status = STATUS.get(code, "suspicious")
        if status == "survived" and name in judged:
            status = "equivalent"
        rows.setdefault(name.split(".x")[0], Counter())[status] += 1
    lines = ["| module | mutants | killed | timeout | equivalent | survived | no tests | not checked | kill rate |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    total: Counter = Counter()
    for module, c in [*sorted(rows.items()), ("all", None)]:
        c = total if c is None else c
        if module != "all":
            total.update(c)
        scored = c["killed"] + c["timeout"] + c["survived"] + c["no tests"]
        rate = f"{100 * (c['killed'] + c['timeout']) / scored:.1f} %" if scored else "—"
        lines.append(f"| `{module}` | {sum(c.values())} | {c['killed']} | {c['timeout']} | {c['equivalent']} | "
                     f"{c['survived']} | {c['no tests']} | {c['not checked']} | {rate} |")
    return "\n".join(lines)


def main() -> int:
    """Stage into the directory given and print the commands to run, or (``--summary``) tabulate a finished run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, nargs="+",
                        help="the directory to stage into (replaced), or with --summary the runs to read, oldest first")
    parser.add_argument("--summary", action="store_true", help="print the per-module table of finished runs")
    parser.add_argument("--set", choices=sorted(SETS), default="research", help="the modules to mutate")
    args = parser.parse_args()
    if args.summary:
        print(summary(args.dest, ROOT / "experiments" / "mutation_equivalent.txt", SETS[args.set][1]))
        return 0
    dest = args.dest[0]
    stage(dest.resolve(), args.set)
    print(f"staged {dest}; now:\n  cd {dest} && nice -n 10 mutmut run --max-children 2 "
          f"$(cat mutmut-functions.txt | tr '\\n' ' ')\n  mutmut results\n"
          f"  python {Path(__file__).relative_to(ROOT)} --summary {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
