#!/usr/bin/env bash
# Install Oclgrind (an OpenCL device simulator that checks bounds, data races, barrier
# divergence and uninitialised values) for tests/test_oclgrind.py. Idempotent; safe to call
# from CI on every run.
#
# Why Debian's package and not a source build: building Oclgrind needs the LLVM/Clang
# development packages of a matching release (llvm-14-dev, libclang-14-dev), cmake and a C++
# toolchain, then minutes of C++ compiling on the 2-core CI machine on every fresh container;
# Debian bookworm ships the same 21.10 release prebuilt against its own LLVM 14, so one
# `apt-get install` gives a known version with nothing to compile.
#
# How pyopencl sees it: the package installs the ICD library
# /usr/lib/oclgrind/liboclgrind-rt-icd.so but registers no /etc/OpenCL/vendors/*.icd, and
# this script deliberately does not add one: a system-wide registration would make Oclgrind
# (a slow interpreter) visible to every OpenCL program, including clpy's own device selection.
# The tests instead write a private one-line .icd file and point pyopencl's ICD loader at it
# with OCL_ICD_VENDORS=<that file>, in a subprocess only. PoCL keeps being found as before
# (pyopencl's bundled loader finds the wheel's PoCL through PYOPENCL_HOME, not /etc).
#
# Exit status: 0 when installed, already there, or skipped (not root / no apt-get; the
# reason is printed); non-zero only when an install was attempted and failed.
set -euo pipefail

ICD_NAME=liboclgrind-rt-icd.so

find_icd() {
    local d
    for d in /usr/lib/oclgrind /usr/lib/x86_64-linux-gnu/oclgrind /usr/lib /usr/local/lib \
             /usr/lib64; do
        if [ -f "$d/$ICD_NAME" ]; then
            echo "$d/$ICD_NAME"
            return 0
        fi
    done
    return 1
}

if icd=$(find_icd); then
    echo "install_oclgrind: already installed ($icd)"
    exit 0
fi
SUDO=
if [ "${EUID:-$(id -u)}" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"  # `make test` as a user with password-less sudo
    else
        echo "install_oclgrind: skipped: not root and no password-less sudo (run" \
             "'sudo bash scripts/install_oclgrind.sh' once; until then the Oclgrind tests" \
             "skip, or fail with CI=true)"
        exit 0
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_oclgrind: skipped: no apt-get (install Oclgrind 21.10+ by hand and set" \
         "CLPY_OCLGRIND_ICD=/path/to/$ICD_NAME)"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when apt does not know the package yet (fresh containers
# ship without lists).
if ! apt-cache show oclgrind >/dev/null 2>&1; then
    $SUDO apt-get update -qq
fi
log=$(mktemp)
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends oclgrind >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"

if ! icd=$(find_icd); then
    echo "install_oclgrind: oclgrind installed but $ICD_NAME not found;" \
         "dpkg -L oclgrind lists:" >&2
    dpkg -L oclgrind >&2 || true
    exit 1
fi
echo "install_oclgrind: installed $(dpkg-query -W -f='${Version}' oclgrind) ($icd)"
