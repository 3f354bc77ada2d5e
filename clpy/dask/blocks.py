"""``clpy.dask.map_blocks``: a clpy kernel launched once per chunk of Dask arrays.

The client binds the arguments to the kernel's parameters, specializes the kernel (compile
errors surface here, at the user's line) and reads its parameter ABI: which pointer
parameters the kernel writes (``Param.written``) and their element types. Output parameters
are allocated per chunk from that; every other argument is passed as it is. The graph is one
``da.map_blocks`` task per chunk (several outputs: one task returning a tuple, then one
``getitem`` layer per output, as ``da.apply_gufunc`` does); halos come from
``da.overlap.overlap`` and are trimmed with ``da.overlap.trim_internal``, the two halves of
``da.map_overlap``. What runs on the worker is ``BlockCall.__call__``.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.abi import Param
from clpy.dask.devices import selector_of, worker_device
from clpy.kernel import Kernel
from clpy.runtime.launch import arg_type
from clpy.types.core import PointerType, ScalarType
from clpy.types.structs import StructType


class BlockValue:
    """``BLOCK_SIZE``, ``BLOCK_SHAPE``, ``BLOCK_OFFSET`` (and ``BLOCK_SHAPE[axis]`` ...) as
    argument values: what the kernel sees of its chunk, halo included. Shapes and offsets of
    1-D chunks are ints, of n-D chunks tuples (pass them to a vector parameter, ``int2``) unless
    one axis is picked. An offset is the global index of the chunk's first element (with
    ``depth=`` and a padding ``boundary``, ``-depth`` for the first chunk)."""

    def __init__(self, what: str, axis: int | None = None) -> None:
        self.what = what
        self.axis = axis

    def __getitem__(self, axis: int) -> BlockValue:
        if self.what == "size" or self.axis is not None:
            raise TypeError(f"{self!r} cannot be indexed")
        return BlockValue(self.what, int(axis))

    def value(self, shape: tuple[int, ...], offset: tuple[int, ...]) -> Any:
        if self.what == "size":
            return math.prod(shape)
        vals = shape if self.what == "shape" else offset
        if self.axis is not None:
            return vals[self.axis]
        return vals[0] if len(vals) == 1 else tuple(vals)

    def sample(self, ndim: int) -> Any:
        """A stand-in value of the right kind for type inference on the client."""
        return self.value((1,) * ndim, (0,) * ndim)

    def __reduce__(self) -> Any:
        return (BlockValue, (self.what, self.axis))

    def __repr__(self) -> str:
        name = f"clpy.dask.BLOCK_{self.what.upper()}"
        return name if self.axis is None else f"{name}[{self.axis}]"


BLOCK_SIZE = BlockValue("size")
BLOCK_SHAPE = BlockValue("shape")
BLOCK_OFFSET = BlockValue("offset")


@dataclass(frozen=True)
class BlockCall:
    """One kernel launch per chunk; pickled into the graph (the kernel by reference or by
    source, clpy/pickling.py). ``roles[i]`` says where parameter ``i``'s value comes from:
    ``("chunk", k)`` the k-th Dask input's chunk (copied first if the kernel writes it),
    ``("value", v)`` a value passed whole, ``("block", BlockValue)``, ``("new", dtype)`` a
    zero-filled array: an output, of the output chunk's shape, or scratch (a written
    parameter given no argument and not returned), of the chunk's shape."""

    kernel: Kernel
    roles: tuple[tuple[str, Any], ...]
    outputs: tuple[int, ...]  # parameter indices returned, in `out=` order
    out_chunks: tuple[tuple[tuple[int, ...], ...], ...]  # per output: dask chunks
    offsets: tuple[tuple[int, ...], ...]  # per axis, per block: first global index
    global_size: Any
    local_size: Any
    device: str | None
    written: frozenset[int]

    def __call__(self, *chunks: Any, block_id: tuple[int, ...] = ()) -> Any:
        shape = tuple(chunks[0].shape)
        offset = tuple(self.offsets[ax][b] for ax, b in enumerate(block_id))
        values: list[Any] = []
        for i, (role, what) in enumerate(self.roles):
            if role == "chunk":
                c = chunks[what]
                values.append(np.array(c) if i in self.written else np.ascontiguousarray(c))
            elif role == "value":  # each launch writes its own copy of a written array
                written = i in self.written and isinstance(what, np.ndarray)
                values.append(np.array(what) if written else what)
            elif role == "block":
                values.append(what.value(shape, offset))
            else:  # an output, or a written parameter given no argument (scratch)
                k = self.outputs.index(i) if i in self.outputs else None
                oshape = (
                    shape
                    if k is None
                    else tuple(ch[b] for ch, b in zip(self.out_chunks[k], block_id))
                )
                values.append(np.zeros(oshape, what))
        gsize = _size(self.global_size, shape)
        if math.prod(gsize) > 0:
            lsize = _size(self.local_size, shape) if self.local_size is not None else None
            self.kernel[gsize, lsize](*values, device=worker_device(self.device))
        outs = tuple(values[i] for i in self.outputs)
        return outs[0] if len(outs) == 1 else outs


def _size(spec: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    if spec is None:
        return shape
    if callable(spec):
        spec = spec(shape)
    return (int(spec),) if isinstance(spec, (int, np.integer)) else tuple(int(s) for s in spec)


def map_blocks(
    kernel: Kernel,
    *args: Any,
    out: str | tuple[str, ...] | list[str] | None = None,
    global_size: Any = None,
    local_size: Any = None,
    depth: Any = None,
    boundary: Any = "none",
    device: Any = None,
    dtype: Any = None,
    chunks: Any = None,
    like: Any = None,
    **named_args: Any,
) -> Any:
    """Launch ``kernel`` once per chunk of its Dask-array arguments; a Dask array per output
    parameter (a tuple when ``out`` names several).

    >>> y = clpy.dask.map_blocks(saxpy, 2.0, x, None, out="y")      # x: a dask array
    >>> u1 = clpy.dask.map_blocks(step, u, out="v", depth=1, boundary=0.0)

    ``args``/``named_args`` are the kernel's arguments by position and by name: Dask arrays
    (same shape; chunked like the first), anything else passed whole to every launch, and
    ``BLOCK_SIZE``/``BLOCK_SHAPE``/``BLOCK_OFFSET``. ``out``: the output parameters (default:
    the written pointer parameters given no argument, or given ``None``); one with no
    argument is allocated per chunk, zero-filled, with the chunk's shape and the element type
    of its annotation (so is a written pointer given no argument that is not an output:
    scratch) (``dtype=`` overrides: one dtype, or a dict by name; ``chunks=``: other
    output chunks, as ``da.map_blocks`` takes them); one given a Dask array starts as a copy
    of its chunk (an in-place kernel). ``global_size`` (default: the chunk's shape, halo
    included, one dimension per axis) and ``local_size`` (default: the device's choice) are
    sizes or functions of the chunk's shape. ``depth``/``boundary``: as ``da.map_overlap``;
    the kernel sees each chunk with its halo, which is trimmed from the outputs.
    ``device``: a selector each worker resolves for itself (clpy/dask/devices.py).
    """
    import dask.array as da  # optional dependency: pip install clpy-kernels[dask]

    if not isinstance(kernel, Kernel):
        raise TypeError(f"map_blocks() takes a @clpy.kernel, not {kernel!r}")
    kname = kernel.__name__
    names = kernel.param_names
    bound = _bind(kname, names, args, named_args)
    arrays = [(n, v) for n, v in bound.items() if isinstance(v, da.Array)]
    if like is not None:
        if arrays:
            raise TypeError(f"{kname}: like= is for kernels given no Dask array argument")
        arrays = [("", da.asarray(like))]  # chunks only: no parameter receives it
    if not arrays:
        raise TypeError(
            f"{kname}: map_blocks needs a Dask array argument (the chunks to map over), or "
            "like=<dask array> whose chunks the outputs take"
        )
    first_name, first = arrays[0]
    for n, a in arrays[1:]:
        if a.shape != first.shape:
            raise ValueError(
                f"{kname}(): parameter {n!r} has shape {a.shape}, parameter "
                f"{first_name!r} {first.shape}: Dask array arguments must have one shape"
            )
    arrays = [(n, a if a.chunks == first.chunks else a.rechunk(first.chunks)) for n, a in arrays]
    spec = kernel.specialize(**_param_types(kernel, bound, dtype, first.ndim))
    abi = {p.name: p for p in spec.abi}
    outs = _outputs(kname, names, bound, abi, out)

    ndim = first.ndim
    depth_d = boundary_d = None
    if depth is not None:
        if chunks is not None:
            raise ValueError(f"{kname}: chunks= and depth= cannot be combined")
        depth_d = da.overlap.coerce_depth(ndim, depth)
        boundary_d = da.overlap.coerce_boundary(ndim, boundary)
        arrays = [(n, da.overlap.overlap(a, depth_d, boundary_d)) for n, a in arrays]
    halo_chunks = arrays[0][1].chunks
    offsets = _offsets(halo_chunks, depth_d, boundary_d)

    roles: list[tuple[str, Any]] = []
    position = {n: k for k, (n, _) in enumerate(arrays)}
    out_dtypes: dict[str, np.dtype[Any]] = {}
    for name in names:
        v = bound.get(name)
        if name in position:
            roles.append(("chunk", position[name]))
            out_dtypes[name] = np.dtype(bound[name].dtype)
        elif isinstance(v, BlockValue):
            roles.append(("block", v))
        elif name not in bound:  # an output or scratch (_outputs checked it is written)
            dt = _out_dtype(kname, name, abi.get(name), dtype)
            out_dtypes[name] = dt
            roles.append(("new", dt))
        else:
            roles.append(("value", v))
    out_chunks = tuple(_out_chunks(kname, n, chunks, halo_chunks) for n in outs)
    call = BlockCall(
        kernel,
        tuple(roles),
        tuple(names.index(n) for n in outs),
        out_chunks,
        offsets,
        global_size,
        local_size,
        selector_of(device),
        frozenset(i for i, n in enumerate(names) if n in abi and abi[n].written),
    )
    token = f"clpy-{kname}"
    inputs = [a for _, a in arrays]
    if len(outs) == 1:
        dt = out_dtypes[outs[0]]
        results = [
            da.map_blocks(
                call,
                *inputs,
                token=token,
                dtype=dt,
                chunks=out_chunks[0],
                meta=np.empty((0,) * ndim, dt),
            )
        ]
    else:
        tmp = da.map_blocks(
            call,
            *inputs,
            token=token,
            dtype=object,
            chunks=halo_chunks,
            meta=np.empty((0,) * ndim, object),
        )
        results = [
            tmp.map_blocks(
                operator.getitem,
                k,
                token=f"{token}-{n}",
                dtype=out_dtypes[n],
                chunks=out_chunks[k],
                meta=np.empty((0,) * ndim, out_dtypes[n]),
            )
            for k, n in enumerate(outs)
        ]
    if depth_d is not None:
        results = [da.overlap.trim_internal(r, depth_d, boundary_d) for r in results]
    single = len(outs) == 1 and not isinstance(out, (tuple, list))
    return results[0] if single else tuple(results)


def _bind(kname: str, names: list[str], args: tuple[Any, ...], named: dict[str, Any]) -> dict:
    if len(args) > len(names):
        raise TypeError(f"{kname}() takes {len(names)} argument(s), got {len(args)}")
    bound = dict(zip(names, args))
    for k, v in named.items():
        if k not in names:
            raise TypeError(f"{kname}(): no parameter named {k!r}; parameters are {names}")
        if k in bound:
            raise TypeError(f"{kname}(): parameter {k!r} given twice")
        bound[k] = v
    return {k: v for k, v in bound.items() if v is not None}


def _param_types(kernel: Kernel, bound: dict[str, Any], dtype: Any, ndim: int) -> dict:
    """Types of the unannotated parameters, from the arguments (Dask arrays by dtype)."""
    import dask.array as da

    anns = kernel.annotations()
    types: dict[str, Any] = {}
    for name in kernel.param_names:
        if name in anns:
            continue
        v = bound.get(name)
        if isinstance(v, da.Array):
            types[name] = arg_type(name, np.empty(0, v.dtype))
        elif isinstance(v, BlockValue):
            types[name] = arg_type(name, v.sample(ndim))
        elif v is not None:
            types[name] = arg_type(name, v)
        else:
            dt = dtype.get(name) if isinstance(dtype, dict) else dtype
            if dt is None:
                raise TypeError(
                    f"{kernel.__name__}(): output parameter {name!r} has no annotation: "
                    f"annotate it (Global[float32]) or pass dtype=..."
                )
            types[name] = arg_type(name, np.empty(0, dt))
    return types


def _outputs(
    kname: str, names: list[str], bound: dict[str, Any], abi: dict[str, Param], out: Any
) -> tuple[str, ...]:
    if out is None:
        outs = tuple(n for n in names if n not in bound and n in abi and abi[n].written)
        if not outs:
            raise ValueError(f"{kname}: no output: name the output parameter(s) with out=")
    else:
        outs = (out,) if isinstance(out, str) else tuple(out)
    for n in outs:
        if n in bound and not _is_dask(bound[n]):
            raise ValueError(
                f"{kname}(): out={n!r} is given a {type(bound[n]).__name__}: an output is "
                "allocated per chunk (give no argument) or starts from a Dask array's chunk"
            )
        p = abi.get(n)
        if p is None or not isinstance(p.type, PointerType):
            raise ValueError(f"{kname}(): out={n!r} is not a pointer parameter of the kernel")
        if not p.written:
            raise ValueError(f"{kname}(): out={n!r}: the kernel never writes parameter {n!r}")
    missing = [
        n for n in names if n not in bound and n not in outs and not (n in abi and abi[n].written)
    ]
    if missing:
        raise TypeError(
            f"{kname}(): parameter {missing[0]!r} has no argument, and is not an output "
            "(out=) nor a pointer the kernel writes (allocated per chunk as scratch)"
        )
    return outs


def _is_dask(value: Any) -> bool:
    import dask.array as da

    return isinstance(value, da.Array)


def _out_dtype(kname: str, name: str, p: Param | None, dtype: Any) -> np.dtype[Any]:
    given = dtype.get(name) if isinstance(dtype, dict) else dtype
    if given is not None:
        return np.dtype(given)
    assert p is not None and isinstance(p.type, PointerType)
    elem = p.type.elem
    if isinstance(elem, (ScalarType, StructType)):
        return np.dtype(elem.dtype)
    raise TypeError(f"{kname}(): output parameter {name!r} of {elem}: give dtype= and chunks=")


def _out_chunks(kname: str, name: str, chunks: Any, halo: tuple[tuple[int, ...], ...]) -> Any:
    given = chunks.get(name) if isinstance(chunks, dict) else chunks
    if given is None:
        return halo
    if all(isinstance(c, (int, np.integer)) for c in given):  # one shape for every chunk
        given = tuple((int(c),) * len(h) for c, h in zip(given, halo))
    given = tuple(tuple(int(s) for s in c) for c in given)
    if len(given) != len(halo) or any(len(c) != len(h) for c, h in zip(given, halo)):
        raise ValueError(
            f"{kname}(): chunks for output {name!r} must have one size per input chunk "
            f"on each of {len(halo)} axes"
        )
    return given


def _offsets(
    halo_chunks: tuple[tuple[int, ...], ...], depth: dict | None, boundary: dict | None
) -> tuple[tuple[int, ...], ...]:
    """Per axis and block, the global index of the block's first element (halo included)."""
    out = []
    for ax, sizes in enumerate(halo_chunks):
        d = depth.get(ax, 0) if depth else 0
        lo, hi = (d, d) if isinstance(d, (int, np.integer)) else (d[0], d[1])  # asymmetric
        pad = boundary is not None and boundary.get(ax, "none") != "none"
        starts, pos = [], 0
        for b, size in enumerate(sizes):
            left = lo if (b > 0 or pad) else 0
            right = hi if (b < len(sizes) - 1 or pad) else 0
            starts.append(pos - left)
            pos += size - left - right
        out.append(tuple(starts))
    return tuple(out)
