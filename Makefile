# groupcheck: two commands for a fresh machine, `make audit` and `make test`.
# Each creates .venv and installs the project on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: audit test test-slow check bench clean java

$(STAMP): pyproject.toml
	@sh .ci/check-java
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

java:
	@sh .ci/check-java

# The main job: model-check every spec, cross-check models, check traces, write audit/.
audit: $(STAMP) java
	$(BIN)/groupcheck audit

# The default (fast) suite; HYPOTHESIS_PROFILE=ci keeps it deterministic and bounded.
test: $(STAMP) java
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -n 2 --dist loadgroup

# Long checks behind the `slow` marker.
test-slow: $(STAMP) java
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -m slow -n 2 --dist loadgroup

bench: $(STAMP) java
	$(BIN)/python bench/explore.py

clean:
	rm -rf $(VENV) audit build dist *.egg-info
