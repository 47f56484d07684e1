"""Every fixed-N encoding's whole inductive invariant (every lemma) on a
few reachable states of a bounded model, and no successor in its z3
relation that the model lacks: the default suite's cheap check of the
lemma sets and relations that the slow tier proves and samples in full
(tests/test_proofs_*.py).  A lemma made false of the states a protocol
reaches fails here; a lemma weakened only fails its proof."""

import pytest

from proof_helpers import sample_model, states_hold


@pytest.mark.parametrize("protocol,name", [("flush", "FixedJoinCrash"), ("stable", "Pair"),
                                           ("sequencer", "CoordCrash"), ("sequencerflush", "LiveSender2")])
def test_a_few_reachable_states_satisfy_every_lemma_and_have_no_extra_successor(protocol, name):
    enc, model, res, _ = sample_model(protocol, name, 500, 0)
    assert len(res.parents) == 500
    states_hold(enc, model, res.parents, 3, True, seed=15)
