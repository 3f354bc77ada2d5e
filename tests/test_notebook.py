"""Jupyter support: kernel display (HTML/Markdown, highlighted with Pygments or plain),
errors shown without clpy's frames (``_render_traceback_``), a progress bar for long
simulator launches, Ctrl-C leaving arrays untouched, and examples/notebook.ipynb executed
end to end with nbclient."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float32, int32
from clpy.notebook import highlight_c
from clpy_sim import progress as sim_progress

ROOT = Path(__file__).resolve().parent.parent


@clpy.kernel
def saxpy(a: float32, x: Global[float32], y: Global[float32]):
    """y <- a*x + y."""
    i = clpy.get_global_id(0)
    y[i] = a * x[i] + y[i]


@clpy.kernel
def scale(x, a):
    x[clpy.get_global_id(0)] *= a


@clpy.kernel
def broken(x: Global[float32]):
    x[0] = no_such_name  # noqa: F821


@clpy.kernel
def racy(x: Global[float32], out: Global[float32], tmp: Local[float32]):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)]
    if lid == 0:
        out[0] = tmp[1]


@clpy.kernel
def slow(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    for _ in range(n):
        x[i] = x[i] + 1.0


def test_kernel_markdown() -> None:
    md = saxpy._repr_markdown_()
    assert md.startswith(
        "**clpy kernel** `saxpy(a: float32, x: Global[float32], y: Global[float32])`"
    )
    assert "y <- a*x + y." in md
    assert "- `a: float, x: Global[float], y: Global[float]`" in md
    body = md[md.index("```c\n") + 5 : md.rindex("```")]
    assert body.rstrip("\n") == saxpy.source_for("opencl-c-2.0", False).rstrip("\n")


def test_kernel_html_highlighted_and_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pygments")
    html = saxpy._repr_html_()
    assert "<b>clpy kernel</b>" in html and "1 specialization(s)" in html
    assert 'style="color:' in html  # Pygments' inline styles
    assert re.sub(r"<[^>]+>", "", html).count("__kernel void saxpy(") == 1
    monkeypatch.setitem(sys.modules, "pygments", None)  # as if not installed
    plain = highlight_c("a < b && c")
    assert plain == "<pre>a &lt; b &amp;&amp; c</pre>"


def test_generic_kernel_display_lists_specializations() -> None:
    scale.clear_cache()
    assert "Generic kernel" in scale._repr_markdown_()
    scale[(4,), (4,)](np.ones(4, np.float32), 2.0, device="sim")
    scale[(4,), (4,)](np.ones(4, np.int32), 3, device="sim")
    md = scale._repr_markdown_()
    assert "- `x: Global[float], a: float`" in md and "- `x: Global[int], a: int`" in md
    assert "__kernel void scale(__global int* x, int a)" in md


def test_broken_kernel_displays_its_error() -> None:
    md = broken._repr_markdown_()
    assert "UndefinedNameError" in md and "no_such_name" in md
    assert "&lt;" not in broken._repr_html_() or "UndefinedNameError" in broken._repr_html_()


def test_compile_error_renders_without_frames() -> None:
    with pytest.raises(clpy.CompileError) as e:
        broken.source  # noqa: B018
    lines = e.value._render_traceback_()
    assert lines[0].startswith(f"UndefinedNameError: {__file__}:")
    assert lines[1].strip() == "x[0] = no_such_name  # noqa: F821"
    assert lines[2].strip() == "^" * len("no_such_name")
    assert len(lines) == 3


def test_simulation_error_renders_without_frames() -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(clpy.sim.SimulationError) as e:
        racy[(8,), (8,)](x, out, clpy.LocalMemory(8), device="sim")
    lines = e.value._render_traceback_()
    assert lines[0].startswith("SimulationError: data-race:")
    assert any("tmp[1]" in s for s in lines) and not any("sim/" in s for s in lines)
    assert out[0] == 0.0


# the NumPy engine's batches (the native engine's bar: tests/test_sim_native_launch_path.py)
@pytest.mark.usefixtures("numpy_engine")
def test_progress_bar_for_long_launches(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sim_progress, "PROGRESS_AFTER_S", 0.0)  # "long" from the start
    monkeypatch.delenv("CLPY_PROGRESS", raising=False)
    x = np.zeros(4096, np.float32)
    with clpy.sim.config(max_lanes=256):  # 16 batches of work-groups
        slow[(4096,), (64,)](x, 3, device="sim")
    assert np.all(x == 3.0)
    assert "clpy sim" in capsys.readouterr().err
    # short launches (the default threshold) show nothing
    monkeypatch.setattr(sim_progress, "PROGRESS_AFTER_S", 3600.0)
    slow[(4096,), (64,)](x, 1, device="sim")
    assert "clpy sim" not in capsys.readouterr().err


def test_progress_counts_groups() -> None:
    p = sim_progress.Progress(10, after=3600.0)
    for _ in range(5):
        p.step(2)
    assert p.done == 10 and p.bar is None
    p.close()


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
# the NumPy engine: natively the warm-up's quick launch makes this one short, and a short
# native launch runs to its end before Ctrl-C raises (tests/test_sim_native_launch_path.py and
# test_sim_resources.py interrupt native launches)
@pytest.mark.usefixtures("numpy_engine")
def test_ctrl_c_leaves_arrays_untouched() -> None:
    x = np.arange(1 << 14, dtype=np.float32)
    before = x.copy()
    slow[(64,), (64,)](np.zeros(64, np.float32), 1, device="sim")  # compile outside the timer

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt), clpy.sim.config(max_lanes=1024):
            slow[(1 << 14,), (64,)](x, 1 << 20, device="sim")  # hours without the interrupt
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    np.testing.assert_array_equal(x, before)


def test_example_notebook_runs() -> None:
    if os.environ.get("CI", "").lower() != "true":
        pytest.importorskip("nbclient")
        pytest.importorskip("ipykernel")
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "examples" / "notebook.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    outputs = [c.outputs for c in nb.cells if c.cell_type == "code"]
    text = "\n".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for out in outputs
        for o in out
    )
    shown = next(o for out in outputs for o in out if "text/html" in o.get("data", {}))
    assert "<b>clpy kernel</b> <code>damped_wave(" in shown["data"]["text/html"]
    assert "```c" in shown["data"]["text/markdown"]
    assert "__kernel void damped_wave(__global const float* u" in text
    assert "simulator matches NumPy: True" in text
    assert "same bits as the simulator: True" in text or "no OpenCL device" in text
    assert "data-race:" in text and "total untouched: True" in text
    (err,) = [o for out in outputs for o in out if o["output_type"] == "error"]
    assert err["ename"] == "UndefinedNameError"
    # the cell's own line 4 and the caret, no clpy frames
    assert re.match(r"UndefinedNameError: .*:4:12: name 'undefined_name'", err["traceback"][0])
    assert err["traceback"][2].strip() == "^" * len("undefined_name")
    assert len(err["traceback"]) == 3
    images = [o for out in outputs for o in out if "image/png" in o.get("data", {})]
    assert images or "matplotlib is not installed" in text
