"""What a launch returns with ``wait=False``, and the error a failed launch raises."""

from __future__ import annotations

from typing import Any


class LaunchError(RuntimeError):
    """The OpenCL runtime rejected or failed a launch (after clpy's own checks passed)."""


class LaunchHandle:
    """What ``wait=False`` returns: ``wait()`` blocks until the kernel and its copy-backs
    finished (raising ``LaunchError`` if it failed); ``event`` is the pyopencl event of the
    kernel, ``events`` every event including the copy-backs."""

    __slots__ = ("event", "events", "_keep")

    def __init__(self, event: Any, events: list[Any], keep: Any) -> None:
        self.event = event
        self.events = events
        self._keep = keep

    def wait(self) -> None:
        for e in self.events:
            try:
                e.wait()
            except Exception as err:  # a pyopencl error: the device was lost, the kernel failed
                if type(err).__module__.split(".")[0] != "pyopencl":
                    raise
                self._keep = None
                raise LaunchError(f"launch failed: {err}") from err
        for e in self.events:
            if e.command_execution_status < 0:
                raise LaunchError(f"launch failed with status {e.command_execution_status}")
        self._keep = None

    @property
    def done(self) -> bool:
        import pyopencl as cl  # deferred: `import clpy` does not load pyopencl

        return all(
            e.command_execution_status in (cl.command_execution_status.COMPLETE,)
            for e in self.events
        )

    def __repr__(self) -> str:
        return f"<clpy.LaunchHandle done={self.done}>"


class DoneHandle(LaunchHandle):
    """A handle for a launch that already finished (the simulator, an empty launch)."""

    def __init__(self) -> None:
        super().__init__(None, [], None)

    @property
    def done(self) -> bool:
        return True
