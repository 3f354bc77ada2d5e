"""The machine's C compiler for the native engine: found once (``CC``, else ``cc``, ``gcc``,
``clang``), sources compiled to shared libraries cached on disk by the hash of source,
compiler and flags (``$CLPY_CACHE_DIR``/native, else the user's cache directory), loaded with
ctypes."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from clpy_sim.native.ctypes_c import Unsupported

HERE = Path(__file__).resolve().parent
# IEEE float arithmetic as the NumPy engine's: no contraction into fma, no fast-math
FLAGS = (
    "-O3",
    "-std=gnu11",
    "-fPIC",
    "-shared",
    "-fwrapv",
    "-fno-strict-aliasing",
    "-ffp-contract=off",
    "-fno-math-errno",
    # NaNs keep their bits as NumPy leaves them: no x / -1.0 -> -x or x * 1.0 -> x folding
    # (a negation flips a NaN's sign bit; the multiply or divide keeps it)
    "-fsignaling-nans",
    "-fsigned-char",
    "-w",
)
# the host's instructions (fma, AVX): an fma built-in is one instruction, not libm's software
# fma; results are the same bits (no contraction, no reassociation)
NATIVE = ("-march=native",)
_LOCK = threading.Lock()


class CompileFailed(Exception):
    """The C compiler rejected a generated source (a code generator bug)."""


@functools.lru_cache(maxsize=8)
def _find(cc_env: str | None) -> tuple[str, str] | str:
    """``(path, version line)`` of a working C compiler, or why there is none."""
    names = [cc_env] if cc_env else ["cc", "gcc", "clang"]
    for name in names:
        path = shutil.which(name) if not os.path.isabs(name) else name
        if not path or not os.access(path, os.X_OK):
            continue
        try:
            out = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
        except OSError:
            continue
        if out.returncode == 0:
            return path, (out.stdout.splitlines() or [""])[0]
    if cc_env:
        return f"the C compiler CC={cc_env!r} was not found or does not run"
    return "no C compiler found (cc, gcc or clang on PATH; or set CC)"


def compiler() -> tuple[str, str]:
    """The C compiler to use; raises ``Unsupported`` saying why there is none."""
    found = _find(os.environ.get("CC") or None)
    if isinstance(found, str):
        raise Unsupported(found)
    return found


def cache_dir() -> Path:
    base = os.environ.get("CLPY_CACHE_DIR")
    if base:
        return Path(base) / "native"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "clpy" / "native"


@functools.cache
def _flags(cc: str) -> tuple[str, ...]:
    """FLAGS plus NATIVE where the compiler takes it."""
    try:
        r = subprocess.run(
            [cc, *NATIVE, "-x", "c", "-fsyntax-only", "-"],
            input="int x;\n",
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return FLAGS
    return (*FLAGS, *NATIVE) if r.returncode == 0 else FLAGS


@functools.cache
def _host() -> str:
    """What -march=native depends on: the CPU's model and flags (Linux), else the machine."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            lines = [x for x in f if x.startswith(("model name", "flags"))][:2]
        return "".join(lines)
    except OSError:
        return platform.machine() + platform.processor()


@functools.cache
def slow_gathers() -> bool:
    """Whether vectorized gathers lose to scalar loads on this CPU, so that the generated
    work-item loops that keep index tests are not vectorized (cgen_group.py ``_no_gathers``):
    AMD (the 2-core EPYC VM: pathfinder 1.74x, hotspot 1.25x less CPU without them), not Intel
    (the 16-core Xeon of the H100 host: pathfinder's C took 1.5x as long without them,
    session 9). ``CLPY_SIM_NATIVE_GATHERS=0`` or ``1`` decides instead."""
    env = os.environ.get("CLPY_SIM_NATIVE_GATHERS", "").strip()
    if env in ("0", "1"):
        return env == "0"
    try:
        with open("/proc/cpuinfo") as f:
            return any(x.startswith("vendor_id") and "AuthenticAMD" in x for x in f)
    except OSError:
        return False


def _headers() -> str:
    return "".join((HERE / h).read_text() for h in ("prelude.h", "engine.h"))


def build(source: str) -> ctypes.CDLL:
    """Compile ``source`` (or take it from the cache) and load it."""
    cc, version = compiler()
    flags = _flags(cc)
    key = hashlib.sha256(
        "\0".join(
            (source, _headers(), cc, version, " ".join(flags), sys.platform, _host())
        ).encode()
    ).hexdigest()[:32]
    d = cache_dir()
    so = d / f"k{key}.so"
    with _LOCK:
        if not so.exists():
            d.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=d) as tmp:
                c = Path(tmp) / f"k{key}.c"
                c.write_text(source)
                out = Path(tmp) / "k.so"
                r = subprocess.run(
                    [cc, *flags, "-I", str(HERE), "-o", str(out), str(c), "-lm"],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if r.returncode != 0:
                    (d / f"k{key}.c").write_text(source)
                    raise CompileFailed(
                        f"{cc} failed on the generated kernel (kept in {d / f'k{key}.c'}):\n"
                        + r.stderr[-4000:]
                    )
                os.replace(out, so)
        lib = ctypes.CDLL(str(so))
    # clpy_run(A, N, g0, g1) runs groups [g0, g1); clpy_enter (engine.h) is it with a
    # landing place for a cancelled poll (CLPY_BACKEDGE)
    for fn in (lib.clpy_run, lib.clpy_enter):
        fn.restype = ctypes.c_int
        fn.argtypes = _RUN_ARGS
    lib.clpy_cancel_ptr.restype = ctypes.POINTER(ctypes.c_int32)
    lib.clpy_cancel_ptr.argtypes = []
    return lib


_RUN_ARGS: list[Any] = [
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_int64),
    ctypes.c_int64,
    ctypes.c_int64,
]
