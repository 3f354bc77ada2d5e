#!/usr/bin/env bash
# clpy over Dask on a multi-GPU machine (issue 16): the scaling benchmark, 1 vs 2 GPUs, one
# worker process per GPU, plus tests/test_dask.py and examples/dask_heat.py on that GPU.
#
# For a machine with the NVIDIA driver (libnvidia-opencl.so.1), Python 3.12 with NumPy
# (/opt/torch/.venv/bin/python by default), and in ./wheels the cp312 manylinux wheels of
# pyopencl, dask, distributed and their dependencies (see scripts/gpu_check.sh); nothing is
# fetched from the network. From the repository root:
#
#     bash scripts/gpu_dask.sh [extra benchmark args, e.g. --n 32768 --steps 20]
#
# Writes to $OUT (default /tmp/clpy-dask): dask_scaling.json, dask_scaling.log,
# test_dask.log, dask_heat.log. CLPY_GPU_PLATFORM=portable dry-runs everything on PoCL
# (BENCH_ARGS then defaults to a tiny grid).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ] && [ -x /opt/torch/.venv/bin/python ]; then PYTHON=/opt/torch/.venv/bin/python; fi
PY=${PYTHON:-python3}
SITE=${CLPY_SITE:-/tmp/clpy-site}
PLATFORM=${CLPY_GPU_PLATFORM:-nvidia}   # "portable": a dry run on PoCL
OUT=${OUT:-/tmp/clpy-dask}
mkdir -p "$OUT"
export OUT

# 1. Wheels (pyopencl, dask, distributed, pytest ...) into a private site directory, then clpy.
if [ "${SKIP_WHEELS:-0}" != 1 ]; then
    ls wheels/*.whl >/dev/null 2>&1 || { echo "gpu_dask: no wheels/ folder" >&2; exit 2; }
    # What this run needs, NumPy included (the one pyopencl's wheel was built against, as
    # scripts/gpu_check.sh installs it); other wheels in the folder are left alone.
    NEED="numpy pyopencl pytools platformdirs typing_extensions siphash24
          dask distributed click cloudpickle fsspec importlib_metadata zipp lazy_importer locket
          msgpack packaging partd psutil pyyaml sortedcontainers tblib toolz tornado zict
          jinja2 markupsafe pytest iniconfig pluggy pygments setuptools wheel"
    WHEELS=""
    for name in $NEED; do
        found=$(ls wheels/"$name"-[0-9]*.whl 2>/dev/null | head -n1)
        [ -n "$found" ] || { echo "gpu_dask: no wheel for $name in wheels/" >&2; exit 2; }
        WHEELS="$WHEELS $found"
    done
    # shellcheck disable=SC2086
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" $WHEELS || { echo "gpu_dask: wheel install failed" >&2; exit 2; }
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --upgrade --target "$SITE" . \
    || { echo "gpu_dask: installing clpy failed" >&2; exit 2; }

# 2. An OpenCL ICD entry for the NVIDIA driver (containers often lack /etc/OpenCL/vendors).
if [ "$PLATFORM" = nvidia ] && ! grep -qsi nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null; then
    LIB=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
    if [ -z "$LIB" ]; then
        LIB=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu \
              -name 'libnvidia-opencl.so*' 2>/dev/null | head -n1)
    fi
    [ -n "$LIB" ] || { echo "gpu_dask: libnvidia-opencl.so not found" >&2; exit 3; }
    mkdir -p /tmp/clpy-icd
    echo "$LIB" > /tmp/clpy-icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/clpy-icd
    echo "gpu_dask: using ICD $LIB"
fi
export PYTHONUNBUFFERED=1
"$PY" -c "import clpy, dask, distributed; print('gpu_dask: devices', [str(d) for d in clpy.devices()]); print('gpu_dask: dask', dask.__version__, 'distributed', distributed.__version__)" \
    || { echo "gpu_dask: imports failed" >&2; exit 3; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader

if [ "$PLATFORM" = nvidia ]; then
    SELECTOR="opencl:gpu"
    DEFAULT_ARGS="--gpus 1,2 --n 16384 --blocks 8 --steps 20"
else
    SELECTOR="opencl:$PLATFORM"
    DEFAULT_ARGS="--gpus 1,2 --n 256 --blocks 4 --steps 3"
fi
STATUS=0

# 3. The scaling benchmark: one worker per GPU chosen by clpy (rank), then pinned by
#    CUDA_VISIBLE_DEVICES (NVIDIA only), same run.
# shellcheck disable=SC2086
"$PY" benchmarks/dask_scaling.py --device "$SELECTOR" ${BENCH_ARGS:-$DEFAULT_ARGS} "$@" \
    --json "$OUT/dask_scaling.json" 2>&1 | grep -v ' INFO ' | tee "$OUT/dask_scaling.log"
[ "${PIPESTATUS[0]}" = 0 ] || STATUS=1
if [ "$PLATFORM" = nvidia ]; then
    # shellcheck disable=SC2086
    "$PY" benchmarks/dask_scaling.py --device "$SELECTOR" --pin cuda --no-baseline \
        ${BENCH_ARGS:-$DEFAULT_ARGS} "$@" --json "$OUT/dask_scaling_cuda_pinned.json" 2>&1 \
        | grep -v ' INFO ' | tee -a "$OUT/dask_scaling.log"
    [ "${PIPESTATUS[0]}" = 0 ] || STATUS=1
fi

# 4. The example, checked against NumPy, on 2 workers of that platform.
"$PY" examples/dask_heat.py --device "$SELECTOR" --workers 2 --n 1024 --chunk 256 --steps 20 \
    2>&1 | grep -v ' INFO ' | tee "$OUT/dask_heat.log"
[ "${PIPESTATUS[0]}" = 0 ] || STATUS=1

# 5. tests/test_dask.py with its OpenCL device on this platform (the simulator cases too).
CLPY_TEST_PLATFORM=$PLATFORM CI=true "$PY" -m pytest tests/test_dask.py -o addopts= -q \
    -p no:cacheprovider -rfEs 2>&1 | tail -n 30 | tee "$OUT/test_dask.log"
[ "${PIPESTATUS[0]}" = 0 ] || STATUS=1

echo "gpu_dask: status $STATUS (results in $OUT)"
exit "$STATUS"
