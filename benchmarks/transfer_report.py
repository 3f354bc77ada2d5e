"""The tables and notes benchmarks/transfers.py prints: one table per measured part, the
"paths" table, and what bounds a NumPy-argument launch at each size."""

from __future__ import annotations

from typing import Any


def paths_note(nbytes: int, p: dict[str, Any]) -> str:
    b = p["bound"]
    lines = [
        f"{nbytes >> 20} MiB paths (GB/s of one array; launch: touch with NumPy x, y = x in, "
        f"y in, y out + kernel {p['kernel_resident_ms']:.2f} ms, as array bytes per second). "
        f"Bound: best h2d {b['best_h2d_GBps']:.1f}, best d2h {b['best_d2h_GBps']:.1f} GB/s "
        f"over these paths -> launch >= {b['launch_bound_ms']:.2f} ms"
    ]
    for k, v in p.items():
        if k in ("bound", "kernel_resident_ms") or not isinstance(v, dict):
            continue
        extra = (
            f" launch {v['launch_GBps']:.1f} ({v['launch_vs_bound']:.2f} of bound)"
            if "launch_GBps" in v
            else ""
        )
        nan = float("nan")
        lines.append(
            f"  {k:26s} h2d {v.get('h2d_GBps', nan):6.1f}  d2h {v.get('d2h_GBps', nan):6.1f}{extra}"
        )
    return "\n".join(lines)


def print_table(res: dict[str, Any]) -> None:
    rows = res["rows"]
    nested = {k for r in rows for k, v in r.items() if isinstance(v, dict)}
    cols = [k for k in rows[0] if k != "MiB" and k not in nested]
    print(
        f"# transfers on {res['device']} (driver {res['driver']}, {res['cpus']} CPUs, base "
        f"address alignment {res['mem_base_addr_align_bytes']} bytes); GB/s unless noted"
    )
    print("| MiB | " + " | ".join(cols) + " |")
    print("|" + "---|" * (len(cols) + 1))
    for r in rows:
        print(f"| {r['MiB']} | " + " | ".join(f"{r.get(c, float('nan')):.2f}" for c in cols) + " |")
    for key in sorted(nested - {"paths"}):
        print(f"\n## {key} (GB/s)")
        names = list(rows[0].get(key, {}))
        print("| MiB | " + " | ".join(names) + " |")
        print("|" + "---|" * (len(names) + 1))
        for r in rows:
            d = r.get(key, {})
            vals = " | ".join(f"{d.get(k, float('nan')):.2f}" for k in names)
            print(f"| {r['MiB']} | {vals} |")


def print_paths(rows: list[dict[str, Any]]) -> None:
    """One row per size and path: h2d, d2h, launch GB/s and the launch against the bound."""
    if not any("paths" in r for r in rows):
        return
    print(
        "\n## paths: one array each way alone, and the touch launch (x in, y in, y out + "
        "kernel) as array GB/s; bound = best h2d and d2h of all paths, one after the other"
    )
    print("| MiB | path | h2d | d2h | launch | launch / bound |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        p = r.get("paths", {})
        for name, v in p.items():
            if not isinstance(v, dict) or name == "bound":
                continue
            nan = float("nan")
            print(
                f"| {r['MiB']} | {name} | {v.get('h2d_GBps', nan):.2f} | "
                f"{v.get('d2h_GBps', nan):.2f} | {v.get('launch_GBps', nan):.2f} | "
                f"{v.get('launch_vs_bound', nan):.2f} |"
            )
        b = p.get("bound")
        if b:
            print(
                f"| {r['MiB']} | **bound** | {b['best_h2d_GBps']:.2f} | {b['best_d2h_GBps']:.2f}"
                f" | {b['launch_bound_ms']:.2f} ms | |"
            )


def bound_note(r: dict[str, Any]) -> str:
    """What bounds a NumPy-argument launch at this size: the link or the host's copy."""
    hc = r.get("host_copy")
    if not hc or "h2d_pinned" not in r:
        return f"{r['MiB']} MiB: (run the link and host parts for the bound)"
    to_pin = max(v for k, v in hc.items() if k.startswith("pageable_to_pinned"))
    from_pin = max(v for k, v in hc.items() if k.startswith("pinned_to_pageable"))
    up = min(r["h2d_pinned"], to_pin)
    down = min(r["d2h_pinned"], from_pin)
    # x in, y in (clpy uploads written arrays too), kernel, y out one after the other
    kernel_s = r.get("kernel_resident_ms", 0.0) / 1e3
    size = r["MiB"] * (1 << 20)
    bound = 3 * size / (2 * size / up / 1e9 + size / down / 1e9 + kernel_s) / 1e9
    pinned = 3 * size / (2 * size / r["h2d_pinned"] / 1e9 + size / r["d2h_pinned"] / 1e9 + kernel_s)
    got = r.get("clpy_numpy_launch", float("nan"))
    got_pinned = r.get("clpy_pinned_launch", float("nan"))
    return (
        f"{r['MiB']} MiB: staged upload <= min(link {r['h2d_pinned']:.1f}, host copy into "
        f"pinned {to_pin:.1f}) = {up:.1f} GB/s; staged download <= min(link "
        f"{r['d2h_pinned']:.1f}, host copy out of pinned {from_pin:.1f}) = {down:.1f} GB/s; "
        f"x and y in, kernel ({kernel_s * 1e3:.2f} ms), y out, one after the other, <= {bound:.1f} "
        f"GB/s; clpy NumPy launch {got:.1f} GB/s ({got / bound:.2f} of that bound). "
        f"Pinned arrays: <= {pinned / 1e9:.1f} GB/s, clpy {got_pinned:.1f} "
        f"({got_pinned / (pinned / 1e9):.2f})"
    )
