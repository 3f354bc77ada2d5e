"""Progress of a long simulator launch: a tqdm bar (``tqdm.auto``: a widget in notebooks)
once a launch has run for ``PROGRESS_AFTER_S`` seconds, when tqdm is installed; nothing
otherwise. Short launches never show one."""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

PROGRESS_AFTER_S = 2.0


class Progress:
    """Counts work-groups done; starts a bar the first time a step ends after ``after``
    seconds with work left. ``CLPY_PROGRESS=0`` turns it off."""

    __slots__ = ("total", "done", "after", "start", "bar", "enabled")

    def __init__(self, total: int, after: float | None = None) -> None:
        self.total = total
        self.done = 0
        self.after = PROGRESS_AFTER_S if after is None else after
        self.start = time.monotonic()
        self.bar: Any = None
        self.enabled = os.environ.get("CLPY_PROGRESS", "1") != "0"

    def step(self, groups: int) -> None:
        self.done += groups
        if self.bar is not None:
            self.bar.update(groups)
        elif (
            self.enabled and self.done < self.total and time.monotonic() - self.start >= self.after
        ):
            self.bar = _make_bar(self.total, self.done)
            self.enabled = self.bar is not None

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _make_bar(total: int, done: int) -> Any:
    try:
        with warnings.catch_warnings():  # tqdm.auto warns when ipywidgets is missing
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tqdm(total=total, initial=done, unit="group", desc="clpy sim", leave=False)
