#!/usr/bin/env bash
# Differential fuzzing at scale on the GPU host: `python -m clpy.fuzz` in parallel worker
# processes, the simulator against PoCL and (optionally) the NVIDIA driver.
#
# Needs what scripts/gpu_check.sh needs (Python 3.12, NumPy, the NVIDIA driver, ./wheels with
# pyopencl and its dependencies, setuptools and wheel), plus in ./wheels the PoCL wheel
# (pocl_binary_distribution 3.0, py3-none-manylinux; wheels/ here holds one repacked from the
# PoCL that `pip install pyopencl[pocl]` installed, the package index being unreachable) and
# tqdm. Nothing is fetched. From the repository root:
#
#     bash scripts/gpu_fuzz.sh DEVICES FIRST_SEED COUNT
#     bash scripts/gpu_fuzz.sh sim,opencl:pocl 100000 10000                # >= 10,000 vs PoCL
#     bash scripts/gpu_fuzz.sh sim,opencl:pocl,opencl:nvidia 200000 2000   # all three
#
# Environment: JOBS (worker processes, default: the core count), TIME_LIMIT (seconds after
# which no new kernel starts, default 45 s before the hard limit, so one call fits a 10-minute
# slot; the summary says how many ran: continue with FIRST_SEED + that count), HARD_LIMIT
# (seconds after this script starts at which the fuzzer stops waiting, ends its workers and
# reports what finished; default 575, before a 600 s slot ends), SHRINK_SECONDS (per failure, 60), FEATURES (passed
# to --features: a subset of the generated constructs), DIAG (1: first run
# scripts/gpu_fuzz_diag.py, the drivers' edge-value results, into $OUT/fuzz_diag.json; 0 skips).
# Writes $OUT/fuzz_<tag>_<seed>.json (counts, time per kernel, every failure; rewritten while
# the run goes, "state" says complete or stopped), the log, and the reproducers (kernel.py,
# reduced.py, emitted .cl, inputs, outputs) under $OUT/fuzz_<tag>_<seed>/seed<N>/. The last line
# is always `gpu_fuzz: ... N kernels, M mismatches, K errors`, also for a run cut short.
# Exit status: the fuzzer's (1 when anything disagreed).
set -uo pipefail
START=$(date +%s)
cd "$(dirname "$0")/.."
DEVICES=${1:?usage: gpu_fuzz.sh DEVICES FIRST_SEED COUNT}
# opencl:pocl means the wheel's PoCL ("pthread" device): a GPU host may also have a system
# PoCL build ("cpu-..." device) whose kernels failed to load there and ran ~10x slower.
DEVICES=${DEVICES//opencl:pocl/opencl:Portable Computing Language:pthread}
SEED=${2:-0}
COUNT=${3:-1000}
PY=${PYTHON:-python3}
SITE=${CLPY_SITE:-/tmp/clpy-site}
OUT=${OUT:-/tmp/clpy-fuzz-out}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"

# 1. pyopencl, PoCL, tqdm ... from the wheel folder, and clpy itself, into a private site.
if [ "${SKIP_WHEELS:-0}" != 1 ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" wheels/*.whl || { echo "gpu_fuzz: wheel install failed" >&2; exit 2; }
    "$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --upgrade \
        --target "$SITE" . || { echo "gpu_fuzz: installing clpy failed" >&2; exit 2; }
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"

# 2. ICDs. PoCL: pyopencl's bundled loader also reads the pocl.icd the PoCL wheel puts in
#    pyopencl/.libs, so nothing to do (listing it again would show two PoCL platforms).
#    NVIDIA: an explicit vendor folder (containers often lack /etc/OpenCL/vendors).
case "$DEVICES" in *nvidia*)
    if ! grep -qsi nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null; then
        LIB=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
        [ -z "$LIB" ] && LIB=$(find /usr/local/nvidia /usr/lib /usr/lib64 \
            /usr/lib/x86_64-linux-gnu -name 'libnvidia-opencl.so*' 2>/dev/null | head -n1)
        [ -z "$LIB" ] && { echo "gpu_fuzz: libnvidia-opencl.so not found" >&2; exit 3; }
        mkdir -p /tmp/clpy-icd
        echo "$LIB" > /tmp/clpy-icd/nvidia.icd
        export OCL_ICD_VENDORS=/tmp/clpy-icd
    fi ;;
esac
export PYTHONUNBUFFERED=1
# One PoCL thread per worker: the workers already use every core.
export POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_COUNT=1

# A private PoCL kernel cache: binaries from another PoCL (runs 14 and 15 met a newer PoCL,
# "cpu-skylake-avx512", with real sub-groups, where earlier runs had the wheel's 3.0,
# "pthread-...") are never loaded.
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-/tmp/clpy-pocl-cache-$$}
"$PY" -c "import clpy; print('gpu_fuzz: devices:', [str(d) for d in clpy.devices()])" \
    || { echo "gpu_fuzz: clpy does not import" >&2; exit 3; }
"$PY" -c "import pyopencl as cl, pyopencl.version as v; print('gpu_fuzz: pyopencl', v.VERSION_TEXT,
    [(p.name, p.version, [d.name for d in p.get_devices()]) for p in cl.get_platforms()])" || true

# 3. What the drivers get wrong at edge values (seconds; the quirk table's evidence).
if [ "${DIAG:-1}" = 1 ]; then
    timeout -s TERM 90 "$PY" scripts/gpu_fuzz_diag.py --out "$OUT/fuzz_diag.json" 2>&1 \
        | grep -v -i 'warning'
    [ "${PIPESTATUS[0]}" = 0 ] || echo "gpu_fuzz: the diagnosis failed or timed out"
fi

# 4. The run. The fuzzer stops itself at HARD_LIMIT; `timeout` is the backstop (SIGTERM, which
#    the fuzzer also answers with its counts so far).
TAG=$(echo "$1" | tr ',:' '__' | sed 's/opencl_//g')
NAME="fuzz_${TAG}_${SEED}"
HARD=$(( ${HARD_LIMIT:-575} - ($(date +%s) - START) ))
[ "$HARD" -lt 30 ] && HARD=30
TL=$(( HARD > 90 ? HARD - 45 : HARD / 2 ))  # in-flight kernels get time to finish
TIME_LIMIT=${TIME_LIMIT:-$TL}
RUN_START=$(date +%s)
timeout -s TERM -k 10 $(( HARD + 15 )) \
    "$PY" -m clpy.fuzz --count "$COUNT" --seed "$SEED" --devices "$DEVICES" --jobs "$JOBS" \
    --time-limit "$TIME_LIMIT" --hard-limit "$HARD" --shrink-seconds "${SHRINK_SECONDS:-60}" \
    ${FEATURES:+--features "$FEATURES"} \
    --out "$OUT/$NAME" --summary "$OUT/$NAME.json" 2>&1 | tee "$OUT/$NAME.log" | grep -v '%|'
STATUS=${PIPESTATUS[0]}
COUNTS=$("$PY" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print("%d kernels, %d mismatches, %d errors (%s)"
          % (d["count"], d["mismatches"], d["errors"], d["state"]))
except Exception as e:
    print("no summary (%s)" % type(e).__name__)' "$OUT/$NAME.json")
echo "gpu_fuzz: $DEVICES seeds from $SEED, $JOBS jobs, $(( $(date +%s) - RUN_START )) s:" \
    "$COUNTS; $OUT/$NAME.json"
exit "$STATUS"
