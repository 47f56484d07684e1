# groupcheck: two commands for a fresh machine, `make audit` and `make test`.
# Each creates .venv and installs the project on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: audit test test-slow test-heavy check bench clean java screenshot jgroups

$(STAMP): pyproject.toml
	@sh .ci/check-java
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# setuptools prints a generic notice on every editable install ("Editable installation ... careful
	@# with folders"): nothing to act on here (the packages map to spec/, model/, ...), so it is filtered
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

java:
	@sh .ci/check-java

# The main job: model-check every spec, cross-check models, check traces, write audit/.
audit: $(STAMP) java
	$(BIN)/groupcheck audit

# The default (fast) suite; HYPOTHESIS_PROFILE=ci keeps it deterministic and bounded.
test: $(STAMP) java
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -n 2 --dist loadgroup

# Long checks behind the `slow` marker (within 30 minutes on 2 cores), and the
# longest behind `heavy` (the manifests' heavy TLC models and the checks measured
# at a minute or more: hours; tests/suite_split.txt).
test-slow: $(STAMP) java
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -m "slow and not heavy" -n 2 --dist loadgroup

test-heavy: $(STAMP) java
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -q -m heavy -n 2 --dist loadgroup

bench: $(STAMP) java
	$(BIN)/python bench/explore.py

# docs/report.png: the top of audit/report.html at 1280 px (needs Debian's chromium; make
# never installs it), and beside it docs/report.json: the counts of checks by kind of the
# audit pictured (from the report's summary.json), which tests/test_report_picture.py holds
# against the audit's plan now.  REPORT and PNG name another report and picture (the
# browser test does).
REPORT ?= audit/report.html
PNG    ?= docs/report.png
screenshot:
	@command -v chromium >/dev/null || { echo "screenshot: needs chromium (Debian: apt-get install chromium)"; exit 3; }
	@test -f $(REPORT) || { echo "screenshot: no $(REPORT): run groupcheck audit (or groupcheck audit --from SUMMARY) first"; exit 2; }
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1700 \
		--screenshot=$(abspath $(PNG)) file://$(abspath $(REPORT)) 2>/dev/null
	python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["totals"]; \
		json.dump({"checks": t["checks"], "by_kind": t["by_kind"]}, open(sys.argv[2], "w"), indent=1)' \
		$(dir $(abspath $(REPORT)))summary.json $(basename $(abspath $(PNG))).json

# Debian packages that some tests need and pip cannot give: JGroups 2.12 and javac
# (groupcheck jgroups, tests/test_jgroups*.py), chromium (tests/test_report_browser.py,
# make screenshot).  As root it installs what is missing; otherwise it prints the
# command.  Without them those tests skip, with the reason.
JGROUPS_JAR := /usr/share/java/jgroups.jar
jgroups:
	@missing=""; \
	test -f $(JGROUPS_JAR) || missing="$$missing libjgroups-java"; \
	command -v javac >/dev/null || missing="$$missing default-jdk-headless"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -z "$$missing" ]; then echo "jgroups: JGroups ($(JGROUPS_JAR)), javac and chromium are installed"; \
	elif ! command -v apt-get >/dev/null; then \
		echo "jgroups: no apt-get here; install$$missing (Debian names) by hand; until then their tests skip"; \
	elif [ "$$(id -u)" -ne 0 ]; then \
		echo "jgroups: not root; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends$$missing"; \
	else \
		echo "jgroups: installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends$$missing \
			|| { echo "jgroups: apt-get failed; the tests that need$$missing skip with the reason"; exit 1; }; \
	fi

clean:
	rm -rf $(VENV) audit build dist *.egg-info
