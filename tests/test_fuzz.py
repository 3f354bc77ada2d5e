"""The differential fuzzer (``python -m clpy.fuzz``, clpy/fuzz/): its generator is
deterministic and makes well-defined kernels (the simulator runs each with every checker on
and reports nothing), its shrinker reduces a planted miscompilation to a small kernel, its
command line counts and exits as documented, and a fixed-seed run of sim vs PoCL agrees."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from clpy.fuzz import features as F
from clpy.fuzz.campaign import check, evaluate
from clpy.fuzz.cli import main
from clpy.fuzz.generator import generate
from clpy.fuzz.runner import load, make_inputs, run_on

# Kernels of the fixed-seed sim vs PoCL run (README "Testing and trust"): about 0.7 s of CPU
# each (PoCL's compiler dominates), so about 2.5 minutes on an idle 2-core machine.
CI_COUNT = int(os.environ.get("CLPY_FUZZ_CI_COUNT", "200"))


def test_generator_is_deterministic_per_seed():
    for seed in (0, 1, 17, 12345):
        assert generate(seed).render() == generate(seed).render()
    assert len({generate(s).render() for s in range(8)}) == 8


def test_features_select_constructs():
    only_int = F.parse("int")
    texts = [generate(s, only_int).render() for s in range(20)]
    assert not any("float32(" in t.split("@clpy.kernel")[1] for t in texts)
    assert not any("work_group" in t or "V." in t.split("@clpy.kernel")[1] for t in texts)
    every = "\n".join(generate(s).render() for s in range(60))
    for construct in (
        "work_group_",
        "sub_group_",
        "clpy.barrier()",
        "atomic_",
        "print(",
        "@clpy.func",
        "@clpy.struct",
        "@clpy.reduction",
        "clpy.vload",
        "_sat_rt",
        "while ",
        "for ",
        "if ",
        ".s",
    ):
        assert construct in every, construct
    with pytest.raises(ValueError, match="unknown feature"):
        F.parse("int,bogus")


@pytest.mark.parametrize("chunk", range(4))
def test_generated_kernels_run_clean_on_the_checking_simulator(chunk):
    """Well-defined by construction: no out-of-bounds access, race, divergent barrier,
    uninitialised local read, division by zero or spin loop in any generated kernel."""
    with tempfile.TemporaryDirectory() as d:
        for seed in range(10 * chunk, 10 * chunk + 10):
            loaded = load(generate(seed), Path(d))
            out = run_on(loaded, "sim", make_inputs(loaded, seed), {"checks": True})
            assert out.error is None, f"seed {seed}:\n{out.error}\n{loaded.text}"


def test_shrinker_reduces_a_planted_miscompilation(tmp_path):
    """A fake device (the simulator with `^` compiled as `|`) disagrees; the reproducer is
    written and the reduced kernel is a few lines that still use `^`."""
    feats = F.parse("int,control")
    devices = ["sim", "sim:mutant-xor"]
    seed = next(
        s
        for s in range(100)
        if " ^ " in generate(s, feats).render() and check(s, devices, feats).status == "mismatch"
    )
    res = check(seed, devices, feats, str(tmp_path), shrink_budget_s=60)
    assert res.status == "mismatch", res
    folder = tmp_path / f"seed{seed}"
    for name in (
        "README",
        "kernel.py",
        "kernel_inputs.npz",
        "kernel_outputs_sim.npz",
        "kernel_sim.cl",
        "reduced.py",
    ):
        assert (folder / name).exists(), name
    reduced = (folder / "reduced.py").read_text()
    body = reduced.split("@clpy.kernel")[1].split('if __name__ == "__main__"')[0]
    original = (folder / "kernel.py").read_text().split("@clpy.kernel")[1]
    assert " ^ " in body
    assert len(body.splitlines()) < min(14, len(original.splitlines()))
    # the reduced kernel still fails, and only on the mutant
    status, _, *_ = evaluate(generate(seed, feats), ["sim", "sim"], seed, tmp_path)
    assert status == "ok"


def test_cli_final_line_and_exit_status(capsys):
    assert main(["--count", "3", "--seed", "5", "--devices", "sim", "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "3 kernels, 0 mismatches, 0 errors"
    code = main(
        [
            "--count",
            "6",
            "--seed",
            "0",
            "--devices",
            "sim,sim:mutant-sub",
            "--quiet",
            "--no-shrink",
            "--features",
            "int",
        ]
    )
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 1 and last.startswith("6 kernels, ") and not last.startswith("6 kernels, 0 m")
    # usage errors: exit status 2 and a message naming the problem
    assert main(["--count", "2", "--devices", "sim,opencl:no-such-device", "--quiet"]) == 2
    assert "no-such-device" in capsys.readouterr().err
    assert main(["--count", "1", "--features", "int,bogus", "--quiet"]) == 2
    assert "bogus" in capsys.readouterr().err


def test_fixed_seed_run_sim_vs_pocl(cl_device, tmp_path, capsys):
    """The CI run: CI_COUNT kernels on the simulator and PoCL, bit for bit."""
    from clpy.fuzz.cli import main as fuzz

    code = fuzz(
        [
            "--count",
            str(CI_COUNT),
            "--seed",
            "0",
            "--devices",
            "sim,opencl:pocl",
            "--out",
            str(tmp_path),
            "--quiet",
            "--shrink-seconds",
            "60",
        ]
    )
    out = capsys.readouterr()
    assert out.out.strip().splitlines()[-1] == f"{CI_COUNT} kernels, 0 mismatches, 0 errors", (
        out.err
    )
    assert code == 0


def test_generated_atomics_are_order_independent():
    """The simulator with its atomics in a shuffled order computes the same outputs (tickets
    as a permutation): the generated atomics really are order-independent."""
    from clpy.fuzz.compare import differences

    feats = F.parse("int,control,atomic")
    seen = reordered = 0
    with tempfile.TemporaryDirectory() as d:
        for seed in range(40):
            prog = generate(seed, feats)
            if "atomic_" not in prog.render():
                continue
            seen += 1
            loaded = load(prog, Path(d))
            inputs = make_inputs(loaded, seed)
            a = run_on(loaded, "sim", inputs, {"checks": True})
            b = run_on(
                loaded, "sim", inputs, {"checks": True, "atomic_order": "shuffled", "seed": seed}
            )
            assert a.error is None and b.error is None, (a.error, b.error)
            assert differences(a, b) == [], loaded.text
            assert a.outputs is not None and b.outputs is not None
            if "tickets" in a.outputs:
                reordered += not (a.outputs["tickets"] == b.outputs["tickets"]).all()
    assert seen >= 10 and reordered >= 3  # the shuffle did reorder the tickets


def test_printed_nan_sign_is_not_a_mismatch():
    """C99 §7.19.6.1 / OpenCL C §6.15.14 leave the sign a NaN prints with to the
    implementation (NVIDIA: "-nan", the simulator and PoCL: "nan"): only that is equal."""
    import numpy as np

    from clpy.fuzz.compare import differences, printed_line
    from clpy.fuzz.runner import Outcome

    def outcome(device: str, prints: list[str]) -> Outcome:
        return Outcome(device, outputs={"o": np.zeros(1, np.int32)}, prints=prints)

    sim = outcome("sim", ["p1 0 7 nan", "p2 1 nan,-1.5,NAN", "p3 2 -inf"])
    nv = outcome("nv", ["p2 1 -nan,-1.5,-NAN", "p1 0 7 -nan", "p3 2 -inf"])
    assert differences(sim, nv) == []
    for a, b in [
        ("p3 2 -inf", "p3 2 inf"),  # the sign of an infinity is pinned
        ("p1 0 -1.5", "p1 0 1.5"),
        ("p1 0 nan", "p1 0 0"),
        ("p1 0 nan", "p1 0 -nana"),
        ("p1 0 nan", "p1 0 --nan"),
    ]:
        assert differences(outcome("sim", [a]), outcome("nv", [b])), (a, b)
    assert printed_line("x -nan -nan(1) -nanx") == "x nan nan(1) -nanx"


def test_generation_leaves_out_what_a_target_cannot_emit(tmp_path):
    """A target with real sub-groups (like PoCL on an AVX-512 host) cannot take sub-group
    collectives with * & | ^ && || (clpy lowers those only where one sub-group spans the
    work-group): the probe finds exactly those, and programs generated avoiding them emit for
    that target, while some generated without the limits do not."""
    from dataclasses import replace

    from clpy.emit.targets import target_of
    from clpy.errors import FeatureError
    from clpy.fuzz.limits import COLLECTIVE_OPS, key, unsupported

    fake = replace(target_of("opencl-c-3.0+cl_khr_subgroups"), name="fake-real-sub-groups")
    avoid = unsupported(fake)
    modes = ("reduce", "scan_inclusive", "scan_exclusive")
    assert avoid == {
        key("sub_group", m, op) for m in modes for op in COLLECTIVE_OPS if op not in "+-minmax"
    }
    assert unsupported(target_of("opencl-c-1.2")) == frozenset()  # all lowered there
    feats = F.parse("int,collective,subgroup,reduction")
    failed_without = 0
    for seed in range(30):
        assert generate(seed, feats, frozenset()).render() == generate(seed, feats).render()
        prog = generate(seed, feats, avoid)
        text = prog.render()
        for line in text.splitlines():  # one collective per statement line
            for name in avoid:
                scope_mode, op = name.split(":")
                bad = f"clpy.{scope_mode}(" in line and line.endswith(f', "{op}")')
                assert not bad, (name, line)
        load(prog, tmp_path).kernel.source_for(fake)  # no FeatureError
        try:
            load(generate(seed, feats), tmp_path).kernel.source_for(fake)
        except FeatureError:
            failed_without += 1
    assert failed_without >= 3


def test_no_barrier_after_a_divergent_loop_without_loop_barrier():
    """Without ``loop-barrier`` (a PoCL bug clpy now avoids: test_fuzz_pocl_loops.py) no barrier
    or collective follows a loop whose trip count may depend on the work-item; with it, some
    do (the same seeds)."""
    import re

    def barrier_after_loop(text: str) -> bool:
        body = text[text.index("@clpy.kernel") :]
        loop = re.search(r"^\s+(while |for \w+ in range\((?!\d+\):))", body, re.M)
        return loop is not None and bool(
            re.search(r"clpy\.(barrier|work_group_|sub_group_)", body[loop.end() :])
        )

    with_lb = F.parse("int,control,local,collective,subgroup,reduction,loop-barrier")
    without = with_lb - {F.LOOP_BARRIER}
    assert F.LOOP_BARRIER in with_lb
    seen = 0
    for seed in range(60):
        assert not barrier_after_loop(generate(seed, without).render()), seed
        seen += barrier_after_loop(generate(seed, with_lb).render())
    assert seen >= 5


def test_a_cut_run_reports_its_counts(tmp_path):
    """A run stopped by SIGTERM (what `timeout` sends) or by --hard-limit still prints
    `N kernels, M mismatches, K errors` for what finished and writes its summary."""
    import json
    import signal
    import subprocess
    import sys
    import time

    summary = tmp_path / "s.json"
    cmd = [sys.executable, "-m", "clpy.fuzz", "--count", "400", "--devices", "sim",
           "--features", "int", "--quiet", "--summary", str(summary)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while not summary.exists() and time.monotonic() - t0 < 120:
        time.sleep(0.2)  # written at the first result
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    n = int(out.strip().splitlines()[-1].split()[0])
    assert 0 < n < 400 and out.strip().endswith("0 mismatches, 0 errors"), (out, err)
    assert "stopped (SIGTERM)" in err
    data = json.loads(summary.read_text())
    assert data["count"] == n and data["state"] == "stopped (SIGTERM)"

    t0 = time.monotonic()
    code = main(["--count", "400", "--devices", "sim", "--features", "int", "--quiet",
                 "--jobs", "2", "--hard-limit", "5", "--summary", str(summary)])  # fmt: skip
    assert code == 0 and time.monotonic() - t0 < 30
    data = json.loads(summary.read_text())
    assert data["state"] == "stopped (hard limit)" and data["count"] < 400


def test_nan_sign_and_payload_never_reach_the_outputs():
    """A NaN's sign and payload are not pinned (x86's default NaN is negative, NVIDIA's
    positive): signbit and copysign's sign operand see numbers only, like reinterpretation
    (seed 200253 of the three-way run; 200238, 200674, 200806, 200890 were as_T of NaN)."""
    import re

    feats = F.parse("int,float,double,vector,convert,control")
    seen = 0
    for seed in range(150):
        body = generate(seed, feats).render()
        body = body[body.index("@clpy.kernel") :]
        assert not re.search(r"clpy\.signbit\((?!no_nan_)", body), seed
        for line in body.splitlines():
            if "clpy.copysign(" in line:
                seen += 1
                assert "no_nan_" in line, (seed, line)
    assert seen >= 3


def test_a_kernel_that_kills_its_worker_is_an_error_with_a_reproducer(tmp_path):
    """A driver crash ends the worker process: the kernel is run again alone, reported as an
    error, and its reproducer (program, inputs, OpenCL C) is written by the parent."""
    code = main(["--count", "1", "--seed", "3", "--devices", "sim,sim:mutant-crash",
                 "--jobs", "2", "--quiet", "--out", str(tmp_path), "--shrink-seconds", "6",
                 "--features", "int"])  # fmt: skip
    assert code == 1
    folder = tmp_path / "seed3"
    assert (folder / "kernel.py").exists() and (folder / "kernel_inputs.npz").exists()
    assert "worker process died" in (folder / "README").read_text()
    # shrunk in child processes: the mutant dies on any program, so little is left
    reduced = (folder / "reduced.py").read_text()
    kernel = (folder / "kernel.py").read_text()
    assert reduced.count("\n") < kernel.count("\n")


def test_no_nan_into_rounding_functions_without_nan_round():
    """Without ``nan-round`` (dropped for PoCL, which folds ceil(NaN) into garbage) a scalar
    ceil/floor/trunc/round argument is guarded and vectors use rint; with it they are not."""
    import re

    base = F.parse("int,float,double,vector")
    pat = re.compile(r"clpy\.(ceil|floor|trunc|round)\((?!no_nan_)")
    guarded = unguarded = 0
    for seed in range(120):
        without = generate(seed, base - {F.NAN_ROUND}).render()
        assert not pat.search(without), seed
        guarded += len(re.findall(r"clpy\.(?:ceil|floor|trunc|round)\(no_nan_", without))
        unguarded += len(pat.findall(generate(seed, base | {F.NAN_ROUND}).render()))
    assert guarded >= 3 and unguarded >= 3
