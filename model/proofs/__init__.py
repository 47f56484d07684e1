"""Inductive-invariant proofs with z3 see docs/proofs.md."""
