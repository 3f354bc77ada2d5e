#!/usr/bin/env bash
# Several GPU jobs in one device call (the lead's batch): install once, then each job with a
# time limit, logs under $OUT. JOBS picks: tests transfers algorithms programs sim fuzz ptx kdiag
# overhead suite tpaths regprof lprof rounded (kdiag: benchmarks/programs/kernel_diag.py, KDIAG_PROGS=a,b; tpaths:
# benchmarks/transfers.py --parts link,host,paths)
set -uo pipefail
cd "$(dirname "$0")/.."
export PY=/opt/torch/.venv/bin/python PYTHON=/opt/torch/.venv/bin/python
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SITE=/tmp/clpy-site
$PY -m pip install -q --no-index --no-deps --no-compile --target $SITE $(ls ${WHEELS:-wheels}/*.whl | grep -v /numpy-) >/dev/null 2>&1
$PY -m pip install -q --no-deps --no-build-isolation --no-compile --target $SITE . >/dev/null 2>&1 || echo "clpy install failed"
export PYTHONPATH=$SITE:$PWD SKIP_WHEELS=1 CLPY_SITE=$SITE
mkdir -p /tmp/clpy-icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/clpy-icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/clpy-icd CLPY_TEST_PLATFORM=nvidia PYTHONUNBUFFERED=1
job() { local name=$1 limit=$2; shift 2; echo "=== $name (limit ${limit}s)"; local t0=$(date +%s)
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "=== $name rc=$rc $(( $(date +%s) - t0 ))s"; tail -n ${TAIL:-25} "$OUT/$name.log"; }
for J in ${JOBS:-tests transfers}; do case $J in
  tests) job tests 300 $PY -m pytest -q -o addopts= -p no:cacheprovider -x ${TESTS:-tests/test_runtime_wg_size.py tests/test_restrict.py tests/test_runtime_transfers.py tests/test_range_facts.py} ;;
  transfers) job transfers 200 $PY -m benchmarks.transfers --platform nvidia --mib 16,256,1024 --reps 10 --out $OUT ;;
  algorithms) job algorithms ${ALG_LIMIT:-240} bash scripts/gpu_algorithms.sh ${ALG_ARGS:-} ;;
  programs) MODES=gpu job programs ${PROG_LIMIT:-300} bash scripts/gpu_programs.sh ${PROG_ARGS:-} ;;
  sim) MODES=sim job sim16 ${SIM_LIMIT:-300} bash scripts/gpu_programs.sh ;;
  ptx) job ptx 60 $PY scripts/ptx_compare.py $OUT/ptx ${PTX_PROGS:-pathfinder backprop histo convsep nbody} ;;
  suite) job suite ${SUITE_LIMIT:-560} $PY -m pytest tests -q -o addopts= -p no:cacheprovider --ignore=tests/test_oclgrind.py --ignore=tests/test_notebook.py --ignore=tests/test_packaging.py ${SUITE_ARGS:-} ;;
  tpaths) job tpaths ${TP_LIMIT:-300} $PY -m benchmarks.transfers --platform nvidia --mib ${TP_MIB:-16,256,1024} --reps ${TP_REPS:-6} --parts link,host,paths --out $OUT ;;
  kdiag) job kdiag ${KDIAG_LIMIT:-240} $PY -m benchmarks.programs.kernel_diag --platform nvidia --programs ${KDIAG_PROGS:-pathfinder,backprop} --rounds ${KDIAG_ROUNDS:-8} --out $OUT ;;
  lprof) job lprof 120 $PY scripts/gpu_launch_profile.py --platform nvidia --mib ${LP_MIB:-16,4,64,256} ;;
  rounded) job rounded ${RR_LIMIT:-150} $PY scripts/gpu_reg_rounded.py --platform nvidia --mib ${RR_MIB:-1,4,16} --reps ${RR_REPS:-30} --out $OUT/rounded.json ;;
  regprof) job regprof 120 $PY scripts/gpu_reg_profile.py --platform nvidia --mib ${RP_MIB:-4,16,64,256} --out $OUT/regprof.json ;;
  overhead) job overhead 200 $PY -m benchmarks.launch_overhead --device opencl:nvidia --json $OUT/launch_overhead_nvidia.json ;;
  fuzz) job fuzz ${FUZZ_LIMIT:-500} bash scripts/gpu_fuzz.sh ;;
  *) echo "unknown job $J" ;;
esac; done
