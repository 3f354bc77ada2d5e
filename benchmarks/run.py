"""Run every clpy benchmark in turn (``make bench``); each writes its own results file under
benchmarks/results/ and prints its table. Usage: ``python -m benchmarks.run [--quick]``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
# (script, normal arguments, --quick arguments)
SUITE = [
    ("compile_time.py", [], ["--repeat", "20"]),
    ("launch_overhead.py", [], ["--rounds", "11"]),
    ("sim_bench.py", [], ["--quick"]),
    ("collectives_bench.py", [], ["--repeat", "3"]),
    ("images_bench.py", [], ["--n", "65536", "--repeat", "2"]),
    ("fp_contract.py", ["--quick"], ["--nbody", "1024", "--matmul", "256", "--repeat", "1"]),
    ("device_arrays.py", ["--n", "1048576", "--steps", "20", "--json",
                          str(HERE / "results" / "device_arrays.json")],
     ["--n", "65536", "--steps", "10", "--repeat", "1"]),
    ("algorithms.py", ["--device", "opencl", "--sizes", "16,20", "--repeat", "5"],
     ["--device", "opencl", "--sizes", "14", "--repeat", "3"]),
]


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    failed = []
    for script, args, quick_args in SUITE:
        print(f"\n=== {script} {' '.join(quick_args if quick else args)}", flush=True)
        rc = subprocess.call([sys.executable, str(HERE / script), *(quick_args if quick
                                                                     else args)])
        if rc:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
