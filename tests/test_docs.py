"""The docs the product ships: every relative link, and every docs/<page>.md
or spec/<P>/README.md named in the text, of docs/*.md, README.md and the spec
READMEs resolves; and every known violation a protocol's
registration accepts has the finding the audit's report cites
(conformance/audit/stages.py ``finding_ref``: a "Finding" heading of
docs/<protocol>.md whose section names the property)."""

import re
from pathlib import Path

import pytest

from groupcheck.conformance.replay import registry as protocols
from groupcheck.conformance.audit.stages import finding_ref

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(ROOT.glob("docs/*.md")) + [ROOT / "README.md"] + sorted(ROOT.glob("spec/**/README.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOC_NAME = re.compile(r"(?<![\w/])(docs/[\w-]+\.md|spec/\w+/README\.md)")     # plain-text references


def _slug(heading: str) -> str:
    # GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set:
    return {_slug(ln.lstrip("#")) for ln in page.read_text(encoding="utf-8").splitlines() if ln.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    bad = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue                                    # http:, https:, mailto:
        path, _, fragment = target.partition("#")
        dest = (page.parent / path) if path else page
        if not dest.exists():
            bad.append(target)
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            bad.append(target)
    bad += [ref for ref in DOC_NAME.findall(page.read_text(encoding="utf-8")) if not (ROOT / ref).exists()]
    assert not bad, f"{page.relative_to(ROOT)}: unresolved links {bad}"


@pytest.mark.parametrize("name", protocols.REGISTERED)
def test_every_known_violation_has_its_documented_finding(name):
    p = protocols.get(name)
    missing = [v for v in p.known_violations if finding_ref(name, v) is None]
    assert not missing, f"docs/{name}.md has no Finding section naming {missing}"


@pytest.mark.parametrize("name", protocols.REGISTERED)
def test_every_registered_finding_links_to_its_section(name):
    """A finding's ``doc`` (conformance/findings.py) is a page and anchor that exist."""
    for f in protocols.get(name).findings:
        page, _, anchor = f.doc.partition("#")
        assert (ROOT / page).exists(), f.doc
        assert not anchor or anchor in _anchors(ROOT / page), f"{f.id}: no #{anchor} in {page}"
