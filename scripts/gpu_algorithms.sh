#!/usr/bin/env bash
# Benchmark clpy.algorithms on an NVIDIA GPU through its OpenCL driver, against PyOpenCL,
# CuPy (when the Python has it) and a device-to-device copy (benchmarks/algorithms.py).
#
# Same machine set-up as scripts/gpu_check.sh: Python 3.12 with NumPy (and CuPy), the wheels
# of pyopencl and its dependencies plus setuptools and wheel in ./wheels; nothing is fetched
# from the network. From the repository root:
#
#     OUT=/some/dir PYTHON=/opt/torch/.venv/bin/python bash scripts/gpu_algorithms.sh \
#         --sizes 20,24,28 --repeat 20 --budget 270   # every algorithm; none starts after 270 s
#
# Arguments go to `python -m benchmarks.algorithms` (--only, --sizes, --repeat, --budget,
# --sweep, --sweep-seconds, --ptx); results (algorithms_<device>.json/.md, rewritten after
# every size, and the log) go to $OUT (default /tmp/clpy-bench). ALG_TESTS=<seconds> then runs
# the algorithm tests on the device ($ALG_TEST_FILES, default tests/test_algorithms.py) within
# that many seconds: a caller's time limit must cover both. CLPY_GPU_PLATFORM=portable
# dry-runs the same steps on PoCL.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SITE=${CLPY_SITE:-/tmp/clpy-site}
PLATFORM=${CLPY_GPU_PLATFORM:-nvidia}
OUTDIR=${OUT:-/tmp/clpy-bench}
mkdir -p "$OUTDIR"

# 1-2. Wheels and clpy into a private site directory; the NVIDIA ICD (scripts/gpu_env.sh).
NAME=gpu_algorithms
. scripts/gpu_env.sh
gpu_install
gpu_icd

# 3. The benchmark.
export PYTHONUNBUFFERED=1
"$PY" -m benchmarks.algorithms --device "opencl:$PLATFORM" --out-dir "$OUTDIR" "$@" 2>&1 \
    | tee "$OUTDIR/gpu_algorithms.log"
rc=${PIPESTATUS[0]}

# 4. ALG_TESTS=<seconds>: then the algorithm tests on this device (the simulator's half left
# out), within that many seconds; the summary to stdout, the log to $OUT.
if [ -n "${ALG_TESTS:-}" ]; then
    FILES=${ALG_TEST_FILES:-tests/test_algorithms.py}
    # shellcheck disable=SC2086
    CLPY_TEST_PLATFORM=$PLATFORM timeout "$ALG_TESTS" "$PY" -m pytest -q -x -o addopts= \
        -p no:cacheprovider -p no:warnings $FILES -k "not sim" \
        > "$OUTDIR/gpu_algorithms_tests.log" 2>&1
    echo "$FILES on $PLATFORM: rc=$? $(tail -n 1 "$OUTDIR/gpu_algorithms_tests.log")"
fi
exit "$rc"
