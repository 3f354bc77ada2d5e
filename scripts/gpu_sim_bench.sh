#!/usr/bin/env bash
# The simulator's benchmarks on a many-core host (the NVIDIA GPU host has 16 cores): threads
# 1/2/all x checks off/on against PoCL, if the wheel folder has pocl-binary-distribution.
#
# For a machine with Python 3.12 and NumPy, and the wheels of pyopencl and its dependencies
# (plus setuptools>=77 and wheel to build clpy; pocl-binary-distribution for the PoCL
# comparison) in ./wheels, as for scripts/gpu_check.sh. Nothing is fetched from the network.
# From the repository root:
#
#     OUT=/some/folder PYTHON=/opt/torch/.venv/bin/python bash scripts/gpu_sim_bench.sh
#
# Writes to $OUT (default /tmp/clpy-sim-bench): sim_bench_<host>.{json,md} (block reduce,
# block scan, local-atomics histogram at 2^16, 2^20, 2^22), sim_overhead_<host>_t{1,all}.json
# (fixed costs), real_programs_<host>_t{1,all}.{json,md} (benchmarks/programs, when present)
# and the log. CLPY_BENCH_QUICK=1 is a dry run (2^16 and 2^20, 3 repeats, small programs);
# CLPY_BENCH_PROGRAMS=hotspot,nw picks programs.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SITE=${CLPY_SITE:-/tmp/clpy-site}
OUT=${OUT:-/tmp/clpy-sim-bench}
mkdir -p "$OUT"
HOST=${CLPY_BENCH_TAG:-$(hostname -s 2>/dev/null || echo host)}
LOG="$OUT/gpu_sim_bench.log"

# 1. pyopencl (and PoCL, if its wheel is there) and clpy into a private site directory.
if [ "${SKIP_WHEELS:-0}" != 1 ] && ls wheels/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" wheels/*.whl || { echo "gpu_sim_bench: wheel install failed" >&2; exit 2; }
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [ "${SKIP_WHEELS:-0}" != 1 ]; then
    "$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --upgrade --target "$SITE" . \
        || { echo "gpu_sim_bench: installing clpy failed" >&2; exit 2; }
fi
export CLPY_PROGRESS=0 PYTHONUNBUFFERED=1

{
    echo "gpu_sim_bench: host $HOST, $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$PY" -c "import numpy, clpy_sim; print('numpy', numpy.__version__, '| sim threads (all):', clpy_sim.current().thread_count())"
    "$PY" -c "import pyopencl as cl; print('OpenCL:', [(p.name, [d.name for d in p.get_devices()]) for p in cl.get_platforms()])" \
        || echo "gpu_sim_bench: no pyopencl/OpenCL: simulator figures only"
} 2>&1 | tee "$LOG"

QUICK=(); PQUICK=(); OQUICK=()
if [ "${CLPY_BENCH_QUICK:-0}" = 1 ]; then
    QUICK=(--sizes 16,20 --repeat 3); PQUICK=(--size small --repeat 1); OQUICK=(--repeat 3)
fi
PROGRAMS=${CLPY_BENCH_PROGRAMS:-all}

# 2. The benchmark kernels: threads 1, 2 and all, checks off and on, PoCL beside them.
"$PY" benchmarks/sim_bench.py --threads 1,2,all --tag "_$HOST" --out "$OUT" "${QUICK[@]}" 2>&1 \
    | tee -a "$LOG"
STATUS=${PIPESTATUS[0]}

# 3. Fixed costs (one launch, a barrier loop, private-array SGEMM, many small launches).
for T in 1 all; do
    TT=$T; [ "$T" = all ] && TT=$(nproc)
    "$PY" -m benchmarks.sim_overhead --threads "$TT" --json "$OUT/sim_overhead_${HOST}_t$T.json" \
        "${OQUICK[@]}" 2>&1 | tee -a "$LOG"
done

# 4. The real-program suite, one thread and every core.
if [ -f benchmarks/programs/__main__.py ]; then
    for T in 1 all; do
        "$PY" -m benchmarks.programs --mode sim --threads "$T" --out "$OUT" --repeat 5 \
            --programs "$PROGRAMS" --tag "${HOST}_t$T" "${PQUICK[@]}" 2>&1 | tee -a "$LOG"
    done
fi
echo "gpu_sim_bench: results in $OUT" | tee -a "$LOG"
exit "$STATUS"
