"""Optional on-disk cache: emitted OpenCL sources (plain ``.cl`` text with a JSON note) and
the directory pyopencl keeps built program binaries in. Nothing is pickled.

Off unless ``CLPY_CACHE_DIR`` is set (a path, or ``1`` for the user cache dir:
``$XDG_CACHE_HOME/clpy`` or ``~/.cache/clpy``). Sources are written as
``<dir>/sources/<kernel>-<sha256 prefix>.cl``; binaries go to ``<dir>/binaries`` (pyopencl's
own cache, keyed by source, options and device). ``clear_caches(disk=True)`` deletes both.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

ENV_VAR = "CLPY_CACHE_DIR"


def cache_dir() -> Path | None:
    """The cache directory, or ``None`` when the disk cache is off."""
    value = os.environ.get(ENV_VAR, "").strip()
    if not value or value.lower() in ("0", "off", "false", "no"):
        return None
    if value.lower() in ("1", "on", "true", "yes"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        return Path(base) / "clpy"
    return Path(value).expanduser()


def binary_dir() -> str | None:
    """Where pyopencl caches binaries (``None``: pyopencl's default)."""
    d = cache_dir()
    return str(d / "binaries") if d is not None else None


def record(kernel: str, device: str, options: str, source: str) -> Path | None:
    """Write an emitted source (once per content); returns its path, or ``None`` if off."""
    d = cache_dir()
    if d is None:
        return None
    digest = hashlib.sha256(f"{options}\n{source}".encode()).hexdigest()[:16]
    path = d / "sources" / f"{kernel}-{digest}.cl"
    if path.exists():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
        note = {"kernel": kernel, "device": device, "options": options}
        path.with_suffix(".json").write_text(json.dumps(note, indent=1))
    except OSError:
        return None  # a read-only or full disk never breaks a launch
    return path


def clear() -> None:
    d = cache_dir()
    if d is not None:
        shutil.rmtree(d / "sources", ignore_errors=True)
        shutil.rmtree(d / "binaries", ignore_errors=True)
