"""Shared test settings.

Hypothesis profiles: ``dev`` (quick, random) and ``ci`` (derandomised, more
examples, no deadline: CI machines are shared and slow).  ``make test`` sets
HYPOTHESIS_PROFILE=ci.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
