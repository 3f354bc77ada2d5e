#!/usr/bin/env bash
# The lead's device-call wrapper (session 5): run from the folder that holds build/head.tgz
# (`git archive --format=tar HEAD | gzip > build/head.tgz`), build/wheels_core and
# build/wheels_fuzz (cp312 wheels: pyopencl and its dependencies; the PoCL wheel), all carried
# to the GPU host. Unpacks HEAD into /tmp/h with ./wheels, then runs the steps named:
#   neg             scripts/gpu_fuzz_negation.sh into $OUT/fuzz
#   fuzz3:SEED      three-way fuzz (sim, PoCL, NVIDIA) from SEED until BUDGET seconds (default
#                   580) after the start, into $OUT/fz
#   repro           SEEDS="a b ..." re-run those seeds three-way, one process each, RL seconds,
#                   reproducers as $OUT/fzr.tgz (the device tool does not return deep folders)
#   narrow          scripts/gpu_narrow_diag.py on NVIDIA into $OUT/narrow.{json,log}
#   printf          scripts/gpu_printf_diag.py on NVIDIA into $OUT/printf.log, counted
#   sat             scripts/gpu_sat_diag.py on NVIDIA into $OUT/sat.{json,log}
#   absmod          scripts/gpu_absmod_diag.py on NVIDIA into $OUT/absmod.{json,log}
#   alias           scripts/gpu_alias_diag.py on NVIDIA into $OUT/alias.log
#   udiv            scripts/gpu_udiv_diag.py on NVIDIA into $OUT/udiv.{json,log}
#   tests           pytest on NVIDIA of $NV_TESTS (files) for at most $NV_LIMIT s (default 200)
#   batch           scripts/gpu_batch.sh with JOBS etc. from the environment, into $OUT/b
# Example: BUDGET=585 bash scripts/gpu_session.sh neg fuzz3:330000
# session 5 GPU wrapper: unpack HEAD, wheels, then run the step named in $1
set -uo pipefail
T0=$(date +%s)
R=/tmp/h; mkdir -p $R/build $R/wheels
tar xzf build/head.tgz -C $R
cp build/wheels_core/*.whl build/wheels_fuzz/*.whl $R/wheels/ 2>/dev/null
cp -r build/wheels_core $R/build/
cd $R
export OUT_ROOT=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for step in "$@"; do echo "##### $step at $(( $(date +%s) - T0 ))s"; case $step in
  neg) OUT=$OUT_ROOT/fuzz timeout 150 bash scripts/gpu_fuzz_negation.sh 2>&1 | tail -60 ;;
  fuzz3*) S=${step#fuzz3:}; LEFT=$(( ${BUDGET:-580} - ($(date +%s) - T0) )); mkdir -p $OUT_ROOT/fz;
     JOBS=${FUZZ_JOBS:-16} DIAG=0 OUT=$OUT_ROOT/fz PYTHON=/opt/torch/.venv/bin/python HARD_LIMIT=$LEFT bash scripts/gpu_fuzz.sh sim,opencl:pocl,opencl:nvidia $S 8000 2>&1 | tail -40 ;;
  narrow) PY=/opt/torch/.venv/bin/python; $PY -m pip install -q --no-index --no-deps --no-compile --target /tmp/clpy-site wheels/*.whl >/dev/null 2>&1
     mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
     OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout ${NL:-200} $PY scripts/gpu_narrow_diag.py --platform nvidia --out $OUT_ROOT/narrow.json > $OUT_ROOT/narrow.log 2>&1
     grep -v " OK$" $OUT_ROOT/narrow.log | tail -n 80 ;;
  printf|tests|sat|absmod|alias|udiv) PY=/opt/torch/.venv/bin/python; $PY -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/clpy-site wheels/*.whl >/dev/null 2>&1
     # clpy itself too: the tests import the simulator as clpy_sim, which only the install names
     $PY -m pip install -q --upgrade --no-deps --no-build-isolation --no-compile --target /tmp/clpy-site . >/dev/null 2>&1 || echo "clpy install failed"
     mkdir -p /tmp/icd && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
     if [ "$step" = alias ]; then
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout 60 $PY scripts/gpu_alias_diag.py --platform nvidia > $OUT_ROOT/alias.log 2>&1
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout 60 $PY scripts/gpu_view_debug.py --platform nvidia >> $OUT_ROOT/alias.log 2>&1
       grep -v Warn $OUT_ROOT/alias.log | tail -n 20
     elif [ "$step" = udiv ]; then
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout 120 $PY scripts/gpu_udiv_diag.py --platform nvidia --out $OUT_ROOT/udiv.json > $OUT_ROOT/udiv.log 2>&1
       grep -v Warn $OUT_ROOT/udiv.log | tail -n 60
     elif [ "$step" = absmod ]; then
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout 120 $PY scripts/gpu_absmod_diag.py --platform nvidia --out $OUT_ROOT/absmod.json > $OUT_ROOT/absmod.log 2>&1
       tail -n 60 $OUT_ROOT/absmod.log
     elif [ "$step" = sat ]; then
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout ${SATL:-150} $PY scripts/gpu_sat_diag.py --platform nvidia --out $OUT_ROOT/sat.json > $OUT_ROOT/sat.log 2>&1
       tail -n 60 $OUT_ROOT/sat.log
     elif [ "$step" = printf ]; then
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site timeout 60 $PY scripts/gpu_printf_diag.py --platform nvidia > $OUT_ROOT/printf.log 2>&1
       $PY scripts/gpu_printf_diag.py --count $OUT_ROOT/printf.log
     else
       OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=/tmp/clpy-site:$R CLPY_TEST_PLATFORM=nvidia CI=true timeout ${NV_LIMIT:-200} $PY -m pytest -q -o addopts= -p no:cacheprovider -rxXf $NV_TESTS > $OUT_ROOT/nv_tests.log 2>&1
       echo "tests rc=$?"; tail -n 15 $OUT_ROOT/nv_tests.log
     fi ;;
  batch) OUT=$OUT_ROOT/b WHEELS=build/wheels_core bash scripts/gpu_batch.sh ;;
  repro) PY=/opt/torch/.venv/bin/python; $PY -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/clpy-site wheels/*.whl >/dev/null 2>&1;
     $PY -m pip install -q --no-deps --no-build-isolation --no-compile --target /tmp/clpy-site . >/dev/null 2>&1
     mkdir -p $OUT_ROOT/fzr
     for s in $SEEDS; do (SKIP_WHEELS=1 DIAG=0 OUT=/tmp/fzr PYTHON=$PY HARD_LIMIT=${RL:-95} SHRINK_SECONDS=70 JOBS=1 bash scripts/gpu_fuzz.sh sim,opencl:pocl,opencl:nvidia $s 1 > $OUT_ROOT/fzr/$s.log 2>&1) & done; wait
     tail -n 2 $OUT_ROOT/fzr/*.log; tar czf $OUT_ROOT/fzr.tgz -C /tmp fzr ;;
esac; done
echo "##### done at $(( $(date +%s) - T0 ))s"
