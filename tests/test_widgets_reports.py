"""The tape view, the verification view and the check report view, driven from Python."""

from __future__ import annotations

import re

import numpy as np
import pytest
from widget_subjects import Cube, leaky, leaky_backward, leaky_wrong

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.tracing import evaluate, extract_data, gradient, traced
from autodiff_tutor.verify import check_layer, check_op
from autodiff_tutor.verify.symbolic import verify_symbolic
from autodiff_tutor.widgets import (
    CheckReportView,
    check_report_view,
    tape_view,
    verification_view,
)

# --- tape view ---------------------------------------------------------------------------


def rosenbrock(x):
    y = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
    return y, gradient(y, x)


def _rosenbrock_tape():
    from autodiff_tutor.tracing import last_tape

    value, slope = evaluate(rosenbrock, traced([-1.0, 2.0]))
    assert float(extract_data(value)) == 104.0 and slope.tolist() == [396.0, 200.0]
    return last_tape()


def test_tape_view_marks_where_inputs_come_from_and_who_uses_the_output():
    tape = _rosenbrock_tape()
    view = tape_view(tape)
    indices = [value for _, value in view.record_picker.options if value is not None]
    assert indices == [record.index for record in tape.records]
    for record in tape.records:
        view.record_picker.value = record.index
        marked = view.highlighted
        assert marked["current"] == [f"{record.index} {record.op}"]
        # producers, worked out from the nodes (not from the view's own rows)
        producers = set()
        for info in record.inputs:
            if info.node is None:
                continue
            made_by = tape.nodes[info.node].record
            producers.add("- input" if made_by is None else f"{made_by} {tape.records[made_by].op}")
        assert set(marked["inputs"]) == producers
        users = {
            f"{r.index} {r.op}"
            for r in tape.records
            if set(record.outputs) & {i.node for i in r.inputs}
        }
        assert set(marked["users"]) == users
        assert record.where in view.detail_html.value
    # the last operation (the final add) has no user; the first reads the argument x
    assert view.highlighted["users"] == []
    view.record_picker.value = tape.records[0].index
    assert view.highlighted["inputs"] == ["- input"]
    view.record_picker.value = None
    assert view.highlighted == {"current": [], "inputs": [], "users": []}
    assert view.detail_html.value == ""


def test_tape_view_shows_cut_operations_and_extractions():
    def model(x):
        mask = x > 0  # a comparison: no gradient flows back through it
        y = np.sum(x * mask)
        extract_data(y)  # reading the numbers during the trace
        return gradient(y, x)

    from autodiff_tutor.tracing import last_tape

    evaluate(model, traced(np.array([1.0, -1.0])))
    view = tape_view(last_tape())
    cut = [r for r in last_tape().records if not r.needs_gradient]
    assert cut
    assert "color:#888" in view.table_html.value
    assert "extract_data took" in view.title.value
    view.record_picker.value = cut[0].index
    assert "no gradient flows back" in view.detail_html.value


def test_tape_view_refuses_what_is_not_a_tape():
    with pytest.raises(ArgumentError, match="tracing tape"):
        tape_view(42)


# --- verification view ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def reports():
    return verify_symbolic(leaky, leaky_backward), verify_symbolic(leaky, leaky_wrong)


def test_verification_view_filters_the_region_table(reports):
    good, bad = reports
    assert good.passed and not bad.passed  # the verifier itself
    view = verification_view(bad)
    assert view.shown_regions == bad.regions
    assert "FAILED" in view.header.value
    assert view.regions_html.value.count("$") >= 4 * len(bad.regions)  # formulas in LaTeX
    view.failures_only.value = True
    assert view.shown_regions and all(not c.passed for c in view.shown_regions)
    assert {c.input for c in view.shown_regions} == {"a"}
    assert "counterexample" in view.regions_html.value
    assert "the backward gives" in view.regions_html.value
    view.failures_only.value = False
    view.input_picker.value = "x"
    assert view.shown_regions and {c.input for c in view.shown_regions} == {"x"}
    region = bad.region_names()[0]
    view.region_picker.value = region
    assert [c.region for c in view.shown_regions] == [region]
    rows = re.findall(r"<tr>", view.regions_html.value)
    assert len(rows) == 1 + len(view.shown_regions)  # the header and one row per check


def test_verification_view_kinks_and_passing_report(reports):
    good, _ = reports
    view = verification_view(good)
    assert "passed" in view.header.value
    shown = view.shown_kinks
    assert shown and all(k.verdict != "smooth" or k.detail for k in shown)
    view.show_smooth.value = True
    assert view.shown_kinks == good.kinks
    for kink in good.kinks:
        assert kink.boundary in view.kinks_html.value
    view.failures_only.value = True
    assert view.shown_regions == [] and "no region check to show" in view.regions_html.value


def test_verification_view_refuses_other_objects():
    with pytest.raises(ArgumentError, match="verify_symbolic"):
        verification_view("a report")


# --- check report view ---------------------------------------------------------------------


def test_check_report_view_filters_by_status():
    report = check_op(Cube(), np.array([0.5, 1.0, 2.0]))
    view = check_report_view(report)
    assert "FAILED" in view.header.value
    assert view.shown_entries == report.entries
    for entry in report.entries:
        assert entry.category in view.table_html.value
    view.status_picker.value = "failed"
    assert [e.category for e in view.shown_entries] == ["finite differences"]
    assert view.table_html.value.count("<tr>") == 2  # the header and the failed entry
    statuses = [value for _, value in view.status_picker.options]
    assert statuses[0] == "all" and set(statuses[1:]) == {e.status for e in report.entries}


def test_check_layer_report_and_dispatch():
    from autodiff_tutor.nn import PReLULayer

    report = check_layer(PReLULayer(), (6, 4))
    assert report.passed
    view = verification_view(report)  # a check report goes to the check view
    assert isinstance(view, CheckReportView)
    assert "passed" in view.header.value and "initialize" in view.table_html.value
    with pytest.raises(ArgumentError, match="check_op"):
        check_report_view(object())


def test_report_views_have_short_reprs(reports):
    good, bad = reports
    assert repr(verification_view(good)) == "<verification view of leaky: passed>"
    assert repr(verification_view(bad)) == "<verification view of leaky: FAILED>"
    report = check_op(Cube(), np.array([0.5, 1.0, 2.0]))
    assert repr(check_report_view(report)) == "<check report view of Cube: FAILED>"
    view = tape_view(_rosenbrock_tape())
    assert repr(view).startswith("<tape view: trace ") and "10 operations>" in repr(view)
