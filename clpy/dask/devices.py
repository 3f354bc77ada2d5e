"""Which device a Dask worker process runs clpy kernels on (docs/dask.md "Devices").

A selector that names one device (``"sim"``, ``"opencl:pocl"``, ``"opencl:nvidia:#1"``) means
that device on every worker. A selector that matches several devices (``"opencl:gpu"`` on a
node with 4 GPUs) means one of them per worker, round-robin by the worker's rank on its node:
``CLPY_WORKER_RANK`` in the worker's environment, else the number that ends the worker's name
(``LocalCluster`` names its workers 0, 1, ...; ``dask worker --nworkers 4 --name n`` and
dask-jobqueue end their names in ``-0``, ``-1`` ...), else (a worker named by its address) a
number claimed on the node among the workers of the same scheduler. A worker whose environment sets
``CUDA_VISIBLE_DEVICES`` (dask-cuda's ``LocalCUDACluster``, or one GPU per worker by hand)
takes the first match: the GPU that variable puts first.

No selector: ``CLPY_DEVICE`` from the worker's environment, else every OpenCL GPU the worker
sees (round-robin as above), else the simulator.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from clpy.runtime.devices import ENV_VAR, RUNTIME, Device

RANK_VAR = "CLPY_WORKER_RANK"


def worker_rank() -> int:
    """This process's rank among the Dask workers of its node (0 outside a worker)."""
    env = os.environ.get(RANK_VAR, "").strip()
    if env:
        try:
            return int(env)
        except ValueError:
            raise ValueError(f"{RANK_VAR}={env!r}: expected an integer") from None
    try:
        from distributed import get_worker  # optional dependency

        worker = get_worker()
    except (ImportError, ValueError):  # no distributed, or not inside a worker
        return 0
    rank = _rank_from_name(worker.name, worker.address)
    return rank if rank is not None else _claimed_rank(str(worker.scheduler.address))


def _rank_from_name(name: Any, address: str) -> int | None:
    """The number ending a worker's name; None for a worker named by its address (``dask
    worker --nworkers 2`` without ``--name``)."""
    if isinstance(name, int):
        return name
    text = str(name)
    if text == address or "://" in text:
        return None
    m = re.search(r"(\d+)$", text)
    return int(m.group(1)) if m else None


@functools.cache
def _claimed_rank(scheduler: str) -> int:
    """A rank unique among this node's workers of one scheduler: the first free number,
    claimed by creating a file (``O_EXCL``) that holds this process's id; files of processes
    that are gone are taken over."""
    base = Path(tempfile.gettempdir()) / "clpy-dask-ranks" / re.sub(r"\W+", "_", scheduler)
    base.mkdir(parents=True, exist_ok=True)
    k = 0
    while True:
        path = base / str(k)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            if _stale(path):
                path.unlink(missing_ok=True)
                continue  # try the same number again
            k += 1
            continue
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return k


def _stale(path: Path) -> bool:
    try:
        pid = int(path.read_text())
    except (OSError, ValueError):  # being written right now
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def matching(selector: str) -> list[Device]:
    """Every device ``selector`` matches, in ``clpy.devices()`` order (the same rules as
    ``clpy.use_device``: ``"opencl:<text>"``, ``"opencl:<platform>:<device>"``)."""
    first = RUNTIME.find(selector)
    low = selector.strip().lower()
    if first.is_sim or not low.startswith("opencl"):
        return [first]
    cl_devs = [d for d in RUNTIME.devices() if not d.is_sim]
    if any(d.name == selector.strip() for d in cl_devs):
        return [first]
    if low == "opencl":
        gpus = [d for d in cl_devs if d.info is not None and d.info.device_type == "gpu"]
        return gpus or cl_devs
    parts = [p.strip() for p in low[len("opencl:") :].split(":")]
    return [d for d in cl_devs if _matches(d, parts)] or [first]


def _matches(d: Device, parts: list[str]) -> bool:
    """The substring rule of ``clpy.runtime.devices`` (platform, vendor, version; device name,
    vendor, type)."""
    info = d.info
    if info is None:
        return False
    plat = f"{info.platform} {info.platform_vendor} {info.platform_version}".lower()
    dev = f"{d.name.rsplit(':', 1)[-1]} {info.device_vendor} {info.device_type}".lower()
    if len(parts) == 1:
        return parts[0] in plat or parts[0] in dev or parts[0] in d.name.lower()
    return parts[0] in plat and ":".join(parts[1:]) in dev


def worker_device(selector: str | None = None) -> Device:
    """The device this process runs blocks on, for ``device=selector`` (see the module
    docstring). Resolved once per process and selector."""
    return _resolve(selector, worker_rank(), bool(os.environ.get("CUDA_VISIBLE_DEVICES")))


@functools.lru_cache(maxsize=64)
def _resolve(selector: str | None, rank: int, cuda_pinned: bool) -> Device:
    if selector is None:
        selector = os.environ.get(ENV_VAR, "").strip() or None
    if selector is None:
        gpus = [d for d in RUNTIME.devices() if d.info is not None and d.info.device_type == "gpu"]
        if not gpus:
            return RUNTIME.find("sim")
        return gpus[0] if cuda_pinned else gpus[rank % len(gpus)]
    found = matching(selector)
    return found[0] if cuda_pinned else found[rank % len(found)]


def worker_devices(client: Any, selector: str | None = None) -> dict[str, str]:
    """``{worker address: device name}``: the device each worker of ``client`` resolves for
    ``selector`` (one small task per worker, since ranks are known inside tasks)."""
    workers = list(client.scheduler_info()["workers"])
    futures = {
        w: client.submit(_device_name, selector, workers=[w], allow_other_workers=False, pure=False)
        for w in workers
    }
    return {w: f.result() for w, f in futures.items()}


def _device_name(selector: str | None) -> str:
    return worker_device(selector).name


def selector_of(device: Any) -> str | None:
    """What travels to the workers: a selector string (a clpy ``Device`` by its name)."""
    if device is None or isinstance(device, str):
        return device
    if isinstance(device, Device):
        return device.name
    raise TypeError(
        f"device must be a selector string ('sim', 'opencl:gpu', 'opencl:nvidia:#1') or a "
        f"clpy Device, not {device!r}: workers choose their own device from it"
    )
