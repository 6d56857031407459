"""The symbolic report as data (autograders), as text, and as a notebook table."""

from __future__ import annotations

import json

import pytest
from symbolic_examples import Clip, ReLU

from autodiff_tutor.verify.symbolic import verify_symbolic


class ClipWrongLower(Clip):
    def backward(self, d_y, compute_gradients, x, lo, hi):
        inside = (x >= lo) & (x <= hi)
        return d_y * inside, d_y * (x > hi), d_y * (x > hi)


@pytest.fixture(scope="module")
def failing():
    return verify_symbolic(ClipWrongLower(), assume=["lo < hi"])


def test_data_for_autograders(failing) -> None:
    data = failing.to_dict()
    assert json.loads(json.dumps(data)) == data  # plain data, JSON-ready
    assert data["passed"] is False and data["assumptions"] == ["lo < hi"]
    by_key = {(r["input"], r["region"]): r for r in data["regions"]}
    assert len(by_key) == 9  # 3 inputs x 3 regions, one entry each
    wrong = by_key[("lo", "x > hi")]
    assert wrong["verdict"] == "differs" and not wrong["passed"]
    assert set(wrong["counterexample"]) == {"x", "lo", "hi", "d_y"}
    assert wrong["expected_value"] == 0.0 and wrong["got_value"] != 0.0
    assert by_key[("x", "x > hi")]["verdict"] == "proved"
    assert {f.input for f in failing.failures()} >= {"lo"}


def test_text(failing) -> None:
    text = failing.text()
    assert text.startswith("symbolic check of clip: FAILED")
    assert "assuming lo < hi" in text
    assert "lo     x > hi" in text and "differs" in text
    assert "counterexample: x=" in text and "the backward gives" in text
    assert "kinks" in text
    assert str(failing) == text
    assert "FAILED" in repr(failing)


def test_notebook_table(failing) -> None:
    html = failing._repr_html_()
    assert html.count("<tr>") >= 10
    assert "FAILED" in html and "$" in html  # LaTeX formulas for MathJax
    assert "d_{y}" in html  # sympy's LaTeX of the seed symbol


def test_a_passing_report() -> None:
    report = verify_symbolic(ReLU())
    assert report.passed and report.failures() == []
    assert "PASSED" in report.text() and "passed" in report._repr_html_()
    assert report.to_dict()["kinks"][0]["verdict"] == "one-sided"
    with pytest.raises(KeyError, match="regions"):
        report.entry("x", "x > 1")
