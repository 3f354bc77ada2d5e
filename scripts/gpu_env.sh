# Sourced by the scripts/gpu_*.sh runners: the steps every GPU-host run shares.
#
#   NAME=gpu_xxx; . scripts/gpu_env.sh; gpu_install; gpu_icd
#
# Uses PY (the Python; PYTHON or python3), SITE (CLPY_SITE or /tmp/clpy-site) and PLATFORM
# (CLPY_GPU_PLATFORM or nvidia; another value, e.g. "portable", dry-runs on PoCL), and sets them
# when unset. No network: wheels come from ./wheels.
PY=${PY:-${PYTHON:-python3}}
SITE=${SITE:-${CLPY_SITE:-/tmp/clpy-site}}
PLATFORM=${PLATFORM:-${CLPY_GPU_PLATFORM:-nvidia}}

# pyopencl and friends from ./wheels into $SITE (SKIP_WHEELS=1: already there), then clpy
# itself (sim/ is installed as the package clpy_sim), built with the setuptools from wheels/.
# NumPy's wheel is left out when the Python has NumPy: CuPy was built against that one.
gpu_install() {
    if [ "${SKIP_WHEELS:-0}" != 1 ]; then
        ls wheels/*.whl >/dev/null 2>&1 \
            || { echo "$NAME: no wheels/ folder with pyopencl wheels" >&2; exit 2; }
        local wheels
        wheels=$(ls wheels/*.whl)
        if "$PY" -c "import numpy" 2>/dev/null; then
            wheels=$(echo "$wheels" | grep -v '/numpy-')
        fi
        # shellcheck disable=SC2086
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$SITE" $wheels || { echo "$NAME: wheel install failed" >&2; exit 2; }
    fi
    export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
    "$PY" -m pip install -q --no-deps --no-build-isolation --no-compile --upgrade \
        --target "$SITE" . || { echo "$NAME: installing clpy failed" >&2; exit 2; }
}

# An OpenCL ICD entry for the NVIDIA driver (containers often lack /etc/OpenCL/vendors); the
# entries already there (PoCL's) are kept beside it.
gpu_icd() {
    [ "$PLATFORM" = nvidia ] || return 0
    grep -qsi nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null && return 0
    local lib
    lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1/ {print $NF; exit}')
    if [ -z "$lib" ]; then
        lib=$(find /usr/local/nvidia /usr/lib /usr/lib64 /usr/lib/x86_64-linux-gnu \
              -name 'libnvidia-opencl.so*' 2>/dev/null | head -n1)
    fi
    if [ -z "$lib" ]; then
        echo "$NAME: libnvidia-opencl.so not found; is the NVIDIA driver mounted?" >&2
        exit 3
    fi
    mkdir -p /tmp/clpy-icd
    echo "$lib" > /tmp/clpy-icd/nvidia.icd
    for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && cp "$f" /tmp/clpy-icd/; done
    export OCL_ICD_VENDORS=/tmp/clpy-icd
    echo "$NAME: using ICD $lib"
}
