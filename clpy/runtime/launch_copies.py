"""One launch's NumPy arguments (and images, and DeviceArray views that are no sub-buffer) on
their way to the device and back (clpy/runtime/clplan.py ``CLPlan.run``): pooled device
buffers, pinned staging or registered host memory (clpy/runtime/transfers.py,
clpy/runtime/registered.py), bound in place where the registration can be the kernel's own
buffer; copies back only for the arrays the kernel writes, only after it succeeded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.abi import DeviceArray
from clpy.abi.aliasing import shared_arrays
from clpy.abi.buffers import HostUpload, ViewUpload
from clpy.abi.images import read_image
from clpy.runtime.registered import Registered

if TYPE_CHECKING:
    from clpy.runtime.clplan import CLPlan


class LaunchCopies:
    """The transfers of one launch of ``plan`` (``wait``: the call waits for the kernel)."""

    __slots__ = ("plan", "wait", "copies", "temps", "pooled", "deferred", "binds")

    def __init__(self, plan: CLPlan, wait: bool) -> None:
        self.plan = plan
        self.wait = wait
        self.copies: list[tuple[Any, Any]] = []  # (host array, device buffer) to copy back
        self.temps: list[int] = []  # argument slots holding buffers made for this launch
        self.pooled: list[tuple[Any, int]] = []  # pool buffers to give back
        # the registered transfers enqueued without a finish (Registered.upload/download
        # sync=False, bind), finished once by the launch
        self.deferred: Registered | None = None
        self.binds: list[Any] = []  # buffers bound in place (Registered.bind)

    def upload(self, cl_args: list[Any], args: tuple[Any, ...], pending: list[Any]) -> None:
        """Every argument checked: the NumPy arrays (``pending``) to the device, their slots
        in ``cl_args`` replaced by device buffers. A failed transfer ends the launch here."""
        plan = self.plan
        cl, queue, pool = plan._cl, plan.queue, plan._pool
        copies, temps, pooled = self.copies, self.temps, self.pooled
        # one array for several parameters: one buffer (clpy/abi/aliasing.py)
        multi = len(pending) > 1 or type(pending[0]) is ViewUpload
        shared = shared_arrays(plan.params, args) if multi else {}
        try:
            for j, x in enumerate(cl_args):
                if isinstance(x, HostUpload) and j in shared:
                    buf = cl_args[shared[j]]
                    cl_args[j] = buf
                    temps.append(j)
                    if x.written and all(b is not buf for _, b in copies):
                        copies.append((x.array, buf))
                elif isinstance(x, HostUpload):  # arrays and images (ImageUpload)
                    host = x.array
                    if pool is not None and type(x) is HostUpload and host.nbytes:
                        plan._repeats.saw(j, host, plan.params[j].name, plan.name)
                        buf = self._array(host)
                    elif pool is not None and type(x) is ViewUpload and host.nbytes:
                        # a DeviceArray view that is no sub-buffer: a pooled copy on the device
                        buf = x.upload_pooled(cl, queue, pool)
                        pooled.append((buf, host.nbytes))
                    else:
                        buf = x.upload(plan.context, cl)
                    cl_args[j] = buf
                    temps.append(j)
                    if x.written and host.nbytes:
                        copies.append((host, buf))
        except BaseException:
            self.end()  # its registrations unbound, its pooled buffers back
            raise

    def _array(self, host: np.ndarray) -> Any:
        """The device buffer of NumPy array ``host`` for this launch, its upload enqueued."""
        plan, wait = self.plan, self.wait
        staging = plan._staging(host)
        if wait and type(staging) is Registered:
            # the array's own registered memory as the kernel's buffer: no device copy either
            # way (Registered.bind)
            bound = staging.bind(host)
            self.deferred = staging
            if bound is not None:
                self.binds.append(bound)
                return bound
        assert plan._pool is not None
        buf = plan._pool.take(host.nbytes)
        self.pooled.append((buf, host.nbytes))
        if wait and type(staging) is Registered:
            # this call waits for the kernel, which the in-order queue runs after the upload:
            # one finish for the launch
            staging.upload(buf, host, sync=False)
        elif staging is not None:
            staging.upload(buf, host)  # at the link's rate, pinned
        else:
            # non-blocking when this call waits anyway; an async launch copies now: the caller
            # may change the array on return
            plan._cl.enqueue_copy(plan.queue, buf, host, is_blocking=not wait)
        return buf

    def download(self) -> None:
        """After the kernel succeeded (a launch that waits): the written arrays back."""
        plan = self.plan
        cl = plan._cl
        for host, buf in self.copies:
            staging = plan._staging(host) if isinstance(buf, cl.Buffer) else None
            if type(staging) is Registered:
                staging.download(host, buf, sync=False)  # finished by ``end``
                self.deferred = staging
            elif staging is not None:
                staging.download(host, buf)
            else:
                copy_back(cl, plan.queue, host, buf)

    def download_events(self, evt: Any) -> list[Any]:
        """For a launch that does not wait: the copies back enqueued after kernel ``evt``."""
        plan = self.plan
        return [
            copy_back(plan._cl, plan.queue, host, buf, wait_for=[evt], is_blocking=False)
            for host, buf in self.copies
        ]

    def end(self) -> None:
        """The launch's end (also a failed one's): deferred registered transfers finished,
        bound buffers released, pooled buffers given back (the queue is in order: a later
        write runs after these copies)."""
        if self.deferred is not None:
            self.deferred.done(self.binds)
        pool = self.plan._pool
        if pool is not None:
            for buf, nbytes in self.pooled:
                pool.give(buf, nbytes)


def copy_back(cl: Any, queue: Any, host: np.ndarray, buf: Any, **kw: Any) -> Any:
    """A written buffer or image (clpy/abi/images.py) back into its NumPy array."""
    if isinstance(buf, cl.Image):
        return read_image(cl, queue, host, buf, **kw)
    if type(host) is DeviceArray:  # a view copied for the launch (clpy/abi/buffers.py)
        return host.copy_from_buffer(cl, queue, buf, **kw)
    return cl.enqueue_copy(queue, host, buf, **kw)
