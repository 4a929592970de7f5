#!/usr/bin/env bash
# The benchmark of docs/research/learners.md: every learner of experiments/learners.py on Krypkasino's tiny, tuned as
# Rudolph et al. (ICLR 2026) did: each configuration on seeds 1-3 (--phase tune, TUNE CPU seconds), then the
# configuration of the lowest mean last-iterate NashConv on fresh seeds 11-13 (--phase final, FINAL CPU seconds).
# Rows are appended to OUT as each measurement is made (a killed run loses nothing measured).  GAME=kungsholmskille
# runs Kungsholmskille's benchmark (small, one deal a pot, expert's margin; no cfr+); LEARNERS picks the learners.
#   taskset -c 1 nice -n 5 experiments/learners_bench.sh [OUT] [TUNE] [FINAL]
set -euo pipefail
OUT=${1:-docs/research/learners-tiny.csv}
TUNE=${2:-45}
FINAL=${3:-90}
LEARNERS=${LEARNERS:-"ppo mmd nfsp deepcfr escher"}
GAME=${GAME:-krypkasino}
FLOOR=$([ "$GAME" = krypkasino ] && echo "cfr+" || true)  # the tabular floor needs the whole tree
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
run() { python experiments/learners.py "$@" --game "$GAME" --out "$OUT" --log-dir runs/learners --no-progress --no-tensorboard; }
configs() { python -c "import sys; sys.path.insert(0, 'experiments'); import learners; print(*learners.configs('$GAME', '$1'))"; }
for learner in $LEARNERS; do
  for config in $(configs "$learner"); do
    for seed in 1 2 3; do
      echo "$(date +%T) tune $learner $config s$seed"
      run "$learner" --config "$config" --seed "$seed" --phase tune --budget "$TUNE" --evals 4
    done
  done
done
for learner in $LEARNERS $FLOOR; do
  best=$(python -c "import sys; sys.path.insert(0, 'experiments'); import learners; print(learners.best_config('$OUT', '$learner'))")
  for seed in 11 12 13; do
    echo "$(date +%T) final $learner $best s$seed"
    run "$learner" --config "$best" --seed "$seed" --phase final --budget "$FINAL" --evals 6 --export runs/learners/export
  done
done
