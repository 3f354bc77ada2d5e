#!/usr/bin/env bash
# The wheel folders the GPU scripts carry to the device machine (Python 3.12, no network there).
#
#     bash scripts/gpu_wheels.sh            # download into wheels/, then make the subsets
#     bash scripts/gpu_wheels.sh --subsets  # only remake the subsets from wheels/
#
# wheels/ (every wheel, ~61 MB) is over the device tool's 64 MiB carry limit together with the
# tree, so runs carry one subset (all in ignored folders):
#   build/wheels_core  pyopencl and its dependencies, pytest, tqdm: gpu_check, gpu_batch,
#                      gpu_algorithms, gpu_programs (the GPU host has NumPy and CuPy)
#   build/wheels_fuzz  core + the PoCL wheel: gpu_fuzz, and the whole suite with PoCL
#   build/wheels_dask  core + NumPy, dask and distributed: gpu_dask
# Use: `WHEELS=build/wheels_core JOBS=... bash scripts/gpu_batch.sh`, or link the subset as
# wheels/ for the scripts that read wheels/ (`ln -sfn build/wheels_fuzz wheels`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
CORE="pyopencl pytools platformdirs siphash24 mako markupsafe typing_extensions setuptools wheel
      packaging pytest pluggy iniconfig hypothesis attrs sortedcontainers pygments tqdm"
FUZZ="pocl_binary_distribution"
DASK="numpy dask distributed click cloudpickle fsspec importlib_metadata jinja2 lazy_importer
      locket msgpack partd psutil pyyaml tblib toolz tornado zict zipp"

if [ "${1:-}" != --subsets ]; then
    mkdir -p wheels
    # shellcheck disable=SC2086
    "$PY" -m pip download -q --dest wheels --only-binary=:all: --python-version 3.12 \
        --implementation cp --abi cp312 --abi abi3 --abi none \
        --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux1_x86_64 \
        $CORE pocl-binary-distribution $DASK
fi

subset() {  # subset DIR NAMES...: the wheels of wheels/ whose distribution is named
    local dir=$1; shift
    rm -rf "$dir"; mkdir -p "$dir"
    for name in "$@"; do
        local found=0
        for w in wheels/*.whl; do
            local dist
            dist=$(basename "$w" | cut -d- -f1 | tr 'A-Z-' 'a-z_')
            if [ "$dist" = "$name" ]; then cp "$w" "$dir/"; found=1; fi
        done
        [ $found = 1 ] || { echo "gpu_wheels: no wheel for $name in wheels/" >&2; exit 1; }
    done
    echo "$dir: $(ls "$dir" | wc -l) wheels, $(du -sm "$dir" | cut -f1) MB"
}
# shellcheck disable=SC2086
subset build/wheels_core $CORE
# shellcheck disable=SC2086
subset build/wheels_fuzz $CORE $FUZZ
# shellcheck disable=SC2086
subset build/wheels_dask $CORE $DASK
