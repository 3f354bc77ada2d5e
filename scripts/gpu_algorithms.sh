#!/usr/bin/env bash
# Benchmark clpy.algorithms on an NVIDIA GPU through its OpenCL driver, against PyOpenCL,
# CuPy (when the Python has it) and a device-to-device copy (benchmarks/algorithms.py).
#
# Same machine set-up as scripts/gpu_check.sh: Python 3.12 with NumPy (and CuPy), the wheels
# of pyopencl and its dependencies plus setuptools and wheel in ./wheels; nothing is fetched
# from the network. From the repository root:
#
#     OUT=/some/dir PYTHON=/opt/torch/.venv/bin/python bash scripts/gpu_algorithms.sh \
#         --only reduce,scan,sort --sizes 20,24,28
#
# Arguments go to `python -m benchmarks.algorithms` (--only, --sizes, --repeat, --sweep);
# results (algorithms_<device>.json/.md and the log) go to $OUT (default /tmp/clpy-bench).
# CLPY_GPU_PLATFORM=portable dry-runs the same steps on PoCL.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SITE=${CLPY_SITE:-/tmp/clpy-site}
PLATFORM=${CLPY_GPU_PLATFORM:-nvidia}
OUTDIR=${OUT:-/tmp/clpy-bench}
mkdir -p "$OUTDIR"

# 1. pyopencl and friends from the wheel folder, into a private site directory (NumPy only
#    when the Python lacks it: CuPy was built against the NumPy it came with).
if [ "${SKIP_WHEELS:-0}" = 1 ]; then :
elif ! ls wheels/*.whl >/dev/null 2>&1; then
    echo "gpu_algorithms: no wheels/ folder with pyopencl wheels" >&2; exit 2
else
    WHEELS=$(ls wheels/*.whl)
    if "$PY" -c "import numpy" 2>/dev/null; then WHEELS=$(ls wheels/*.whl | grep -v '/numpy-'); fi
    # shellcheck disable=SC2086
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" $WHEELS || { echo "gpu_algorithms: wheel install failed" >&2; exit 2; }
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --upgrade --target "$SITE" . \
    || { echo "gpu_algorithms: installing clpy failed" >&2; exit 2; }

# 2. An OpenCL ICD entry for the NVIDIA driver (containers often lack /etc/OpenCL/vendors).
if [ "$PLATFORM" = nvidia ] && ! grep -qsi nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null; then
    LIB=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
    if [ -z "$LIB" ]; then
        LIB=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu \
              -name 'libnvidia-opencl.so*' 2>/dev/null | head -n1)
    fi
    if [ -z "$LIB" ]; then
        echo "gpu_algorithms: libnvidia-opencl.so not found; is the NVIDIA driver mounted?" >&2
        exit 3
    fi
    mkdir -p /tmp/clpy-icd
    echo "$LIB" > /tmp/clpy-icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/clpy-icd
    echo "gpu_algorithms: using ICD $LIB"
fi

# 3. The benchmark.
export PYTHONUNBUFFERED=1
"$PY" -m benchmarks.algorithms --device "opencl:$PLATFORM" --out-dir "$OUTDIR" "$@" 2>&1 \
    | tee "$OUTDIR/gpu_algorithms.log"
exit "${PIPESTATUS[0]}"
