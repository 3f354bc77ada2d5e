#!/usr/bin/env bash
# The real-program suite (benchmarks/programs) on an NVIDIA GPU host: --mode gpu (clpy kernels
# vs the hand-written original kernels, whole programs with DeviceArrays / the original-style
# pyopencl host / NumPy arguments, link bandwidth) and the sim mode (PoCL on every core vs the
# simulator: benchmarks/sim_bench.py and --mode sim with 1, 2 and all threads; see sim_mode).
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

# The sim mode: benchmarks/sim_bench.py (threads 1, 2, every core and the default "auto",
# checks off and on), then the real-program suite once per thread setting of SIM_THREADS
# (default "auto all 1 2", the most telling first: each program's row is written as it
# finishes, so a run cut short keeps the rows so far), each with its own results file
# real_programs_<host>_t<T>.{json,md}, checks off and on. About 300 s on a 16-core host at
# SIM_REPEAT=3 (PoCL, then the simulator 1 + 3 times per setting). SIM_SPLIT=N adds sim_bench
# and the suite (default threads: the tuner decides) with CLPY_SIM_SPLIT_LANES=N (a launch of
# fewer batches than threads cut into one per thread, checks off; sim/parallel.py split),
# tagged _split<N> (about 60 s more).
# SIM_BENCH_ARGS go to sim_bench.py only (e.g. "--sizes 16 --kernels histogram" for a dry run).
sim_mode() {
    local host rc t
    host=$(hostname -s 2>/dev/null || echo host)
    RC=0
    # shellcheck disable=SC2086
    "$PY" benchmarks/sim_bench.py --threads 1,2,all,auto --repeat "${SIM_BENCH_REPEAT:-5}" \
        --tag "_${host}" --out "$OUT" ${SIM_BENCH_ARGS:-} 2>&1 | tee "$OUT/sim_bench.log"
    rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || RC=$rc
    if [ -n "${SIM_SPLIT:-}" ]; then
        # shellcheck disable=SC2086
        CLPY_SIM_SPLIT_LANES=$SIM_SPLIT "$PY" benchmarks/sim_bench.py --threads 1,2,all,auto \
            --repeat "${SIM_BENCH_REPEAT:-5}" --tag "_${host}_split${SIM_SPLIT}" --out "$OUT" \
            ${SIM_BENCH_ARGS:-} 2>&1 | tee "$OUT/sim_bench_split.log"
        rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || RC=$rc
    fi
    for t in ${SIM_THREADS:-auto all 1 2}; do
        # auto: threads left to the default (every core, pool or one thread per kernel as
        # measured: sim/parallel.py Tuner); all: every core, always the pool
        targs=(--threads "$t")
        [ "$t" = auto ] && targs=()
        "$PY" -m benchmarks.programs --mode sim "${targs[@]}" --size "$SIM_SIZE" \
            --repeat "${SIM_REPEAT:-3}" --tag "${host}_t${t}" --out "$OUT" "$@" 2>&1 \
            | tee "$OUT/real_programs_t${t}.log"
        rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || RC=$rc
    done
    if [ -n "${SIM_SPLIT:-}" ]; then
        CLPY_SIM_SPLIT_LANES=$SIM_SPLIT "$PY" -m benchmarks.programs --mode sim \
            --size "$SIM_SIZE" --repeat "${SIM_REPEAT:-3}" --tag "${host}_tauto_split${SIM_SPLIT}" \
            --out "$OUT" "$@" 2>&1 | tee "$OUT/real_programs_tauto_split.log"
        rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || RC=$rc
    fi
}

STATUS=0
for MODE in $MODES; do
    if [ "$MODE" = gpu ]; then
        "$PY" -m benchmarks.programs --mode gpu --platform "$PLATFORM" --size "$GPU_SIZE" \
            --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu_programs.log"
        RC=${PIPESTATUS[0]}
    else
        sim_mode "$@"
    fi
    echo "gpu_programs: --mode $MODE exit status $RC"
    [ "$RC" = 0 ] || STATUS=$RC
done
exit "$STATUS"
