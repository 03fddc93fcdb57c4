"""Upstream retries show in the metrics, labelled by the kind of failure."""

from __future__ import annotations

from prometheus_client import REGISTRY

from tests.faults.conftest import Rig
from tests.faults.upstream import ResetAfter, Status


def by_label(name: str, label: str) -> dict[str, float]:
    """The metric's current values, by one label."""
    return {
        s.labels[label]: s.value
        for metric in REGISTRY.collect()
        for s in metric.samples
        if s.name == name
    }


def test_retries_are_counted_by_kind(rig: Rig) -> None:
    before = by_label("chat_upstream_retries_total", "kind")
    rig.upstream.script(Status(529), Status(529), ResetAfter(10))
    _, events = rig.run("What did I spend on groceries last month?")
    assert events[-1][2]["status"] == "completed"
    after = by_label("chat_upstream_retries_total", "kind")
    grown = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    assert sum(grown.values()) == 3 and len(grown) == 2, grown
