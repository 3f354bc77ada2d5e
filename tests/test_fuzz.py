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
