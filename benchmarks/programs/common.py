"""What every real program of the suite shares: the clpy host helper (NumPy arguments or
``clpy.DeviceArray``s, optional profiling events), the original-style pyopencl host helper,
and result checking.

A program module (one per program) exposes ``NAME``, ``ORIGIN`` (the suite and file it ports),
``SIZES`` (``"small"``, ``"bench"``, ``"gpu"``), ``TOL``, ``make_inputs(size, seed)``,
``numpy_reference(inputs)``, ``run_clpy(inputs, device, *, resident, events=None)`` and
``run_original(inputs, ctx, queue, events=None)``; ``BITWISE = False`` where the program uses
built-ins (``exp``, ``log`` ...) whose results may differ in the last bits between devices.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import clpy

CL_DIR = Path(__file__).parent / "cl"
# The last program each original host built, by (context, .cl file): for diagnostics.
BUILT: dict[tuple[int, str], Any] = {}


def _is_queue(device: Any) -> bool:
    try:
        import pyopencl as cl
    except ImportError:
        return False
    return isinstance(device, cl.CommandQueue)


# A run's launches held back until all are queued (the "queued" kernel times): set to
# ``[queue]``; the first launch of either host then enqueues a marker waiting for a user event.
# The event completes at the run's ``GATE_LAUNCHES``-th launch or its first read-back or
# upload, from the launching thread (on the H100 a non-blocking read into host memory waited
# for the held queue with the interpreter lock held, so a timer thread could not run), or as
# a last resort after ``GATE_S`` from a timer. Kernel intervals then measure the kernels, not how
# long the GPU idled before each (what a host loop's speed decides: on the H100, pathfinder's
# 20 us kernels took 19.7 us after the original host's 112 us idle gaps, 20.9 us after clpy's
# 26 us ones, 16.3 us back to back; benchmarks/results/kernel_diag_h100_s9_gated.md).
GATE: list[Any] = []
GATE_S = 0.25
GATE_LAUNCHES = 128


def gate_launches() -> None:
    """Called before each launch of a gated run: the first holds the queue in ``GATE[0]``
    behind a user event (``GATE`` becomes ``[queue, event, launches]``), the
    ``GATE_LAUNCHES``-th lets it go."""
    import threading

    import pyopencl as cl

    if len(GATE) == 1:
        q = GATE[0]
        ev = cl.UserEvent(q.context)
        cl.enqueue_marker(q, wait_for=[ev])
        GATE.extend([ev, 0])
        timer = threading.Timer(GATE_S, _release, (ev,))
        timer.daemon = True
        timer.start()
    GATE[2] += 1
    if GATE[2] == GATE_LAUNCHES:
        _release(GATE[1])


def open_gate() -> None:
    """Let a gated run's held launches go (before it reads or writes host memory)."""
    if len(GATE) > 1:
        _release(GATE[1])


def _release(ev: Any) -> None:
    import pyopencl as cl

    if ev.command_execution_status != cl.command_execution_status.COMPLETE:
        try:
            ev.set_status(cl.command_execution_status.COMPLETE)
        except cl.Error:  # the other side (timer or launch count) was first
            pass


# Extra keyword arguments of every clpy launch a Host makes (gpu mode sets fp_contract=True
# to time clpy's kernels under the originals' floating-point rules).
LAUNCH_OPTIONS: dict[str, Any] = {}


class Host:
    """The clpy side of a program's host loop.

    ``device``: a clpy device selector (``"sim"``, ``"opencl:pocl"`` ...) or a pyopencl
    ``CommandQueue`` (then device arrays live in its context and launches go to it: the
    GPU mode uses a profiling queue shared with the original host). ``resident=True`` keeps
    multi-launch data in ``clpy.DeviceArray``s; ``False`` passes NumPy arrays to every launch
    (the README's simple way: a copy in and, for written arrays, out per launch).
    ``events``: a list that collects each launch's kernel event (resident runs on OpenCL).
    """

    def __init__(self, device: Any, resident: bool, events: list[Any] | None = None) -> None:
        self.device = device
        self.resident = resident
        self.queue = device if _is_queue(device) else None
        self.events = events if resident else None

    def put(self, a: np.ndarray) -> Any:
        """``a`` where the kernels will use it: a device array, or a private NumPy copy."""
        a = np.ascontiguousarray(a)
        if not self.resident:
            return a.copy()
        return clpy.to_device(a, device=self.device)  # a CommandQueue: in its context

    def empty(self, shape: Any, dtype: Any) -> Any:
        """A zero-filled array for a kernel to write. Resident: ``clpy.zeros``, filled on
        the device (the originals' hosts only allocate; uploading zeros cost srad 28 MiB of
        transfers per run)."""
        if self.resident:
            return clpy.zeros(shape, dtype, device=self.device)
        return np.zeros(shape, dtype)

    def set(self, a: Any, value: np.ndarray) -> None:
        """Overwrite ``a`` (made by ``put``) with ``value`` (an upload when resident)."""
        open_gate()
        if isinstance(a, clpy.DeviceArray):
            a.set(value)
        else:
            np.copyto(a, value)

    def get(self, a: Any) -> np.ndarray:
        open_gate()
        return a.get() if isinstance(a, clpy.DeviceArray) else np.array(a)

    def head(self, a: Any, n: int = 1) -> np.ndarray:
        """The first ``n`` elements of ``a`` on the host, copying only those (a DeviceArray has
        no slicing: its ``cl_array``, or on the simulator its ``sim_array``, has)."""
        open_gate()
        if isinstance(a, clpy.DeviceArray):
            if a.cl_array is not None:
                return np.asarray(a.cl_array[:n].get())
            return np.array(a.sim_array[:n])
        return np.array(a[:n])

    def __call__(self, k: Any, gsize: Any, lsize: Any, *args: Any) -> None:
        if GATE:
            gate_launches()
        if self.events is None:
            k[gsize, lsize](*args, device=self.device, **LAUNCH_OPTIONS)
            return
        h = k[gsize, lsize](*args, device=self.device, wait=False, **LAUNCH_OPTIONS)
        if h is not None and h.event is not None:
            self.events.append(h.event)

    def finish(self) -> None:
        if self.events is not None and self.events:
            self.events[-1].wait()


@functools.cache
def built(ctx: Any, source: str, options: str) -> Any:
    """OpenCL C ``source`` built for ``ctx`` with ``options`` (once)."""
    import pyopencl as cl

    return cl.Program(ctx, source).build(options=options)


def _build_file(ctx: Any, path: str, options: str) -> Any:
    return built(ctx, Path(path).read_text(), options)


# how the originals' hosts get their program from their .cl (``original_programs`` swaps it)
_program: Callable[[Any, str, str], Any] = _build_file


@contextlib.contextmanager
def original_programs(make: Callable[[Any, str, str], Any] | None) -> Iterator[None]:
    """Meanwhile the originals' hosts take their programs from ``make(ctx, path, options)``
    instead of building their .cl (kernel_diag's builds, gpu_mode's "in original host";
    None: unchanged)."""
    global _program
    saved = _program
    if make is not None:
        _program = make
    try:
        yield
    finally:
        _program = saved


def source_instead(source: str, options: str = "") -> Callable[[Any, str, str], Any]:
    """A ``make`` for ``original_programs``: ``source`` in place of the host's .cl, built with
    the host's own options (its ``-D`` macros) and ``options``."""
    return lambda ctx, path, opt: built(ctx, source, f"{opt} {options}".strip())


class OrigHost:
    """A minimal pyopencl host in the originals' style: buffers created once with their data
    (``clCreateBuffer`` + ``clEnqueueWriteBuffer``), kernels from the hand-written ``.cl``,
    arguments set per launch, one read-back at the end."""

    def __init__(
        self, ctx: Any, queue: Any, cl_file: str, options: str = "", events: list[Any] | None = None
    ) -> None:
        import pyopencl as cl

        self.cl = cl
        self.ctx = ctx
        self.queue = queue
        self.events = events
        self.prg = _program(ctx, str(CL_DIR / cl_file), options)
        BUILT[(int(ctx.int_ptr), cl_file)] = self.prg
        self._kernels: dict[str, Any] = {}

    def kernel(self, name: str) -> Any:
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = self.cl.Kernel(self.prg, name)
        return k

    def buf(self, a: np.ndarray) -> Any:
        cl = self.cl
        b = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, max(a.nbytes, 1))
        cl.enqueue_copy(self.queue, b, np.ascontiguousarray(a))
        return b

    def empty(self, nbytes: int) -> Any:
        return self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE, max(nbytes, 1))

    def local(self, nbytes: int) -> Any:
        return self.cl.LocalMemory(nbytes)

    def __call__(self, name: str, gsize: Any, lsize: Any, *args: Any) -> None:
        if GATE:
            gate_launches()
        k = self.kernel(name)
        k.set_args(*args)
        e = self.cl.enqueue_nd_range_kernel(self.queue, k, gsize, lsize)
        if self.events is not None:
            self.events.append(e)

    def read(self, b: Any, shape: Any, dtype: Any) -> np.ndarray:
        open_gate()
        out = np.empty(shape, dtype)
        self.cl.enqueue_copy(self.queue, out, b)
        return out

    def write(self, b: Any, a: np.ndarray) -> None:
        open_gate()
        self.cl.enqueue_copy(self.queue, b, np.ascontiguousarray(a))


def i32(v: Any) -> np.int32:
    return np.int32(v)


def f32(v: Any) -> np.float32:
    return np.float32(v)


class Mismatch(AssertionError):
    """A program's result differs from its NumPy reference."""


def check(name: str, what: str, got: Any, want: Any, tol: dict[str, float]) -> None:
    """Raise ``Mismatch`` naming the program and the run when ``got`` is not ``want``."""
    got_t = got if isinstance(got, tuple) else (got,)
    want_t = want if isinstance(want, tuple) else (want,)
    for j, (g, w) in enumerate(zip(got_t, want_t)):
        g = np.asarray(g)
        w = np.asarray(w)
        if g.shape != w.shape:
            raise Mismatch(f"{name} [{what}] output {j}: shape {g.shape} != reference {w.shape}")
        if np.issubdtype(w.dtype, np.floating) and not np.isfinite(w).all():
            raise Mismatch(
                f"{name} [{what}] output {j}: the NumPy reference itself has "
                f"{int((~np.isfinite(w)).sum())} non-finite values (the inputs blow up)"
            )
        if np.issubdtype(w.dtype, np.floating):
            ok = np.isclose(g, w, rtol=tol.get("rtol", 1e-5), atol=tol.get("atol", 1e-6))
        else:
            ok = g == w
        if not ok.all():
            bad = np.argwhere(~ok)
            first = tuple(int(x) for x in bad[0])
            raise Mismatch(
                f"{name} [{what}] output {j}: {bad.shape[0]} of {w.size} elements differ from "
                f"NumPy; first at {first}: got {g[first]!r}, want {w[first]!r}"
            )
