"""Pinned pages for the few bytes of a registered array that no registration covers (issue 18;
clpy/runtime/registered.py ``Registered._ends``): the bytes on a page the array shares with a
neighbour whose registration has gone. A copy from or into pageable memory made NVIDIA's
driver wait for the queue, 0.2 ms per end (scripts/gpu_launch_profile.py, session 8); through
a pinned page it is one small DMA. A download's bytes reach the array when the queue has been
finished (``land``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

PAGE = 1 << 12


class EndSlots:
    """``count`` pinned pages of one in-order queue, handed out one per transfer until the
    queue is finished."""

    def __init__(self, cl: Any, queue: Any, count: int) -> None:
        self._cl = cl
        self.queue = queue
        self.count = count
        # the mapped memory (None: not made yet, False: none to be had)
        self.pinned: np.ndarray | bool | None = None
        self.used = 0  # slots in flight
        self.landing: list[tuple[np.ndarray, np.ndarray]] = []  # downloaded: (array, slot)

    def take(self, n: int, finish: Callable[[], None]) -> np.ndarray | None:
        """A free slot of ``n`` (at most a page) bytes, or None without pinned memory; when
        every slot is in flight, ``finish`` (the queue's, which lands them) first."""
        if self.pinned is None:
            cl = self._cl
            try:
                buf = cl.Buffer(
                    self.queue.context,
                    cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
                    self.count * PAGE,
                )
                self.pinned, _ = cl.enqueue_map_buffer(
                    self.queue,
                    buf,
                    cl.map_flags.READ | cl.map_flags.WRITE,
                    0,
                    (self.count * PAGE,),
                    np.uint8,
                )  # mapped for good (the array keeps the buffer)
            except cl.Error:
                self.pinned = False
        if self.pinned is False:
            return None
        if self.used == self.count:
            finish()
        at = self.used * PAGE
        self.used += 1
        return self.pinned[at : at + n]  # type: ignore[index]

    def transfer(
        self, slot: np.ndarray | None, dev: Any, part: np.ndarray, at: int, upload: bool
    ) -> None:
        """Enqueue the copy of ``part`` to device buffer ``dev`` at byte ``at`` or from it,
        through ``slot`` (``take``), or directly where there is no pinned memory."""
        cl, q = self._cl, self.queue
        if slot is None:
            if upload:
                cl.enqueue_copy(q, dev, part, dst_offset=at, is_blocking=False)
            else:
                cl.enqueue_copy(q, part, dev, src_offset=at, is_blocking=False)
        elif upload:
            slot[:] = part
            cl.enqueue_copy(q, dev, slot, dst_offset=at, is_blocking=False)
        else:
            cl.enqueue_copy(q, slot, dev, src_offset=at, is_blocking=False)
            self.landing.append((part, slot))

    def land(self) -> None:
        """After the queue has been finished: the downloaded bytes into their arrays; every
        slot is free again."""
        for part, slot in self.landing:
            part[:] = slot
        self.landing.clear()
        self.used = 0
