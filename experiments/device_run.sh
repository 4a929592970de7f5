#!/usr/bin/env bash
# Issue 42's prepared device run, for a session lent a GPU (the device tool's `run`):
#
#   here, once:   echo /.whl/ >> .git/info/exclude
#                 python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#                   --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#                   -d .whl numpy==2.4.6 gymnasium==1.4.0 pettingzoo==1.27.0 farama-notifications==0.0.6 \
#                   stable-baselines3==2.9.2
#                 pip wheel --no-deps --no-build-isolation -w .whl .   # krypenv itself (krypenv.agents is agents/)
#   run:          command "bash experiments/device_run.sh check", carry [".whl"], timeout_s 600; then at once, on
#                 the warm machine (its disk cache holds every kernel): "bash experiments/device_run.sh speed"
#
# numpy 2.4.6 because the image's numpy 2.5 breaks numba-cuda 0.30.4 (docs/results/gpu.md); gymnasium, pettingzoo
# and stable-baselines3 (krypenv.envs.vec's base class) are not in the image.  Stages, each bounded so that the
# call ends inside its limit:
#   check: every CPU and CUDA kernel compiled side by side into the disk caches (experiments/warm_numba.py --cuda,
#          at most WARM_SECONDS), then python experiments/device_check.py as it is (its table, device_check.json)
#          until BUDGET seconds from the start;
#   speed: python experiments/device_speed.py: the speed goals and the second process's first step, table last;
#   labels: python experiments/device_labels.py (issue 40): pimc's labels on the device against the CPU's, bit for
#          bit, and labels per second of each, at most LABEL_SECONDS (only when named).
# No stage named: check and speed.  Everything lands in $OUT (check/, speed/, labels/), which the tool brings back.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results}
STAGE=${1:-all}
WARM_SECONDS=${WARM_SECONDS:-240}
BUDGET=${BUDGET:-570}
LABEL_SECONDS=${LABEL_SECONDS:-420}
if compgen -G ".whl/*.whl" >/dev/null; then  # once per machine: a reinstall would make the disk caches stale
  [ -f /tmp/site/.installed ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl && touch /tmp/site/.installed; } || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import numpy, numba, numba_cuda, torch; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'torch', torch.__version__)"
mkdir -p "$OUT/check" "$OUT/speed" "$OUT/labels"
if [ "$STAGE" = labels ]; then
  timeout "$LABEL_SECONDS" python3 experiments/device_labels.py --out "$OUT/labels" ${LABEL_ARGS:-} 2>&1 \
    | tee "$OUT/labels/log.txt"
  echo "device_labels exit: ${PIPESTATUS[0]} (124: stopped at ${LABEL_SECONDS} s)"
  exit 0
fi
if [ "$STAGE" != speed ]; then
  timeout "$WARM_SECONDS" python3 experiments/warm_numba.py --cuda 2>&1 | tee "$OUT/check/warm.txt"
  echo "warm exit: ${PIPESTATUS[0]} after ${SECONDS} s"
  CHECK_SECONDS=$((BUDGET - SECONDS))
  timeout "$CHECK_SECONDS" python3 experiments/device_check.py --out "$OUT/check" ${CHECK_ARGS:-} 2>&1 | tee "$OUT/check/log.txt"
  code=${PIPESTATUS[0]}
  echo "device_check exit: $code (124: stopped at ${CHECK_SECONDS} s; its JSON holds the sections done)"
  if [ "$code" = 124 ] && [ -f "$OUT/check/device_check.json" ]; then  # its table, of the sections it finished
    python3 -c "import json, sys; sys.path.insert(0, 'experiments'); import device_check as d; \
print(d.table(json.load(open(sys.argv[1]))))" "$OUT/check/device_check.json"
  fi
fi
if [ "$STAGE" != check ]; then
  python3 experiments/device_speed.py --out "$OUT/speed" 2>&1 | tee "$OUT/speed/log.txt"
fi
