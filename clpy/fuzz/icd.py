"""Oclgrind as a fuzzing device: ``--devices sim,opencl:pocl,opencl:oclgrind``.

Oclgrind (Debian package ``oclgrind`` 21.10, scripts/install_oclgrind.sh) installs its ICD
library but registers no ``/etc/OpenCL/vendors/*.icd`` (deliberately: a slow interpreter
should not be every OpenCL program's device). When a listed device names Oclgrind and
``OCL_ICD_VENDORS`` is not set, ``register_oclgrind`` points the ICD loader at a private
vendors folder holding a one-line ``oclgrind.icd`` and the system's own ``.icd`` files (so an
NVIDIA or other registered driver stays listed; pyopencl's wheel finds its PoCL through
``PYOPENCL_HOME`` either way). It must run before the first OpenCL platform query of the
process; the worker processes (spawned) inherit the environment.

On Oclgrind clpy builds OpenCL C 1.2 (clpy/runtime/quirks.py), so work-group collectives and
C11 atomics are lowered there, and the fuzzer leaves out what the 1.2 target cannot emit.
``OCLGRIND_NUM_THREADS`` (default: one per core) is left to the caller.
"""

from __future__ import annotations

import glob
import hashlib
import os
import tempfile

ICD_ENV = "CLPY_OCLGRIND_ICD"  # the same variable tests/oclgrind_kernels.py reads
ICD_NAME = "liboclgrind-rt-icd.so"
_PLACES = ("/usr/lib/oclgrind", "/usr/lib/*/oclgrind", "/usr/lib", "/usr/lib64",
           "/usr/local/lib", "/usr/local/lib/oclgrind")  # fmt: skip
SYSTEM_VENDORS = "/etc/OpenCL/vendors"


def find_oclgrind_icd() -> str | None:
    """``$CLPY_OCLGRIND_ICD``, else where Debian (or ``make install``) puts the library."""
    env = os.environ.get(ICD_ENV)
    if env:
        return env if os.path.isfile(env) else None
    for pattern in _PLACES:
        for d in sorted(glob.glob(pattern)):
            path = os.path.join(d, ICD_NAME)
            if os.path.isfile(path):
                return path
    return None


def wants_oclgrind(devices: list[str]) -> bool:
    return any("oclgrind" in d.lower() for d in devices)


def register_oclgrind(devices: list[str]) -> str | None:
    """Make Oclgrind visible to this process and its children when ``devices`` name it;
    the vendors folder set, or ``None`` when nothing was changed (not asked for,
    ``OCL_ICD_VENDORS`` already set, or Oclgrind not installed: the device lookup then
    says which devices exist)."""
    if not wants_oclgrind(devices) or os.environ.get("OCL_ICD_VENDORS"):
        return None
    icd = find_oclgrind_icd()
    if icd is None:
        return None
    system = sorted(glob.glob(os.path.join(SYSTEM_VENDORS, "*.icd")))
    if any(_reads(p) == icd for p in system):
        return None  # already registered system-wide
    tag = hashlib.sha256("\n".join([icd, *system]).encode()).hexdigest()[:12]
    folder = os.path.join(tempfile.gettempdir(), f"clpy-icd-{os.getuid()}-{tag}")
    os.makedirs(folder, exist_ok=True)
    _write(os.path.join(folder, "oclgrind.icd"), icd + "\n")
    for p in system:
        _write(os.path.join(folder, os.path.basename(p)), _reads(p) + "\n")
    os.environ["OCL_ICD_VENDORS"] = folder
    return folder


def _reads(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    """Atomically (another run may be reading the folder)."""
    if _reads(path) == text.strip():
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
