#!/usr/bin/env bash
# The real-program suite (benchmarks/programs) on an NVIDIA GPU host: --mode gpu (clpy kernels
# vs the hand-written original kernels, whole programs with DeviceArrays / the original-style
# pyopencl host / NumPy arguments, link bandwidth) and --mode sim --threads all (PoCL on every
# core vs the simulator).
#
# For a machine with the NVIDIA driver (libnvidia-opencl.so.1), Python 3.12 with NumPy, and
# the wheels of pyopencl (with pocl-binary-distribution for the sim mode) and its dependencies
# plus setuptools>=77 and wheel (to build clpy) in ./wheels (cp312, manylinux). Nothing is
# fetched from the network. From the repository root:
#
#     OUT=/path/to/results PYTHON=/opt/torch/.venv/bin/python bash scripts/gpu_programs.sh
#
# The gpu mode of all 14 programs at size gpu took about 100 s on an H100 (session 6; 3
# repeats, scripts/gpu_batch.sh's PROG_LIMIT is 300 s), so --repeat 5 also fits there.
# Extra arguments go to both modes (e.g. --programs hotspot,nw --repeat 3). GPU_SIZE (default
# gpu) and SIM_SIZE (default bench) pick the sizes; MODES="gpu sim" (default) picks the modes.
# CLPY_GPU_PLATFORM=portable dry-runs the gpu mode on PoCL. Results (JSON, markdown, logs) go
# to $OUT (default /tmp/clpy-programs). Exit status: nonzero if any mode failed or any result
# differed from NumPy.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
SITE=${CLPY_SITE:-/tmp/clpy-site}
PLATFORM=${CLPY_GPU_PLATFORM:-nvidia}
OUT=${OUT:-/tmp/clpy-programs}
GPU_SIZE=${GPU_SIZE:-gpu}
SIM_SIZE=${SIM_SIZE:-bench}
MODES=${MODES:-gpu sim}
mkdir -p "$OUT"

# 1-2. Wheels and clpy into a private site directory; the NVIDIA ICD (scripts/gpu_env.sh).
#    PoCL from its wheel registers itself, so the sim mode still finds it.
NAME=gpu_programs
. scripts/gpu_env.sh
gpu_install
gpu_icd
export PYTHONUNBUFFERED=1
"$PY" -c "import pyopencl as cl; [print('gpu_programs: platform', p.name, [d.name for d in \
p.get_devices()]) for p in cl.get_platforms()]"

STATUS=0
for MODE in $MODES; do
    if [ "$MODE" = gpu ]; then
        "$PY" -m benchmarks.programs --mode gpu --platform "$PLATFORM" --size "$GPU_SIZE" \
            --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu_programs.log"
    else
        "$PY" -m benchmarks.programs --mode sim --threads all --size "$SIM_SIZE" \
            --out "$OUT" "$@" 2>&1 | tee "$OUT/real_programs.log"
    fi
    RC=${PIPESTATUS[0]}
    echo "gpu_programs: --mode $MODE exit status $RC"
    [ "$RC" = 0 ] || STATUS=$RC
done
exit "$STATUS"
