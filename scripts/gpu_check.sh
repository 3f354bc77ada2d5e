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

# 1-2. Wheels and clpy into a private site directory; the NVIDIA ICD (scripts/gpu_env.sh).
NAME=gpu_check
. scripts/gpu_env.sh
gpu_install
gpu_icd

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
