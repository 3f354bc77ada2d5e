"""Oclgrind as a second checker: run a kernel's emitted OpenCL C on Oclgrind in a subprocess
and parse its diagnostics into findings named with the simulator's kinds.

Oclgrind (https://github.com/jrprice/Oclgrind, Debian package ``oclgrind`` 21.10, installed
by ``scripts/install_oclgrind.sh``) is an OpenCL device that interprets the kernel's LLVM IR
and checks every access. pyopencl loads OpenCL drivers (ICDs) in-process, and Oclgrind's
checkers are configured from the environment when its runtime starts, so each run is one
child process (``python -m tests.oclgrind_kernels JOB``) whose environment:

- ``OCL_ICD_VENDORS=<private .icd file>``: pyopencl's bundled ocl-icd loader then loads only
  Oclgrind (a vendors *directory* would list Oclgrind and PoCL; the main test process, which
  never sets it, keeps seeing only PoCL, which pyopencl finds through ``PYOPENCL_HOME``);
- ``OCLGRIND_DATA_RACES=1`` (races, off by default), ``OCLGRIND_UNINITIALIZED=1``
  (uninitialised values, off by default), ``OCLGRIND_CHECK_API=1`` (invalid API calls); the
  bounds and barrier-divergence checks are always on;
- ``OCLGRIND_LOG=<file>``: diagnostics to a file instead of stderr, so they are not mixed
  with Python's own output;
- ``OCLGRIND_NUM_THREADS=1``: one worker thread (deterministic report order, and the CI
  machine has 2 cores);
- ``PYOPENCL_NO_CACHE=1``: a plain source build. pyopencl's binary cache probes device info
  that Oclgrind does not have, which ``OCLGRIND_CHECK_API`` would report as API errors.

``OCLGRIND_QUICK`` (only the first and last work-group) is not set: the corpus is small and
some findings are in middle groups. ``OCLGRIND_UNIFORM_WRITES`` is not set either, so
Oclgrind ignores write-write races where every writer stores the same value (the simulator
reports them; see ``UNIFORM_WW``).
"""

from __future__ import annotations

import glob
import os
import pickle
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float32

ICD_ENV = "CLPY_OCLGRIND_ICD"
ICD_NAME = "liboclgrind-rt-icd.so"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = {"OCLGRIND_DATA_RACES": "1", "OCLGRIND_UNINITIALIZED": "1", "OCLGRIND_CHECK_API": "1"}
TIMEOUT_S = 60.0


def find_icd() -> str | None:
    """Oclgrind's ICD library: ``$CLPY_OCLGRIND_ICD``, else where Debian (or a source
    build's ``make install``) puts it; ``None`` when Oclgrind is not installed."""
    env = os.environ.get(ICD_ENV)
    if env:
        return env if os.path.isfile(env) else None
    for pattern in ("/usr/lib/oclgrind", "/usr/lib/*/oclgrind", "/usr/lib", "/usr/lib64",
                    "/usr/local/lib", "/usr/local/lib/oclgrind"):
        for d in sorted(glob.glob(pattern)):
            path = os.path.join(d, ICD_NAME)
            if os.path.isfile(path):
                return path
    return None


def require_icd() -> str:
    """Oclgrind's ICD library for a test that needs it: the test is skipped where Oclgrind
    is not installed, and fails there instead under ``CI=true``."""
    path = find_icd()
    if path is None:
        msg = ("Oclgrind is not installed (run scripts/install_oclgrind.sh, or set "
               "CLPY_OCLGRIND_ICD to liboclgrind-rt-icd.so)")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {msg}")
        pytest.skip(msg)
    return path


_BUILD = """
import sys, pyopencl as cl
plat = next(p for p in cl.get_platforms() if "Oclgrind" in p.name)
ctx = cl.Context(plat.get_devices()[:1])
for path in sys.argv[1:]:
    cl.Program(ctx, open(path).read()).build(options=["-cl-std=CL2.0"])
print("built", len(sys.argv) - 1)
"""


def build_on_oclgrind(sources: list[str], tmp_dir: Any) -> None:
    """Build every source with Oclgrind's Clang (``-cl-std=CL2.0``) in a child process that
    sees only Oclgrind (a private .icd file in ``tmp_dir``), for emitted code no other device
    here compiles (PoCL has no pipes or device-side enqueue); asserts that all built, with
    the compiler's log otherwise. Skips (fails under ``CI=true``) without Oclgrind."""
    icd = require_icd()
    paths = []
    for i, src in enumerate(sources):
        path = tmp_dir / f"k{i}.cl"
        path.write_text(src)
        paths.append(str(path))
    (tmp_dir / "oclgrind.icd").write_text(icd + "\n")
    env = {**os.environ, "OCL_ICD_VENDORS": str(tmp_dir), "PYOPENCL_NO_CACHE": "1"}
    run = subprocess.run([sys.executable, "-c", _BUILD, *paths], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"built {len(paths)}" in run.stdout


# ----------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    """One Oclgrind diagnostic. ``kind`` uses the simulator's names (``out-of-bounds``,
    ``data-race``, ``barrier-divergence``, ``uninitialized-read``), or ``api-error`` /
    ``other``; ``space`` is ``global``/``local``/``private`` where Oclgrind names it."""

    kind: str
    headline: str
    space: str | None
    kernel: str | None
    lines: tuple[int, ...]
    files: tuple[str, ...]
    global_ids: tuple[tuple[int, ...], ...]
    groups: tuple[tuple[int, ...], ...]
    text: str


_HEADLINES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Invalid (?:read|write) of size \d+ at (\w+) memory"), "out-of-bounds"),
    (re.compile(r"Index \(\d+\) exceeds static array size"), "out-of-bounds"),
    (re.compile(r"(?:Read-write|Write-write) data race at (\w+) memory"), "data-race"),
    (re.compile(r"Work-group divergence detected \(barrier\)"), "barrier-divergence"),
    (re.compile(r"Uninitialized value (?:written to (\w+) memory)?"), "uninitialized-read"),
    (re.compile(r"Oclgrind - OpenCL runtime error detected"), "api-error"),
)
_LINE = re.compile(r"^\s*At line (\d+)(?: \(column \d+\))? of (.*?):?\s*$")
_ENTITY = re.compile(r"^\s*(?:First |Second )?[Ee]ntity:\s*Global\(([\d,]+)\)"
                     r".*Group\(([\d,]+)\)")
_GROUP = re.compile(r"^\s*Work-group:\s*\(([\d,]+)\)")
_KERNEL = re.compile(r"^\s*Kernel:\s*(\S+)")


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(","))


def parse_log(log: str) -> list[Finding]:
    """Split Oclgrind's log into findings: a headline at column 0, then indented details."""
    blocks: list[list[str]] = []
    for line in log.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    return [f for f in (_finding(b) for b in blocks) if f is not None]


def _finding(block: list[str]) -> Finding | None:
    head = block[0].strip()
    kind, space = "other", None
    for pattern, k in _HEADLINES:
        m = pattern.match(head)
        if m:
            kind = k
            space = m.group(1) if m.groups() else None
            break
    text = "\n".join(block)
    if kind == "api-error" and _is_pyopencl_probe(text):
        return None
    lines, files, gids, groups, kernel = [], [], [], [], None
    for line in block[1:]:
        if m := _LINE.match(line):
            lines.append(int(m.group(1)))
            files.append(m.group(2))
        elif m := _ENTITY.match(line):
            gids.append(_ids(m.group(1)))
            groups.append(_ids(m.group(2)))
        elif m := _GROUP.match(line):
            groups.append(_ids(m.group(1)))
        elif (m := _KERNEL.match(line)) and kernel is None:
            kernel = m.group(1)
    return Finding(kind, head, space, kernel, tuple(lines), tuple(files), tuple(gids),
                   tuple(groups), text)


def _is_pyopencl_probe(text: str) -> bool:
    # pyopencl asks every device for NVIDIA's compute capability when it wraps a kernel
    # (pyopencl/invoker.py, `nv_compute_capability`) and expects CL_INVALID_VALUE from
    # others; that query is pyopencl's, not the kernel's.
    return "Function: clGetDeviceInfo" in text and "CL_INVALID_VALUE" in text


# ----------------------------------------------------------------------------- running


@dataclass(frozen=True)
class OclgrindRun:
    """What one Oclgrind launch reported, and the arrays after the launch."""

    findings: tuple[Finding, ...]
    log: str
    outputs: list[Any]

    def kinds(self) -> set[str]:
        return {f.kind for f in self.findings}


def run_on_oclgrind(icd: str, source: str, name: str, gsize: tuple[int, ...],
                    lsize: tuple[int, ...], args: list[Any],
                    env: dict[str, str] | None = None) -> OclgrindRun:
    """Build ``source`` and launch kernel ``name`` on Oclgrind (ICD library ``icd``) in a
    child process with every checker on; ``env`` adds or overrides variables."""
    with tempfile.TemporaryDirectory(prefix="clpy-oclgrind-") as tmp:
        vendors = os.path.join(tmp, "oclgrind.icd")
        with open(vendors, "w") as f:
            f.write(icd + "\n")
        job, result, log = (os.path.join(tmp, n) for n in ("job.pkl", "out.pkl", "oclgrind.log"))
        with open(job, "wb") as f:
            pickle.dump({"source": source, "name": name, "gsize": gsize, "lsize": lsize,
                         "args": args, "result": result}, f)
        child_env = dict(os.environ, OCL_ICD_VENDORS=vendors, OCLGRIND_LOG=log,
                         OCLGRIND_NUM_THREADS="1", PYOPENCL_NO_CACHE="1", **CHECKS)
        child_env.update(env or {})
        proc = subprocess.run([sys.executable, "-m", "tests.oclgrind_kernels", job], cwd=REPO,
                              env=child_env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        text = open(log).read() if os.path.exists(log) else ""
        if proc.returncode != 0:
            raise RuntimeError(f"Oclgrind child for {name} exited {proc.returncode}\n"
                               f"stderr:\n{proc.stderr}\nOclgrind log:\n{text}")
        with open(result, "rb") as f:
            outputs = pickle.load(f)
    return OclgrindRun(tuple(parse_log(text)), text, outputs)


def _child(job_path: str) -> None:
    import pyopencl as cl

    with open(job_path, "rb") as f:
        job = pickle.load(f)
    platforms = [p for p in cl.get_platforms() if "oclgrind" in p.name.lower()]
    if not platforms:
        names = [p.name for p in cl.get_platforms()]
        raise SystemExit(f"no Oclgrind platform among {names}")
    ctx = cl.Context(platforms[0].get_devices())
    queue = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, job["source"]).build()
    outs = [a.copy() if isinstance(a, np.ndarray) else a for a in job["args"]]
    bufs, kargs = [], []
    for a in outs:
        if isinstance(a, np.ndarray):
            buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=a)
            bufs.append((a, buf))
            kargs.append(buf)
        else:
            kargs.append(a)
    cl.Kernel(prg, job["name"])(queue, job["gsize"], job["lsize"], *kargs)
    for a, buf in bufs:
        cl.enqueue_copy(queue, a, buf)
    queue.finish()
    with open(job["result"], "wb") as f:
        pickle.dump(outs, f)


def list_platforms(icd: str, vendors_dir: bool) -> list[str]:
    """Platform names pyopencl sees in a fresh process with Oclgrind registered through a
    private vendors directory (``vendors_dir``) or not at all."""
    env = dict(os.environ)
    env.pop("OCL_ICD_VENDORS", None)
    with tempfile.TemporaryDirectory(prefix="clpy-oclgrind-") as tmp:
        if vendors_dir:
            with open(os.path.join(tmp, "oclgrind.icd"), "w") as f:
                f.write(icd + "\n")
            env["OCL_ICD_VENDORS"] = tmp
        code = "import pyopencl as cl; print('\\n'.join(p.name for p in cl.get_platforms()))"
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=True)
    return proc.stdout.splitlines()


# ----------------------------------------------------------------------------- kernels

# clpy's emitter rejects a barrier it can prove divergent (clpy/emit/lower_uniform.py), so
# the two barrier-divergence kernels of tests/test_sim_bugs.py cannot be emitted. These are
# their OpenCL C, written by hand to match the Python line for line; ``{file}`` and
# ``{line}`` become a #line directive naming the kernel's ``# BUG`` line so that Oclgrind's
# report points at the same Python line as the simulator's.
DIVERGENT_BARRIER_C = """\
__kernel void divergent_barrier(__global const float* x, __global float* y) {{
    size_t lid = get_local_id(0);
    float v = x[get_global_id(0)];
    if (lid < 16) {{
#line {line} "{file}"
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        v = v * 2.0f;
    }}
    y[get_global_id(0)] = v;
}}
"""

RETURN_BEFORE_BARRIER_C = """\
__kernel void return_before_barrier(__global const float* x, __global float* y, int n) {{
    size_t i = get_global_id(0);
    __local float tmp[32];
    if (i >= n) {{
        return;
    }}
    tmp[get_local_id(0)] = x[i];
#line {line} "{file}"
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    y[i] = tmp[0];
}}
"""


@clpy.kernel
def uniform_ww(x: Global[float32], y: Global[float32]):
    tmp = clpy.local_array(float32, 32)
    tmp[0] = 1.0  # BUG: every work-item writes, unordered (all store the same value)
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[0] + x[clpy.get_global_id(0)]


@clpy.kernel
def uniform_ww_fixed(x: Global[float32], y: Global[float32]):
    tmp = clpy.local_array(float32, 32)
    if clpy.get_local_id(0) == 0:
        tmp[0] = 1.0
    clpy.barrier()
    y[clpy.get_global_id(0)] = tmp[0] + x[clpy.get_global_id(0)]


if __name__ == "__main__":
    _child(sys.argv[1])
