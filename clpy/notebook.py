"""How kernels look in Jupyter: ``Kernel._repr_html_`` and ``_repr_markdown_`` render here.

A kernel shows its signature, its docstring's first line, the specializations made so far
and the emitted OpenCL C (syntax-highlighted with Pygments when it is installed, a plain
``<pre>`` otherwise). A kernel that does not compile shows the compile error instead of
raising: a notebook's display must not fail.
"""

from __future__ import annotations

import ast
import html
from typing import TYPE_CHECKING

from clpy.abi.base import describe
from clpy.errors import CompileError

if TYPE_CHECKING:
    from clpy.kernel import Kernel, Specialization


def signature(k: Kernel) -> str:
    """``saxpy(a: float32, x: Global[float32], y: Global[float32])`` as the user wrote it."""
    try:
        return f"{k.__name__}({ast.unparse(k.parsed.tree.args)})"
    except CompileError:
        return f"{k.__name__}(...)"


def spec_signature(spec: Specialization) -> str:
    """One specialization's parameter types: ``x: Global[float], n: int, BLOCK=256``."""
    parts = [f"{p.name}: {describe(p.type)}" for p in spec.function.params]
    parts += [f"{n}={v!r}" for n, v in spec.constexprs]
    return ", ".join(parts)


def _shown(k: Kernel) -> tuple[list[Specialization], str | None, str | None]:
    """(specializations, source to show, error text)."""
    specs = list(k._cache.values())  # made so far, by launches or specialize()
    try:
        anns = k.annotations()
        generic = any(n not in anns for n in k.param_names)
        if not generic:
            spec = k._default()
            if spec not in specs:
                specs.insert(0, spec)
            return specs, spec.source_for("opencl-c-2.0", False), None
    except CompileError as e:
        return specs, None, f"{type(e).__name__}: {e}"
    except TypeError as e:  # a constexpr without a value: shown with its specializations
        if not specs:
            return specs, None, str(e)
    if specs:
        return specs, specs[-1].source_for("opencl-c-2.0", False), None
    return specs, None, None


def _doc(k: Kernel) -> str:
    doc = (k.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def kernel_markdown(k: Kernel) -> str:
    """Markdown: signature, doc, specializations, the OpenCL C in a ```c block."""
    specs, source, error = _shown(k)
    out = [f"**clpy kernel** `{signature(k)}`"]
    if _doc(k):
        out += ["", _doc(k)]
    if specs:
        out += ["", "Specializations:", *(f"- `{spec_signature(s)}`" for s in specs)]
    if error is not None:
        out += ["", "```text", error, "```"]
    elif source is not None:
        out += ["", "```c", source.rstrip("\n"), "```"]
    else:
        out += [
            "",
            "_Generic kernel: its types come from the first launch or from "
            f"`{k.__name__}.specialize(...)`._",
        ]
    return "\n".join(out)


def highlight_c(source: str) -> str:
    """OpenCL C as HTML: Pygments' C lexer with inline styles, or an escaped ``<pre>``."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import CLexer
    except ImportError:
        return f"<pre>{html.escape(source)}</pre>"
    return highlight(source, CLexer(), HtmlFormatter(noclasses=True, nobackground=True))


def kernel_html(k: Kernel) -> str:
    """HTML: the same content as ``kernel_markdown``, the source highlighted."""
    specs, source, error = _shown(k)
    out = [
        '<div class="clpy-kernel">',
        f"<p><b>clpy kernel</b> <code>{html.escape(signature(k))}</code></p>",
    ]
    if _doc(k):
        out.append(f"<p>{html.escape(_doc(k))}</p>")
    if specs:
        items = "".join(f"<li><code>{html.escape(spec_signature(s))}</code></li>" for s in specs)
        out.append(f"<details><summary>{len(specs)} specialization(s)</summary><ul>{items}</ul>")
        out.append("</details>")
    if error is not None:
        out.append(f'<pre style="color:#b00">{html.escape(error)}</pre>')
    elif source is not None:
        out.append(highlight_c(source))
    else:
        out.append(
            "<p><i>Generic kernel: its types come from the first launch or from "
            f"<code>{html.escape(k.__name__)}.specialize(...)</code>.</i></p>"
        )
    out.append("</div>")
    return "\n".join(out)
