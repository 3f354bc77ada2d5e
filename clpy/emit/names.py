"""Keeping the user's names in emitted C, renaming only what would clash."""

from __future__ import annotations

from clpy.ir.nodes import Var

# C99 keywords, OpenCL C 2.0 keywords and qualifiers (spec §1.1, §1.5 - §1.7), type names
# that are reserved (§1.1.4), and names the generated code itself uses.
RESERVED = frozenset(
    """
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Bool _Complex _Imaginary bool half uchar ushort uint
ulong size_t ptrdiff_t intptr_t uintptr_t true false __global global __local local
__constant constant __private private __generic generic __kernel kernel __read_only
read_only __write_only write_only __read_write read_write image1d_t image1d_array_t
image1d_buffer_t image2d_t image2d_array_t image3d_t image2d_depth_t image2d_array_depth_t
sampler_t event_t queue_t ndrange_t clk_event_t reserve_id_t pipe uniform typeof
__attribute__ complex imaginary quad vec_step main printf NULL
""".split()
)


class Namer:
    """Gives each variable a C name: the user's name, suffixed only when it would clash."""

    def __init__(self, taken: frozenset[str] = frozenset()) -> None:
        self._names: dict[Var, str] = {}
        self._used: set[str] = set()
        self._taken = taken

    def fix(self, var: Var, name: str) -> None:
        """Give ``var`` the C name ``name`` (a program-scope variable's, chosen per program)."""
        self._names[var] = name
        self._used.add(name)

    def __call__(self, var: Var) -> str:
        name = self._names.get(var)
        if name is None:
            name = var.name
            base = name
            n = 0
            while (
                name in RESERVED
                or name in self._taken
                or name in self._used
                or name.startswith("clpy_")
                and not base.startswith("clpy_")
            ):
                n += 1
                name = f"{base}_" if n == 1 else f"{base}_{n}"
            self._names[var] = name
            self._used.add(name)
        return name
