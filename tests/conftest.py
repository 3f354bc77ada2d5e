"""Shared fixtures. OpenCL tests use PoCL (the CPU driver installed by `make test`); with
CI=true a missing OpenCL device is a failure, never a skip."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


def _find_cl_device() -> object | None:
    try:
        import pyopencl as cl
    except ImportError:
        return None
    try:
        platforms = cl.get_platforms()
    except Exception:
        return None
    prefer = os.environ.get("CLPY_TEST_PLATFORM", "portable computing language").lower()
    devices = [d for p in platforms for d in p.get_devices()]
    for d in devices:
        if prefer in d.platform.name.lower():
            return d
    return devices[0] if devices else None


@pytest.fixture(scope="session")
def cl_device() -> object:
    """The OpenCL device tests run on (PoCL by default)."""
    d = _find_cl_device()
    if d is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                "CI=true but no OpenCL device was found (PoCL should come with "
                "`pip install -e .[test]`)"
            )
        pytest.skip("no OpenCL device")
    return d


@pytest.fixture(scope="module", params=["sim", "opencl"])
def dev(request: pytest.FixtureRequest) -> object:
    """The simulator, then the OpenCL test device (``cl_device``), as clpy devices: for tests
    that run the same kernel on both. A test module may define its own ``dev``."""
    from clpy import get_device

    if request.param == "sim":
        return get_device("sim")
    return get_device(request.getfixturevalue("cl_device"))


@pytest.fixture(scope="session")
def cl_context(cl_device: object) -> object:
    import pyopencl as cl

    return cl.Context([cl_device])


@pytest.fixture(scope="session")
def cl_queue(cl_context: object) -> object:
    import pyopencl as cl

    return cl.CommandQueue(cl_context)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.cl from the current emitter",
    )


@pytest.fixture
def numpy_engine() -> Iterator[None]:
    """The simulator's NumPy engine for the test (``engine="numpy"``): tests of its own
    machinery (batches, trip vectorization, generated statements, the thread tuner), whose
    kernels the native engine would otherwise run with checks off."""
    import clpy

    with clpy.sim.config(engine="numpy"):
        yield
