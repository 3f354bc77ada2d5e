#!/usr/bin/env bash
# A guarded signed negation (fuzz seed 310677) on every OpenCL device of the GPU host: the
# driver's own forms, candidate spellings, and clpy's lowering of each (scripts/
# gpu_fuzz_negation.py). Needs what scripts/gpu_check.sh needs (./wheels; nothing is fetched).
# From the repository root, about a minute:
#
#     OUT=/path/to/results bash scripts/gpu_fuzz_negation.sh
#
# Writes $OUT/negation.json and $OUT/negation.log; one line per device and case, `OK` or
# `WRONG: value -> result (want ...)`. CLPY_GPU_PLATFORM=portable dry-runs on PoCL alone.
set -uo pipefail
cd "$(dirname "$0")/.."
NAME=gpu_fuzz_negation
. scripts/gpu_env.sh
gpu_install
gpu_icd
OUT=${OUT:-/tmp/clpy-negation-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-/tmp/clpy-pocl-cache-neg-$$}
"$PY" scripts/gpu_fuzz_negation.py --out "$OUT/negation.json" 2>&1 | tee "$OUT/negation.log"
exit "${PIPESTATUS[0]}"
