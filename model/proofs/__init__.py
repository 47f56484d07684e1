"""Inductive-invariant proofs with z3 (issue 15); see docs/proofs.md."""
