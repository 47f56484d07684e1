# groupcheck: two commands for a fresh machine, `make audit` and `make test`.
# Each creates .venv and installs the project on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: audit test test-slow check bench clean java screenshot

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

# docs/report.png from audit/report.html at 1280 px (needs Debian's chromium; make never installs it).
screenshot:
	@command -v chromium >/dev/null || { echo "screenshot: needs chromium (Debian: apt-get install chromium)"; exit 3; }
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1700 \
		--screenshot=docs/report.png file://$(CURDIR)/audit/report.html

clean:
	rm -rf $(VENV) audit build dist *.egg-info
