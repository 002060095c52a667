"""junit.xml: one <testsuite> per combination, for CI test UIs.

Follows pytest's junitxml conventions (``junit_family=xunit2``): ``classname`` is
the case's module path with dots, ``name`` the test name with its parameters; a
failed case has <failure message=...>, an error <error>, a skip <skipped
type="pytest.skip">, a known-broken case <skipped type="pytest.xfail"> (as pytest
writes an xfail). A combination that did not install is one testcase with an
<error>; one that could not run here (no GPU) is one skipped testcase.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from repromatrix.environment.source_tree import SourceTree
from repromatrix.outcomes import FAILURES, CaseStatus, CombinationStatus
from repromatrix.redact import escaped_redactor, redactor
from repromatrix.reports.view import View, first_line
from repromatrix.results import CaseResult, CombinationResult
from repromatrix.results.bulk import without_cycle_collection
from repromatrix.verdicts import case_repro, is_regression

# Characters XML 1.0 cannot carry at all (pytest's bin_xml_escape drops them too).
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# <failure>; an error in setup, teardown or collection is an <error> of its own.
FAILURE_OUTCOMES = FAILURES - {CaseStatus.ERROR}
# A combination without cases that is an <error> (else it is <skipped>): its type.
ERROR_TYPES = {CombinationStatus.INSTALL_ERROR: "InstallError", CombinationStatus.LOST: "LostJob"}


Clean = Callable[[str | None], str]


def _cleaner(scrub: Callable[[str], str] | None) -> Clean:
    """A value redacted with ``scrub`` (the characters XML cannot carry go from the
    whole document after: _xml_chars)."""
    if scrub is None:
        return lambda text: text or ""
    return lambda text: scrub(text or "")


def _xml_chars(document: str) -> str:
    """Only characters XML can carry, in one pass over the document rather than one a
    value (60,000 values at 2,000 combinations): its markup holds none of those that
    go, and escaping leaves them as they are, so each value ends as if cleaned alone."""
    if _ILLEGAL_XML.search(document) is None:
        return document
    return _ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", document)


def _xml_spellings(value: str) -> str:
    """A string as this file spells it in an attribute (in text it escapes less: the
    raw form and this one cover both), after the characters XML cannot carry went."""
    return _attribute(_ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", value))


def _text_spelling(value: str) -> str:
    return _text(_ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", value))


@without_cycle_collection
def render(view: View) -> str:
    """Written once without masking, value by value: again with it only where the text
    may hold a secret (thousands of values in a large matrix)."""
    found = escaped_redactor((_xml_spellings, _text_spelling))
    text = _xml_chars(_render(view, _cleaner(None)))
    if found.may_hold_secrets(text):
        scrub = redactor()
        text = scrub(_xml_chars(_render(view, _cleaner(scrub))))  # and the whole, as the door would
    return text


# The document is written as text, as ElementTree writes it with ET.indent (two spaces
# a level, ``<empty />``, attributes in the order given): ElementTree's own writer walks
# every element in Python twice, seconds for a matrix of 2,000 combinations.


def _attributes(attributes: dict[str, str]) -> str:
    return "".join(f' {name}="{_attribute(value)}"' for name, value in attributes.items())


# What ElementTree escapes in an attribute value; most values hold none of it.
_ATTRIBUTE_SPECIAL = re.compile('[&<>"\r\n\t]')


def _attribute(value: str) -> str:
    """ElementTree's escaping of an attribute value."""
    if _ATTRIBUTE_SPECIAL.search(value) is None:
        return value
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = value.replace('"', "&quot;").replace("\r", "&#13;").replace("\n", "&#10;")
    return value.replace("\t", "&#09;")


def _text(value: str) -> str:
    """ElementTree's escaping of text."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _property(level: int, name: str, value: str) -> str:
    return f'{"  " * level}<property name="{_attribute(name)}" value="{_attribute(value)}" />'


def _leaf(level: int, tag: str, attributes: dict[str, str], text: str = "") -> str:
    start = f"{'  ' * level}<{tag}{_attributes(attributes)}"
    return f"{start}>{_text(text)}</{tag}>" if text else f"{start} />"


def _parent(level: int, tag: str, attributes: dict[str, str], children: list[str]) -> str:
    if not children:
        return _leaf(level, tag, attributes)
    pad = "  " * level
    inside = "\n".join(children)
    return f"{pad}<{tag}{_attributes(attributes)}>\n{inside}\n{pad}</{tag}>"


COUNTS = ("tests", "failures", "errors", "skipped")


def _render(view: View, clean: Clean) -> str:
    totals = dict.fromkeys(COUNTS, 0)
    total_time = 0.0
    suites = []
    for combination in view.combinations:
        suite, counts, seconds = _suite(combination, clean)
        suites.append(suite)
        for key in totals:
            totals[key] += counts[key]
        total_time += float(f"{seconds:.3f}")  # as the suite's own attribute says
    attributes = {
        "name": "repromatrix",
        **{key: str(value) for key, value in totals.items()},
        "time": f"{total_time:.3f}",
    }
    root = _parent(0, "testsuites", attributes, suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + root + "\n"


def _suite(combination: CombinationResult, clean: Clean) -> tuple[str, dict[str, int], float]:
    facts = {
        "verdict": combination.verdict or "",
        "verdict_reason": combination.verdict_reason,
        "tier": combination.tier,
        "device": combination.device,
        "python": combination.environment.python,
        "repro": case_repro(combination),
    }
    for package in combination.requested:
        facts[f"requested.{package}"] = combination.requested[package]
        if package in combination.resolved:
            facts[f"resolved.{package}"] = combination.resolved[package]
    for package, record in combination.environment.sources.items():
        tree = SourceTree.of_record(package, record)  # built from a folder: which tree
        facts[f"source.{package}"] = tree.label()
        facts[f"source.{package}.commit"] = tree.commit or ""
        facts[f"source.{package}.dirty"] = "true" if tree.dirty else "false"
        facts[f"source.{package}.digest"] = tree.digest
    properties = [_property(3, name, clean(value)) for name, value in facts.items() if value]
    children = [_parent(2, "properties", {}, properties)]

    counts = dict.fromkeys(COUNTS, 0)
    seconds = 0.0
    if combination.status == CombinationStatus.INSTALL_ERROR or not combination.cases:
        message = clean(first_line(combination.message or "no case ran", 1000))
        error = ERROR_TYPES.get(combination.status)
        if error is not None:
            inner = _leaf(
                3, "error", {"message": message, "type": error}, clean(combination.message)
            )
            counts["errors"] += 1
        else:
            inner = _leaf(3, "skipped", {"message": message, "type": "pytest.skip"})
            counts["skipped"] += 1
        where = {"classname": "repromatrix", "name": "environment", "time": "0.000"}
        children.append(_parent(2, "testcase", where, [inner]))
        counts["tests"] += 1
    for result in combination.cases:
        children.append(_testcase(combination, result, counts, clean))
        counts["tests"] += 1
        seconds += result.seconds
    attributes = {"name": combination.id}
    if combination.started:
        attributes["timestamp"] = combination.started
    attributes.update({key: str(value) for key, value in counts.items()})
    attributes["time"] = f"{seconds:.3f}"
    return _parent(1, "testsuite", attributes, children), counts, seconds


def _names(case_id: str) -> tuple[str, str]:
    """pytest's classname / name from a node id: 'pkg/test_a.py::Cls::test_b[x]'
    -> ('pkg.test_a.Cls', 'test_b[x]')."""
    parts = case_id.split("::")
    module = parts[0].removesuffix(".py").replace("/", ".")
    if len(parts) == 1:
        return "", module
    return ".".join([module, *parts[1:-1]]), parts[-1]


def _testcase(combination: CombinationResult, case: CaseResult, counts: dict, clean: Clean) -> str:
    classname, name = _names(case.id)
    if case.status == CaseStatus.PASSED:  # most of them: _leaf's element, written at once
        names = f'classname="{_attribute(classname)}" name="{_attribute(name)}"'
        return f'    <testcase {names} time="{case.seconds:.3f}" />'
    where = {"classname": classname, "name": name, "time": f"{case.seconds:.3f}"}
    children = []
    properties = {
        "status": case.status,
        "outcome": case.outcome,
        "repro": case_repro(combination, case.id),
        "change": case.change or "",
        "attempts": ", ".join(case.attempts) if len(case.attempts) > 1 else "",
        "known_issue": (case.known_issue or {}).get("link", ""),
    }
    if case.transitions:
        properties["transition"] = case.transitions[0].text
        properties["bisect"] = case.transitions[0].bisect
    held = [_property(4, key, clean(value)) for key, value in properties.items() if value]
    children.append(_parent(3, "properties", {}, held))

    message = first_line(case.message, 1000)
    detail = "\n\n".join(t for t in (case.message, case.traceback) if t.strip())
    kind = case.error_type or case.outcome
    if case.status in FAILURE_OUTCOMES:
        prefix = "REGRESSED: " if is_regression(case) else ""
        if case.status != "failed":
            prefix += f"{case.status}: "
        failure = {"message": clean(prefix + message), "type": clean(kind)}
        children.append(_leaf(3, "failure", failure, clean(detail)))
        counts["failures"] += 1
    elif case.status == "error":
        prefix = "REGRESSED: " if is_regression(case) else ""
        error = {"message": clean(prefix + message), "type": clean(kind)}
        children.append(_leaf(3, "error", error, clean(detail)))
        counts["errors"] += 1
    elif case.status == "skipped":
        skipped = {"message": clean(message), "type": "pytest.skip"}
        children.append(_leaf(3, "skipped", skipped))
        counts["skipped"] += 1
    elif case.status == "known-broken":
        issue = case.known_issue or {}
        note = f"known-broken: {issue.get('note') or message} ({issue.get('link', '')})"
        xfail = {"message": clean(note), "type": "pytest.xfail"}
        children.append(_leaf(3, "skipped", xfail, clean(detail)))
        counts["skipped"] += 1
    elif case.status in ("flaky", "possibly-fixed"):
        children.append(_leaf(3, "system-out", {}, clean(f"{case.status}: {case.message}")))
    return _parent(2, "testcase", where, children)
