"""Optional on-disk cache: emitted OpenCL sources (plain ``.cl`` text with a JSON note) and
the directory pyopencl keeps built program binaries in. Nothing is pickled.

Off unless ``CLPY_CACHE_DIR`` is set (a path, or ``1`` for the user cache dir:
``$XDG_CACHE_HOME/clpy`` or ``~/.cache/clpy``). Sources are written as
``<dir>/sources/<kernel>-<sha256 prefix>.cl``; binaries go to ``<dir>/binaries`` (pyopencl's
own cache, keyed by source, options and device). ``clear_caches(disk=True)`` deletes both.

Integrity: a source file's name carries the SHA-256 prefix of its content, and a file whose
content no longer matches is rewritten. pyopencl's binary cache has no checksum (a truncated or
bit-flipped ``binary`` would be handed to the driver), so clpy seals each entry after a build
with ``binary.sha256`` and, once per process before the first build, removes every entry whose
binary does not match its seal (or has none: a build that died half-way): it is rebuilt, never
loaded. Files are written to a unique temporary name and renamed, so concurrent threads and
processes never see a partial file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import uuid
from pathlib import Path

ENV_VAR = "CLPY_CACHE_DIR"
SEAL = "binary.sha256"
_verified: set[str] = set()  # binary directories checked by this process
_verify_lock = threading.Lock()


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
    """Where pyopencl caches binaries (``None``: pyopencl's default), its entries checked
    against their seals once per process (``verify_binaries``)."""
    d = cache_dir()
    if d is None:
        return None
    path = str(d / "binaries")
    if path not in _verified:
        with _verify_lock:
            if path not in _verified:
                verify_binaries(path)
                _verified.add(path)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify_binaries(path: str) -> list[str]:
    """Remove the cache entries of ``path`` whose binary does not match its seal or has no
    seal; the names removed."""
    removed: list[str] = []
    root = Path(path)
    if not root.is_dir():
        return removed
    for entry in root.iterdir():
        binary = entry / "binary"
        if not binary.is_file():
            continue
        seal = entry / SEAL
        try:
            ok = seal.is_file() and seal.read_text().strip() == _digest(binary)
        except OSError:
            ok = False
        if not ok:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed


def seal_binaries(path: str | None) -> None:
    """Write the seal of every entry of ``path`` that has none (after a build added it)."""
    if path is None or not os.path.isdir(path):
        return
    for entry in Path(path).iterdir():
        binary, seal = entry / "binary", entry / SEAL
        # pyopencl writes "info" after the binary is complete (under its lock): an entry
        # without it may be another process's write in progress.
        if binary.is_file() and (entry / "info").is_file() and not seal.exists():
            try:
                _write_atomic(seal, _digest(binary))
            except OSError:
                pass  # a read-only cache: the entry is re-checked (and rebuilt) next time


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def record(kernel: str, device: str, options: str, source: str) -> Path | None:
    """Write an emitted source (once per content); returns its path, or ``None`` if off."""
    d = cache_dir()
    if d is None:
        return None
    digest = hashlib.sha256(f"{options}\n{source}".encode()).hexdigest()[:16]
    path = d / "sources" / f"{kernel}-{digest}.cl"
    try:
        if path.read_text() == source:
            return path
    except (OSError, UnicodeDecodeError):
        pass  # missing, truncated or corrupted: written (again) below
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, source)
        note = {"kernel": kernel, "device": device, "options": options}
        _write_atomic(path.with_suffix(".json"), json.dumps(note, indent=1))
    except OSError:
        return None  # a read-only or full disk never breaks a launch
    return path


def clear() -> None:
    d = cache_dir()
    if d is not None:
        shutil.rmtree(d / "sources", ignore_errors=True)
        shutil.rmtree(d / "binaries", ignore_errors=True)
