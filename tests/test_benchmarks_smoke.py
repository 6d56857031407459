"""Smoke test of the benchmark suite (``python -m benchmarks --quick``): correctness only.

The suite runs with tiny sizes and one repeat. Checked here: the hand-written
gradients against central finite differences (an oracle the suite does not control),
every system's gradient against the hand-written one (the suite's own check, which
must be able to fail: a planted wrong gradient is caught), and the structure of the
report (markdown and JSON). No timing is asserted, ever.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from oracles import central_difference

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is not installed: it runs from the checkout
    sys.path.insert(0, str(ROOT))

from benchmarks import __main__ as cli  # noqa: E402
from benchmarks import in_place  # noqa: E402
from benchmarks.handwritten import HANDWRITTEN  # noqa: E402
from benchmarks.runner import compare, run  # noqa: E402
from benchmarks.systems import SYSTEMS, Prepared, Skipped, System  # noqa: E402
from benchmarks.workloads import WORKLOADS  # noqa: E402

ALWAYS_THERE = ("forward", "hand-written", "autodiff_tutor", "tracing", "autograd")
OPTIONAL = ("jax", "torch")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One ``--quick`` run through the command line: exit status, stdout, JSON, markdown."""
    out = tmp_path_factory.mktemp("bench")
    status = cli.main(["--quick", "--out", str(out)])
    results = json.loads((out / "latest.json").read_text())
    return status, results, (out / "latest.md").read_text(), out


def test_quick_run_passes_every_gradient_check(quick):
    status, results, _, _ = quick
    assert results["problems"] == []
    assert status == 0
    for row in results["rows"]:
        for name in ALWAYS_THERE:
            cell = row["systems"][name]
            assert cell["status"] == "ok", (row["workload"], name, cell)
        for name in OPTIONAL:
            expected = {"ok", "skipped"} if importlib.util.find_spec(name) else {"missing"}
            assert row["systems"][name]["status"] in expected, (row["workload"], name)


def test_quick_run_agrees_with_hand_written_to_rounding(quick):
    _, results, _, _ = quick
    for row in results["rows"]:
        for name, cell in row["systems"].items():
            if cell["status"] == "ok" and name != "forward":
                assert cell["max_error"] < 1e-9, (row["workload"], name, cell["max_error"])


def test_report_structure(quick):
    _, results, text, _ = quick
    assert [row["workload"] for row in results["rows"]] == list(WORKLOADS)
    assert {row["size"] for row in results["rows"]} == {"tiny"}
    assert results["meta"]["repeat"] == 1
    for row in results["rows"]:
        for cell in row["systems"].values():
            if cell["status"] == "ok":
                timing = cell["timing"]
                assert timing["number"] == 1 and len(timing["times"]) == 1
                assert timing["median"] >= 0 and cell["first_call_s"] >= 0  # present, not judged
                assert cell["peak_bytes"] is None or cell["peak_bytes"] >= 0
        assert row["compile"]["compile_s"] > 0 and row["compile"]["first_call_s"] > 0
    for heading in (
        "Median time",
        "Ratio to the hand-written",
        "Gradient / forward",
        "Peak memory",
    ):
        assert f"## {heading}" in text
    assert "## Compile cost" in text
    for name in WORKLOADS:
        assert text.count(f"| {name} | tiny") == 5  # time, two ratio, memory, compile tables


def test_the_run_draws_the_ratios_of_every_system_that_ran(quick):
    """The plot of the ratios to hand-written: a PNG next to the report, with a bar
    group per row and the systems that ran (not those missing)."""
    from benchmarks.plot import ratios

    _, results, _, out = quick
    assert (out / "latest_ratios.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels, found = ratios(results)
    assert len(labels) == len(results["rows"])
    assert "autodiff_tutor" in found and "hand-written" not in found
    for name, values in found.items():
        statuses = [row["systems"][name]["status"] for row in results["rows"]]
        assert [v is not None for v in values] == [s == "ok" for s in statuses]
        assert all(v > 0 for v in values if v is not None)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_hand_written_matches_finite_differences(name):
    workload = WORKLOADS[name]
    args = workload.make_args(np.random.default_rng(7), "tiny")
    value, gradients = HANDWRITTEN[name](*args)
    assert float(value) == pytest.approx(float(workload.fn(*args)), rel=1e-12)
    assert len(gradients) == len(workload.wrt)
    for index, gradient in zip(workload.wrt, gradients, strict=True):
        expected = central_difference(workload.fn, args, index)
        assert gradient.shape == expected.shape
        scale = max(np.max(np.abs(expected)), 1.0)
        np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6 * scale)


class _Doubled(System):
    """A planted bug: the hand-written gradient, doubled."""

    name = "doubled"

    def prepare(self, workload, args):
        fn = HANDWRITTEN[workload.name]
        return Prepared(lambda: fn(*args), lambda r: (r[0], tuple(2 * g for g in r[1])))


class _NotInstalled(System):
    name = "not-installed"
    module = "a_library_that_is_not_installed_here"


def test_a_wrong_gradient_is_caught_and_a_missing_library_is_not_a_failure(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.setitem(SYSTEMS, "doubled", _Doubled())
    monkeypatch.setitem(SYSTEMS, "not-installed", _NotInstalled())
    argv = ["--quick", "--out", str(tmp_path), "--workloads", "mlp,rnn"]
    status = cli.main([*argv, "--systems", "hand-written,doubled,not-installed"])
    results = json.loads((tmp_path / "latest.json").read_text())
    assert status == 1
    assert len(results["problems"]) == 2
    for row in results["rows"]:
        assert row["systems"]["doubled"]["status"] == "mismatch"
        assert "timing" not in row["systems"]["doubled"]  # a wrong gradient is not timed
        assert row["systems"]["not-installed"]["status"] == "missing"
    assert "BENCHMARK CHECK FAILED" in capsys.readouterr().err


def test_compare_reports_values_shapes_and_gradients():
    reference = (1.0, (np.ones(2), np.ones((2, 2))))
    assert compare(1.0, (np.ones(2), np.ones((2, 2))), reference) == []
    problems = compare(1.5, (np.ones(3), np.ones((2, 2)) * (1 + 1e-6)), reference)
    assert len(problems) == 3
    assert problems[0].startswith("value 1.5") and "shape (3,)" in problems[1]
    assert compare(1.0, (np.ones(2),), reference) == ["1 gradients, expected 2"]


def test_an_error_in_one_system_is_reported_not_raised(monkeypatch):
    class Raises(System):
        name = "raises"

        def prepare(self, workload, args):
            raise ValueError("broken adapter\nsecond line")

    monkeypatch.setitem(SYSTEMS, "raises", Raises())
    results = run(["rosenbrock"], ["tiny"], ["raises"], 1, 0.0, 0, 1, progress=None)
    cell = results["rows"][0]["systems"]["raises"]
    assert cell == {"status": "error", "detail": "ValueError: broken adapter"}
    assert results["problems"] == ["rosenbrock (tiny), raises: error: ValueError: broken adapter"]


@pytest.mark.parametrize(
    "module",
    [
        "workloads",
        "handwritten",
        "measure",
        "systems",
        "runner",
        "report",
        "lines",
        "plot",
        "blas",
        "in_place",
        "specialization",
    ],
)
def test_benchmark_doctests(module):
    # pytest does not collect benchmarks/ (norecursedirs), so its examples run here
    result = doctest.testmod(
        importlib.import_module(f"benchmarks.{module}"), optionflags=doctest.ELLIPSIS
    )
    assert result.attempted > 0 and result.failed == 0


def test_in_place_comparison_checks_both_pairs_give_the_same_numbers():
    # every array in place: the tiny rnn's pair is rewritten, and compare() raises
    # unless it gives the numbers of the pair without the rewrite, bit for bit
    row = in_place.compare("rnn", "tiny", repeat=1, smallest=1)
    assert {"before", "after", "hand-written"} <= set(row.seconds)
    assert all(seconds > 0 for seconds in row.seconds.values())


def test_slow_systems_are_timed_once_by_a_second_call():
    results = run(
        ["newton_while"],
        ["tiny"],
        ["hand-written", "autodiff_tutor"],
        3,
        0.0,
        0,
        1,
        slow_call_s=0.0,
        progress=None,
    )
    for cell in results["rows"][0]["systems"].values():
        assert cell["status"] == "ok" and cell["single_call"] is True
        assert cell["timing"]["number"] == 1 and len(cell["timing"]["times"]) == 1


def test_a_skipped_system_is_not_a_failure(monkeypatch):
    class Skips(System):
        name = "skips"

        def prepare(self, workload, args):
            raise Skipped("not this one")

    monkeypatch.setitem(SYSTEMS, "skips", Skips())
    results = run(["rnn"], ["tiny"], ["skips"], 1, 0.0, 0, 1, progress=None)
    assert results["rows"][0]["systems"]["skips"] == {"status": "skipped", "detail": "not this one"}
    assert results["problems"] == []


@pytest.mark.parametrize("name", ["scalar_loop", "srelu_net"])
def test_line_profile_times_every_generated_statement(name, capsys):
    from benchmarks import lines

    lines.main([name, "tiny", "2"])
    printed = capsys.readouterr().out
    for part in lines.profile_lines(name, "tiny", calls=1):
        body = [ln.strip() for ln in part.source.splitlines()[1:]]
        simple = [ln.split("  #")[0] for ln in body if not ln.startswith(("for ", "while ", "if "))]
        timed = [line for line, seconds in part.lines if seconds >= 0]
        assert len(timed) == len([ln for ln in simple if not ln.startswith("return ")])
        assert f"== {part.name}:" in printed
