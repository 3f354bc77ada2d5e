#!/usr/bin/env bash
# The simulator's engines on the GPU host's 16 cores (issue 14): PoCL (its CPU device, every
# core) against the NumPy and native engines. Run from the repository root with ./wheels
# holding pyopencl, its dependencies and the PoCL wheel (cp312); results under $OUT:
#   1. python -m benchmarks.programs --mode sim --engine compare: checks off, both engines,
#      outputs compared byte for byte;
#   2. python -m benchmarks.programs --mode sim: the default engine, checks off and every
#      checker on;
#   3. benchmarks/sim_bench.py --threads 1,2,all (BENCH_THREADS; checks off and on).
# STEPS (default "compare default bench") picks steps; TAG (default _h100host) names the
# sim_bench results. Each step has a time limit (STEP_LIMIT, default 200 s); the folder is
# tarred into
# $OUT/native16.tgz (the device tool returns few files).
set -uo pipefail
cd "$(dirname "$0")/.."
NAME=gpu_native16
PY=${PYTHON:-/opt/torch/.venv/bin/python}
. scripts/gpu_env.sh
gpu_install
export PYTHONUNBUFFERED=1
R=$OUT/native16; mkdir -p "$R"
L=${STEP_LIMIT:-200}
"$PY" -c "import os, clpy; print('cores', os.cpu_count()); print([d.name for d in clpy.devices()])"
cc --version | head -1
STEPS=${STEPS:-compare default bench}
case " $STEPS " in *" compare "*)
timeout "$L" "$PY" -m benchmarks.programs --mode sim --engine compare --size bench --repeat 5 \
    --out "$R" > "$R/compare.log" 2>&1; echo "compare rc=$?"; tail -n 22 "$R/compare.log" ;;
esac
case " $STEPS " in *" default "*)
timeout "$L" "$PY" -m benchmarks.programs --mode sim --size bench --repeat 5 --out "$R" \
    > "$R/default.log" 2>&1; echo "default rc=$?"; tail -n 22 "$R/default.log" ;;
esac
case " $STEPS " in *" bench "*)
timeout "$L" "$PY" benchmarks/sim_bench.py --threads "${BENCH_THREADS:-1,2,all}" --repeat 5 --tag "${TAG:-_h100host}" \
    --out "$R" > "$R/sim_bench.log" 2>&1; echo "sim_bench rc=$?"; tail -n 20 "$R/sim_bench.log" ;;
esac
tar czf "$OUT/native16.tgz" -C "$OUT" native16
