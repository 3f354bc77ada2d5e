#!/usr/bin/env bash
# Run clpy's runtime test suite on an NVIDIA GPU through its OpenCL driver.
#
# For a machine with the NVIDIA driver (libnvidia-opencl.so.1), Python 3.12 with NumPy, and
# the wheels of pyopencl and its dependencies (plus pytest, hypothesis, and setuptools>=77 and
# wheel to build clpy itself) in ./wheels (cp312, manylinux). Nothing is fetched from the
# network. The whole suite, as run on an H100 (notebook and packaging tests need nbclient and
# `build`, which such a machine usually lacks):
#
#     bash scripts/gpu_check.sh tests --ignore=tests/test_oclgrind.py \
#         --ignore=tests/test_notebook.py --ignore=tests/test_packaging.py -o addopts=
#
# From the repository root:
#
#     bash scripts/gpu_check.sh [extra pytest args]
#
# Prints the OpenCL device the tests ran on and the pass count; exits with pytest's status.
# If $OUT is set, the log and a JSON summary are also written there.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SITE=${CLPY_SITE:-/tmp/clpy-site}
PLATFORM=${CLPY_GPU_PLATFORM:-nvidia}   # another value (e.g. "portable") dry-runs on PoCL

# 1. pyopencl and friends from the wheel folder, into a private site directory.
if [ "${SKIP_WHEELS:-0}" = 1 ]; then :
elif ! ls wheels/*.whl >/dev/null 2>&1; then
    echo "gpu_check: no wheels/ folder with pyopencl wheels" >&2; exit 2
else
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" wheels/*.whl || { echo "gpu_check: wheel install failed" >&2; exit 2; }
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
# clpy itself (sim/ is installed as the package clpy_sim), built with the setuptools from wheels/
"$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --upgrade --target "$SITE" . \
    || { echo "gpu_check: installing clpy failed" >&2; exit 2; }

# 2. An OpenCL ICD entry for the NVIDIA driver (containers often lack /etc/OpenCL/vendors).
if [ "$PLATFORM" = nvidia ] && ! grep -qsi nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null; then
    LIB=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
    if [ -z "$LIB" ]; then
        LIB=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu \
              -name 'libnvidia-opencl.so*' 2>/dev/null | head -n1)
    fi
    if [ -z "$LIB" ]; then
        echo "gpu_check: libnvidia-opencl.so not found; is the NVIDIA driver mounted?" >&2
        exit 3
    fi
    mkdir -p /tmp/clpy-icd
    echo "$LIB" > /tmp/clpy-icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/clpy-icd
    echo "gpu_check: using ICD $LIB"
fi

# 3. The device the tests will use (tests/conftest.py picks it by CLPY_TEST_PLATFORM).
export CLPY_TEST_PLATFORM=$PLATFORM CI=true PYTHONUNBUFFERED=1
DEVICE=$("$PY" - <<'PYEOF'
import os
import pyopencl as cl
want = os.environ["CLPY_TEST_PLATFORM"].lower()
devs = [d for p in cl.get_platforms() if want in p.name.lower() for d in p.get_devices()]
if not devs:
    raise SystemExit(f"no {want} OpenCL device: " + repr([p.name for p in cl.get_platforms()]))
d = devs[0]
print(f"{d.name} | {d.platform.name} | {d.version} | {d.opencl_c_version.strip()} | "
      f"driver {d.driver_version}")
PYEOF
) || { echo "gpu_check: $DEVICE" >&2; exit 3; }
echo "gpu_check: device: $DEVICE"
"$PY" -c "import clpy; from clpy.runtime.api import get_device; \
d = get_device('opencl:$PLATFORM'); print('gpu_check: clpy target:', d.target.std_flag, \
sorted(d.target.features))"

# 4. The runtime suite on that device.
LOG=${OUT:-/tmp}/gpu_check.log
"$PY" -m pytest tests/test_runtime_*.py -o addopts= -q -p no:cacheprovider -rfEs "$@" 2>&1 \
    | tee "$LOG"
STATUS=${PIPESTATUS[0]}
SUMMARY=$(grep -E '[0-9]+ (passed|failed|error)' "$LOG" | tail -n1 | tr -d '=' | xargs)
PASSED=$(echo "$SUMMARY" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
echo "gpu_check: device: $DEVICE"
echo "gpu_check: $SUMMARY"
echo "gpu_check: passed: ${PASSED:-0}"
if [ -n "${OUT:-}" ]; then
    printf '{"device": "%s", "summary": "%s", "passed": %s, "status": %s}\n' \
        "$DEVICE" "$SUMMARY" "${PASSED:-0}" "$STATUS" > "$OUT/gpu_check.json"
fi
exit "$STATUS"
