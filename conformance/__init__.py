"""Traces: reading, validation, replay against the models, global property
checks, TLC trace validation, the pipeline and the audit report."""
