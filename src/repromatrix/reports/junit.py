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
import xml.etree.ElementTree as ET
from collections.abc import Callable

from repromatrix.environment.source_tree import SourceTree
from repromatrix.outcomes import FAILURES, CaseStatus, CombinationStatus
from repromatrix.redact import escaped_redactor, redactor
from repromatrix.reports.view import View, first_line
from repromatrix.results import CaseResult, CombinationResult
from repromatrix.verdicts import case_repro, is_regression

# Characters XML 1.0 cannot carry at all (pytest's bin_xml_escape drops them too).
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# <failure>; an error in setup, teardown or collection is an <error> of its own.
FAILURE_OUTCOMES = FAILURES - {CaseStatus.ERROR}
# A combination without cases that is an <error> (else it is <skipped>): its type.
ERROR_TYPES = {CombinationStatus.INSTALL_ERROR: "InstallError", CombinationStatus.LOST: "LostJob"}


Clean = Callable[[str | None], str]


def _cleaner(scrub: Callable[[str], str] | None) -> Clean:
    """Only characters XML can carry; redacted first with ``scrub``."""
    if scrub is None:
        return lambda text: _ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", text or "")
    return lambda text: _ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", scrub(text or ""))


def _xml_spellings(value: str) -> str:
    """A string as ElementTree writes it in an attribute (in text it escapes less: the
    raw form and this one cover both), after the characters XML cannot carry went."""
    value = _ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", value)
    for raw, spelt in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;")):
        value = value.replace(raw, spelt)
    return value.replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#09;")


def _text_spelling(value: str) -> str:
    value = _ILLEGAL_XML.sub("\N{REPLACEMENT CHARACTER}", value)
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(view: View) -> str:
    """Written once without masking, value by value: again with it only where the text
    may hold a secret (thousands of values in a large matrix)."""
    found = escaped_redactor((_xml_spellings, _text_spelling))
    text = _render(view, _cleaner(None))
    if found.may_hold_secrets(text):
        text = _render(view, _cleaner(redactor()))
    return text


def _render(view: View, clean: Clean) -> str:
    root = ET.Element("testsuites", name="repromatrix")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for combination in view.combinations:
        suite = _suite(combination, clean)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
        total_time += float(suite.get("time", "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(combination: CombinationResult, clean: Clean) -> ET.Element:
    suite = ET.Element("testsuite", name=combination.id)
    if combination.started:
        suite.set("timestamp", combination.started)
    properties = ET.SubElement(suite, "properties")
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
    for name, value in facts.items():
        if value:
            ET.SubElement(properties, "property", name=name, value=clean(value))

    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seconds = 0.0
    if combination.status == CombinationStatus.INSTALL_ERROR or not combination.cases:
        case = ET.SubElement(
            suite, "testcase", classname="repromatrix", name="environment", time="0.000"
        )
        message = clean(first_line(combination.message or "no case ran", 1000))
        error = ERROR_TYPES.get(combination.status)
        if error is not None:
            element = ET.SubElement(case, "error", message=message, type=error)
            element.text = clean(combination.message)
            counts["errors"] += 1
        else:
            ET.SubElement(case, "skipped", message=message, type="pytest.skip")
            counts["skipped"] += 1
        counts["tests"] += 1
    for result in combination.cases:
        suite.append(_testcase(combination, result, counts, clean))
        counts["tests"] += 1
        seconds += result.seconds
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{seconds:.3f}")
    return suite


def _names(case_id: str) -> tuple[str, str]:
    """pytest's classname / name from a node id: 'pkg/test_a.py::Cls::test_b[x]'
    -> ('pkg.test_a.Cls', 'test_b[x]')."""
    parts = case_id.split("::")
    module = parts[0].removesuffix(".py").replace("/", ".")
    if len(parts) == 1:
        return "", module
    return ".".join([module, *parts[1:-1]]), parts[-1]


def _testcase(
    combination: CombinationResult, case: CaseResult, counts: dict, clean: Clean
) -> ET.Element:
    classname, name = _names(case.id)
    element = ET.Element("testcase", classname=classname, name=name, time=f"{case.seconds:.3f}")
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
    if case.status != "passed":
        holder = ET.SubElement(element, "properties")
        for key, value in properties.items():
            if value:
                ET.SubElement(holder, "property", name=key, value=clean(value))

    message = first_line(case.message, 1000)
    detail = "\n\n".join(t for t in (case.message, case.traceback) if t.strip())
    kind = case.error_type or case.outcome
    if case.status in FAILURE_OUTCOMES:
        prefix = "REGRESSED: " if is_regression(case) else ""
        if case.status != "failed":
            prefix += f"{case.status}: "
        failure = ET.SubElement(
            element, "failure", message=clean(prefix + message), type=clean(kind)
        )
        failure.text = clean(detail)
        counts["failures"] += 1
    elif case.status == "error":
        prefix = "REGRESSED: " if is_regression(case) else ""
        error = ET.SubElement(element, "error", message=clean(prefix + message), type=clean(kind))
        error.text = clean(detail)
        counts["errors"] += 1
    elif case.status == "skipped":
        ET.SubElement(element, "skipped", message=clean(message), type="pytest.skip")
        counts["skipped"] += 1
    elif case.status == "known-broken":
        issue = case.known_issue or {}
        note = f"known-broken: {issue.get('note') or message} ({issue.get('link', '')})"
        skipped = ET.SubElement(element, "skipped", message=clean(note), type="pytest.xfail")
        skipped.text = clean(detail)
        counts["skipped"] += 1
    elif case.status in ("flaky", "possibly-fixed"):
        out = ET.SubElement(element, "system-out")
        out.text = clean(f"{case.status}: {case.message}")
    return element
