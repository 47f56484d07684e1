"""Link (1): for every manifest model with ``compare: true``, the Python
explorer's reachable graph equals TLC's ``-dump dot`` graph.  Models whose
manifest entry says ``"slow": true`` (graphs of ~100k states), and those
whose compared graph is over ``DEFAULT_STATES`` states, run under the slow
marker.  Of the smaller ones the default suite compares, per protocol, the
smallest model expected to hold and the smallest expected to violate (every
protocol but SEQUENCER over FLUSH over the ring, whose smallest graph, 3,030
states, costs about 20 s of TLC and 15 s of the explorer; the explorer's
pinned state counts, tests/test_model_*.py, are default tests of their
own); the audit's link stage and the slow suite compare the others.  The compared graph is the model check's
``distinct_states`` unless the entry pins ``link_states``: a violating model
compared to a depth bound explores past the violation where TLC stopped."""

import pytest

from groupcheck.conformance.audit import stages as audit
from groupcheck.model import manifest
from groupcheck.model.link import compare_entry


DEFAULT_STATES = 1_500


def _cases():
    out = []
    for proto in manifest.protocols():
        try:
            entries = manifest.load(proto)
        except manifest.ManifestError as e:  # a broken manifest is a failure, not a skip
            out.append(pytest.param(proto, None, id=f"{proto}-manifest", marks=()))
            continue
        # a heavy model whose tlc and link checks share one TLC run is
        # compared by tests/test_manifest_heavy.py (one run, not two)
        compared = [e for e in entries if e.compare and not (e.extra.get("heavy") and audit.shares_one_run(e))]
        size = {e.name: e.extra.get("link_states", e.distinct_states) or 0 for e in compared}
        small = [e for e in compared if not e.extra.get("slow") and size[e.name] <= DEFAULT_STATES]
        fast = set()
        for holds in (True, False):
            kind = sorted((size[e.name], e.name) for e in small if (e.expected == "ok") == holds)
            fast.update(name for _, name in kind[:1])
        for e in compared:
            marks = () if e.name in fast else (pytest.mark.slow,)
            out.append(pytest.param(proto, e.name, id=f"{proto}-{e.name}", marks=marks))
    return out


@pytest.mark.parametrize("protocol,model", _cases())
def test_model_graph_equals_tlc_graph(protocol, model):
    assert model is not None, f"manifest of {protocol} does not load"
    (entry,) = manifest.select([protocol], model)
    report = compare_entry(entry, compare_tlc=True)
    assert report.tlc_distinct_states == report.distinct_states, report.to_json()
    assert report.graphs_equal, report.to_json()["first_difference"]
    if "link_states" in entry.extra:          # the pinned size of the compared graph
        assert report.distinct_states == entry.extra["link_states"], report.to_json()
