#!/usr/bin/env bash
# Issue 42's one prepared device run, for a session lent a GPU (the device tool's `run`, one call, timeout_s 600):
#
#   here, once:   echo /.whl/ >> .git/info/exclude
#                 python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#                   --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#                   -d .whl numpy==2.4.6 gymnasium==1.4.0 pettingzoo==1.27.0 farama-notifications==0.0.6
#   run:          command "bash experiments/device_run.sh", carry [".whl"], timeout_s 600
#
# numpy 2.4.6 because the image's numpy 2.5 breaks numba-cuda 0.30.4 (docs/results/gpu.md); gymnasium and
# pettingzoo are not in the image.  Then, in this order, each bounded so that the next still runs:
#   1. python experiments/device_check.py as it is (its table, device_check.json), at most CHECK_SECONDS;
#   2. the register report of the kernels as the GPU's driver builds them is in device_check's benchmark rows;
#   3. python experiments/device_speed.py: the speed goals and the second process's first step, table last.
# Everything lands in $OUT (check/ and speed/), which the tool brings back.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results}
CHECK_SECONDS=${CHECK_SECONDS:-330}
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import numpy, numba, numba_cuda, torch; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'torch', torch.__version__)"
mkdir -p "$OUT/check" "$OUT/speed"
timeout "$CHECK_SECONDS" python3 experiments/device_check.py --out "$OUT/check" 2>&1 | tee "$OUT/check/log.txt"
echo "device_check exit: ${PIPESTATUS[0]} (124: stopped at ${CHECK_SECONDS} s; its JSON holds the sections done)"
python3 experiments/device_speed.py --out "$OUT/speed" 2>&1 | tee "$OUT/speed/log.txt"
