"""The reports, rendered from synthetic stored results: contents, limits, secrets,
delivery (step summary, gh), and re-rendering without running anything."""

from __future__ import annotations

import json
import os
import re
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.reportdata import (
    CASE_A,
    CASE_B,
    case,
    combination,
    demo_results,
    own_package,
    own_source,
    results,
    versions,
)

from repromatrix import cli
from repromatrix.errors import UserError
from repromatrix.reports import Reporting, markdown, rerender, step_summary
from repromatrix.results import (
    CaseResult,
    CombinationResult,
    ResultsDir,
    load_results,
    write_json_atomic,
)
from repromatrix.verdicts.knownissues import Registry, RegistryLocation, parse_registry

LINK = "https://github.com/huggingface/transformers/issues/40000"
REGISTRY = parse_registry(
    [{"case": CASE_B, "when": {"transformers": ">=4.56"}, "link": LINK, "note": "known"}],
    "cases/known_issues.yaml",
)


def render(tmp_path: Path, stored=None, registry=REGISTRY, **kwargs) -> tuple[Path, list[str], int]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    said: list[str] = []
    _judged, code = Reporting(registry=registry, **kwargs).render(
        stored or demo_results(), out, said.append
    )
    return out, said, code


# --------------------------------------------------------------------------- results.json


def test_results_json_gains_verdict_fields_and_keeps_unknown_ones(tmp_path):
    stored = demo_results()
    stored.combinations[0].cases[0].custom_field = "kept"  # a field a newer writer added
    out, said, code = render(tmp_path, stored)
    data = json.loads((out / "results.json").read_text())
    by_id = {c["id"]: c for c in data["combinations"]}
    assert code == 1
    assert by_id["tf4.53.0"]["verdict"] == "REGRESSED"
    assert by_id["tf4.56.2"]["cases"][1]["status"] == "known-broken"
    assert by_id["tf4.56.2"]["cases"][1]["known_issue"]["link"] == LINK
    assert by_id["tf4.56.2"]["cases"][1]["outcome"] == "failed"
    assert by_id["tf4.52.4"]["cases"][0]["custom_field"] == "kept"
    assert data["summary"]["verdicts"] == {
        "REGRESSED": 2,
        "INSTALL-ERROR": 1,
        "PASS": 2,
        "SKIPPED": 1,
    }
    assert data["summary"]["exit_code"] == 1
    assert [(r["combination"], r["source"]) for r in data["regressions"]] == [
        ("tf4.53.0", "neighbour"),
        ("tf4.56.2", "neighbour"),
    ]
    assert data["schema"] == 1
    assert load_results(out).find("tf4.53.0").verdict == "REGRESSED"  # reads back
    assert any("bisect: nox -s bisect -- --package transformers" in line for line in said)


# --------------------------------------------------------------------------- junit.xml


def test_junit_has_one_suite_per_combination_and_parses_back(tmp_path):
    stored = demo_results()
    stored.combinations[1].cases[0].message = "bad byte \x1b[31m and \x00 in a message"
    out, _, _ = render(tmp_path, stored)
    root = ET.parse(out / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == [c.id for c in stored.combinations]

    regressed = suites["tf4.53.0"]
    failure = regressed.find("testcase[@name='test_lora_gets_gradients[reentrant]']/failure")
    assert failure.get("message").startswith("REGRESSED: bad byte")
    assert "RuntimeError" in failure.text
    assert regressed.find("testcase").get("classname") == "test_lora"
    props = {p.get("name"): p.get("value") for p in regressed.find("properties")}
    assert props["verdict"] == "REGRESSED" and props["resolved.transformers"] == "4.53.0"

    known = suites["tf4.56.2"].find("testcase[@name='test_fresh_forward_per_backward_works']")
    assert known.find("skipped").get("type") == "pytest.xfail"
    assert LINK in known.find("skipped").get("message")
    install = suites["tf-main"].find("testcase/error")
    assert install.get("type") == "InstallError"
    assert suites["gpu"].find("testcase/skipped").get("message").startswith("requires a CUDA")
    for suite in suites.values():  # the counts agree with the elements
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites.values())


# --------------------------------------------------------------------------- summary.md


def test_summary_has_table_environment_and_a_details_block_per_failure(tmp_path):
    out, _, _ = render(tmp_path)
    text = (out / "summary.md").read_text()
    # The main table: one row per case that does not pass everywhere, the (six, so few)
    # combinations as columns, their verdicts and versions on top.
    main = text[text.index("### Cases not passing everywhere") : text.index("### Failures")]
    assert "| case | `tf4.52.4` | `tf4.53.0` | `tf4.56.2` | `flaky` | `tf-main` | `gpu` |" in main
    assert "| *transformers* | 4.52.4 | 4.53.0 | 4.56.2 | 4.52.4 | *5.0.0.dev0* | *-* |" in main
    assert f"| `{CASE_A}` | ✅ | 🔻 | 🔻 | 🔁 | — | — |" in main
    assert f"| `{CASE_B}` | ✅ | ✅ | 🐛 | — | — | — |" in main
    assert "**OS** Debian GNU/Linux 12 (bookworm) (x86_64)" in text
    assert "**torch** 2.13.0+cpu (CPU build)" in text
    assert "Could not collect" not in text.split("<details>")[0]  # not in the headline
    # collect_env, 2 regressed, install, 1 known issue, the full grid, resolved versions
    assert text.count("<details><summary>") == 1 + 2 + 1 + 1 + 1 + 1
    assert "Repro: `nox -s tf4.53.0 -- 'test_lora.py::test_lora_gets_gradients[reentrant]'`" in text
    assert "regressed between transformers 4.52.4 and 4.53.0 (torch 2.13.0, peft 0.17.1)" in text
    assert "🔁" in text and "Legend:" in text
    # The full grid is there, collapsed, after the verdicts.
    grid = text[text.index("<details><summary>Full grid: 6 combinations × 2 cases") :]
    assert "| `tf4.53.0` | 🔻 REGRESSED | 2.13.0 | **4.53.0** | 0.17.1 |" in grid
    assert f"1. `{CASE_A}`" in grid
    assert text.index("### Cases not passing everywhere") < text.index("Full grid")


def test_a_known_broken_failure_gets_its_error_line_and_a_repro_collapsed(tmp_path):
    out, _, _ = render(tmp_path)
    text = (out / "summary.md").read_text()
    block = text[text.index("<details><summary>🐛") :]
    block = block[: block.index("</details>")]
    summary, body = block.split("</summary>")
    assert f"<code>{CASE_B}</code>" in summary
    assert f'<a href="{LINK}">transformers#40000</a> known — in 1 combination' in summary
    assert "Error in `tf4.56.2`: `RuntimeError: Trying to backward through the graph`" in body
    assert f"Repro: `nox -s tf4.56.2 -- {CASE_B}`" in body


def test_summary_of_many_combinations_lists_combinations_as_rows_grouped(tmp_path):
    """Beyond a few combinations they are rows: neighbours with the same cases failing
    share one row, their versions as a range; the cases are named, not numbered."""
    ladder = [
        combination(
            f"tf4.{minor}.0",
            versions(f"4.{minor}.0"),
            [
                case(CASE_A, "failed" if minor >= 55 else "passed"),
                case(CASE_B, "passed"),
            ],
        )
        for minor in range(50, 62)
    ]
    out, _, _ = render(tmp_path, results(*ladder), registry=Registry())
    text = (out / "summary.md").read_text()
    main = text[text.index("### Cases not passing everywhere") : text.index("### Failures")]
    assert f"| `{CASE_A}` | 🔻 7 regressed · ✅ 5 passed |" in main
    assert CASE_B not in main  # passes everywhere: not in the main table
    assert "| combinations | verdict | transformers | not passing |" in main
    assert (
        "| `tf4.55.0` … `tf4.61.0` (7) | 🔻 REGRESSED | 4.55.0 – 4.61.0 | "
        "🔻 `test_lora_gets_gradients[reentrant]` |"
    ) in main
    assert "5 more combinations pass every case." in main
    assert max(len(line) for line in text.splitlines()) < 400
    # Only transformers moves (a sweep): the full grid marks the row where the outcome
    # changes instead of bolding the version on every row.
    grid = text[text.index("<details><summary>Full grid") :]
    assert "| ▲ `tf4.55.0` |" in grid and grid.count("▲ `") == 1
    assert "**4." not in grid


def test_resolved_versions_are_one_row_per_distribution(tmp_path):
    stored = demo_results()
    stored.combinations[1].resolved["aiohttp"] = "3.14.5"  # only in tf4.53.0
    out, _, _ = render(tmp_path, stored)
    text = (out / "summary.md").read_text()
    block = text[text.index("<details><summary>Resolved versions") :]
    block = block[: block.index("</details>")]
    assert "Same in every combination: numpy 2.4.6" in block
    assert "| aiohttp | not installed in 3 combinations · 3.14.5 in `tf4.53.0` |" in block


def _huge(combinations: int, cases: int) -> list[CombinationResult]:
    out = []
    for i in range(combinations):
        version = f"4.{40 + i // 50}.{i % 50}"
        out.append(
            combination(
                f"c{i:05d}",
                versions(version, peft=f"0.{i % 7}.0"),
                [
                    case(
                        f"test_mod{j}.py::test_case_{j}[param{j}]",
                        "failed" if (i * 7 + j) % 3 == 0 else "passed",
                        "E" * 3000,
                    )
                    for j in range(cases)
                ],
            )
        )
    return out


@pytest.mark.heavy  # 12-15 s each: the unit loop leaves the scale check to tests-fast
@pytest.mark.parametrize(("combinations", "cases"), [(1000, 12), (200, 60)])
def test_summary_never_exceeds_65536_characters_and_cuts_deterministically(
    tmp_path, combinations, cases
):
    stored = results(*_huge(combinations, cases))
    for combo in stored.combinations:
        for one in combo.cases:
            one.traceback = "\n".join(f"frame {k} " + "x" * 200 for k in range(80))
    from repromatrix.reports.view import View
    from repromatrix.verdicts import judge

    judge(stored)
    first = markdown.render(View.of(stored, tmp_path))
    second = markdown.render(View.of(stored, tmp_path))
    assert len(first) <= markdown.MAX_CHARS
    assert first == second
    assert "more combinations" in first and "not shown here" in first
    assert "more failures not shown here" in first
    assert "### Environment" in first and "Full report:" in first
    assert first.count("<details>") == first.count("</details>")  # nothing cut mid-block


def test_summary_of_a_small_matrix_is_not_cut(tmp_path):
    out, _, _ = render(tmp_path)
    text = (out / "summary.md").read_text()
    assert "not shown here" not in text and "cut at" not in text


# --------------------------------------------------------------------------- index.html


def test_html_is_self_contained_and_data_cannot_escape_its_script(tmp_path):
    stored = demo_results()
    stored.combinations[1].cases[0].message = "</script><script>alert(1)</script> & <b>"
    out, _, _ = render(tmp_path, stored)
    page = (out / "index.html").read_text()
    assert "<link" not in page and " src=" not in page  # no external stylesheet or script
    assert not re.search(r"url\(", page)
    assert "<script>alert(1)" not in page
    assert page.count("<script") == 2  # the data and the code, both inline
    cells = re.findall(r'<td class="c s-([a-z-]+)"', page)
    assert len(cells) == 6 * 2
    assert cells.count("regressed") == 2 and cells.count("known-broken") == 1
    # a version that changed from the row above is marked
    assert re.search(r'<td class="ver chg"[^>]*>4\.53\.0</td>', page)


def test_html_groups_case_columns_by_file_and_marks_a_sweeps_transitions(tmp_path):
    other = "test_lora.py::test_other[default]"
    ladder = [
        combination(
            f"tf{version}",
            versions(version),
            [case(CASE_A, outcome), case(CASE_B, "passed"), case(other, "passed")],
        )
        for version, outcome in [("4.50.0", "passed"), ("4.52.0", "failed"), ("4.53.0", "failed")]
    ]
    out, _, _ = render(tmp_path, results(*ladder), registry=Registry())
    page = (out / "index.html").read_text()
    # test_lora.py's two cases side by side under one header, then the other file.
    files = re.findall(r'<th class="file" colspan="(\d+)" data-cases="([\d,]+)"', page)
    assert files == [("2", "0,2"), ("1", "1")]
    assert re.findall(r'<th class="case" data-case="(\d)"', page) == ["0", "2", "1"]
    assert '<b class="prm">[reentrant]</b>' in page and '<b class="prm">[default]</b>' in page
    assert re.search(r'<th class="case" data-case="1" data-quiet', page)  # passes everywhere
    # Only transformers moves: the row where the outcome changes is marked, no version is.
    marked = re.findall(r'<tr data-r="(\d)"[^>]*class="transition"', page)
    assert marked == ["1"]
    assert "ver chg" not in page


# --------------------------------------------------------------------------- secrets


CANARY_TOKEN = "hf_CanaryCanaryCanary0123456789"
CANARY_ENV_VALUE = "canary-secret-value-4242"
CANARY_PASSWORD = "canarypass77"


def test_planted_secrets_reach_no_output(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", CANARY_ENV_VALUE)
    monkeypatch.setenv("HF_TOKEN", CANARY_TOKEN)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step-summary.md"))
    stored = demo_results()
    victim = stored.combinations[1].cases[0]
    victim.message = f"failed with token {CANARY_TOKEN} and key {CANARY_ENV_VALUE}"
    victim.traceback = (
        f"pip install --index-url https://alice:{CANARY_PASSWORD}@pypi.example/simple"
    )
    stored.combinations[4].message = f"resolve: https://bob:{CANARY_PASSWORD}@idx.example failed"
    stored.combinations[0].env = {"WANDB_API_KEY": CANARY_ENV_VALUE}
    stored.run.command = f"repromatrix run --token {CANARY_TOKEN}"
    stored.run.host["collect_env"]["text"] += f"\nHF_TOKEN={CANARY_TOKEN}\n"
    ghp = "ghp_" + "C" * 36
    stored.combinations[2].cases[0].message = f"github said {ghp} and github_pat_{'D' * 30}"

    out, said, _ = render(tmp_path, stored)
    outputs = [*out.rglob("*"), tmp_path / "step-summary.md"]
    assert {p.name for p in outputs} >= {"results.json", "junit.xml", "summary.md", "index.html"}
    for path in outputs:
        text = path.read_text()
        for canary in (CANARY_TOKEN, CANARY_ENV_VALUE, CANARY_PASSWORD, ghp, "github_pat_DDD"):
            assert canary not in text, f"{canary} leaked into {path.name}"
    assert "***" in (out / "summary.md").read_text()
    assert "***" in (out / "index.html").read_text()
    assert not any(CANARY_TOKEN in line for line in said)


# --------------------------------------------------------------------------- delivery


def test_step_summary_is_appended_when_github_step_summary_is_set(tmp_path, monkeypatch):
    target = tmp_path / "step.md"
    target.write_text("## an earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    out, said, _ = render(tmp_path)
    summary = (out / "summary.md").read_text()
    assert target.read_text() == "## an earlier step\n" + summary
    assert "summary appended to $GITHUB_STEP_SUMMARY" in said


def test_no_step_summary_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert step_summary.append_step_summary("x") is None


def _fake_gh(folder: Path, *, authenticated: bool, post_status: int = 0) -> Path:
    folder.mkdir(exist_ok=True)
    log = folder / "gh.log"
    script = folder / "gh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{log}"\n'
        'if [ "$1" = auth ]; then exit ' + ("0" if authenticated else "1") + "; fi\n"
        'if [ "$1" = issue ]; then cp "$5" "' + str(folder / "posted.md") + '"; '
        "echo https://github.com/o/r/issues/7#issuecomment-1; exit " + str(post_status) + "; fi\n"
        "exit 3\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return log


def test_issue_without_gh_prints_the_exact_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    _, said, _ = render(tmp_path, issue=7)
    assert "gh is not installed; to post the summary, run:" in said
    assert "  gh issue comment 7 --body-file out/summary.md" in said


def test_issue_with_gh_logged_out_prints_the_exact_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = _fake_gh(tmp_path / "bin", authenticated=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    _, said, _ = render(tmp_path, issue=7)
    assert "  gh issue comment 7 --body-file out/summary.md" in said
    assert log.read_text().splitlines() == ["auth status"]  # asked, posted nothing


def test_issue_with_gh_logged_in_posts_the_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = _fake_gh(tmp_path / "bin", authenticated=True)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out, said, _ = render(tmp_path, issue=7)
    assert log.read_text().splitlines() == [
        "auth status",
        "issue comment 7 --body-file out/summary.md",
    ]
    assert (tmp_path / "bin" / "posted.md").read_text() == (out / "summary.md").read_text()
    assert "posted the summary: https://github.com/o/r/issues/7#issuecomment-1" in said


def test_gh_failing_to_post_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _fake_gh(tmp_path / "bin", authenticated=True, post_status=1)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(UserError, match=r"gh issue comment 7 --body-file out/summary.md failed"):
        render(tmp_path, issue=7)
    assert (tmp_path / "out" / "summary.md").exists()  # the reports are written first


# --------------------------------------------------------------------------- re-rendering


@pytest.fixture
def nothing_runs(monkeypatch):
    """Any attempt to build an environment or run a case fails the test."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("re-rendering must not run anything")

    monkeypatch.setattr("repromatrix.environment.store.EnvStore.build", refuse)
    monkeypatch.setattr("repromatrix.execution.runner.CaseRunner.run", refuse)
    monkeypatch.setattr("repromatrix.procs.run", refuse)


def _stored_run(tmp_path: Path) -> Path:
    """A results folder as a run leaves it: results.json without verdicts."""
    folder = tmp_path / "latest"
    write_json_atomic(folder / "results.json", demo_results().dump())
    return folder


def test_report_rerenders_from_stored_results_without_running(
    tmp_path, monkeypatch, nothing_runs, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    folder = _stored_run(tmp_path)
    assert cli.main(["report", "--results", str(folder)]) == 1
    assert {p.name for p in folder.iterdir()} == {
        "results.json",
        "junit.xml",
        "summary.md",
        "index.html",
    }
    first = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert cli.main(["report", "--results", str(folder)]) == 1
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == first  # same input, same output
    assert "verdicts: 2 REGRESSED, 1 INSTALL-ERROR, 1 SKIPPED, 2 PASS (exit status 1)" in (
        capsys.readouterr().out
    )


def test_rerendering_with_a_newer_registry_changes_the_verdicts(
    tmp_path, monkeypatch, nothing_runs
):
    monkeypatch.chdir(tmp_path)
    folder = _stored_run(tmp_path)
    registry = tmp_path / "known.yaml"
    registry.write_text(
        f"- case: '{CASE_A}'\n  when: {{transformers: '>=4.53'}}\n  link: {LINK}\n"
        f"- case: '{CASE_B}'\n  when: {{transformers: '>=4.56'}}\n  link: {LINK}\n"
    )
    rerender(folder, known_issues=RegistryLocation(registry, required=True), say=lambda _: None)
    judged = load_results(folder)
    assert judged.find("tf4.53.0").verdict == "KNOWN-BROKEN"
    assert judged.find("tf4.53.0").cases[0].status == "known-broken"


def test_rerendering_against_a_baseline(tmp_path, monkeypatch, nothing_runs):
    monkeypatch.chdir(tmp_path)
    folder = _stored_run(tmp_path)
    before = demo_results()
    before.run.id = "yesterday"
    before.find("tf4.56.2").cases[1] = case(CASE_B, "passed")  # passed yesterday
    write_json_atomic(tmp_path / "prev" / "results.json", before.dump())
    code = rerender(folder, baseline=tmp_path / "prev", say=lambda _: None)
    judged = load_results(folder)
    regressed = judged.find("tf4.56.2").cases[1]
    assert (regressed.change, regressed.baseline_status) == ("regressed", "passed")
    assert judged.summary.baseline["run"] == "yesterday"
    assert judged.summary.baseline["file"] == "prev"
    assert code == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--results", "nowhere"], "nowhere: no results.json here"),
        (["--baseline", "missing.json"], "missing.json: no such results file"),
        (["--known-issues", "missing.yaml"], "missing.yaml: no such known-issues file"),
    ],
)
def test_report_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, expected):
    monkeypatch.chdir(tmp_path)
    folder = _stored_run(tmp_path)
    full = (
        ["report", "--results", str(folder), *args] if args[0] != "--results" else ["report", *args]
    )
    assert cli.main(full) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_report_waits_for_no_run_it_refuses_while_one_writes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = _stored_run(tmp_path)
    before = (folder / "results.json").read_text()
    with ResultsDir(folder).claimed("update"):  # a run holding the folder
        assert cli.main(["report", "--results", str(folder)]) == 2
    assert "another run is writing here" in capsys.readouterr().err
    assert (folder / "results.json").read_text() == before


def test_report_reads_an_older_file_without_outcome_fields(tmp_path, monkeypatch, nothing_runs):
    """results.json written before verdicts existed: status only."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "old"
    old = results(
        combination("a", versions("4.52.4"), [CaseResult(id=CASE_A, status="passed")]),
        combination("b", versions("4.53.0"), [CaseResult(id=CASE_A, status="failed")]),
    )
    write_json_atomic(folder / "results.json", old.dump())
    assert rerender(folder, say=lambda _: None) == 1
    assert load_results(folder).find("b").verdict == "REGRESSED"


def test_results_folder_keeps_no_absolute_path_of_this_machine(tmp_path):
    out, _, _ = render(tmp_path)
    home = os.path.expanduser("~")
    for path in out.iterdir():
        text = path.read_text()
        assert str(tmp_path) not in text, path.name
        assert home + "/" not in text, path.name


# --------------------------------------------------------------------------- your source


def test_every_report_names_the_source_a_folder_pin_was_built_from(tmp_path, monkeypatch):
    """summary.md (hence the step summary), index.html and junit.xml say the commit,
    the dirty flag and the short digest, not only "mylib 0.1.0"."""
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    tree = own_source("abc1234" + "0" * 33, True, "e")
    out, _, _ = render(tmp_path, results(own_package("mine", "failed", tree)))
    label = "mylib . abc1234 + edits, sha256:eeeeeeeeeeee"
    summary = (out / "summary.md").read_text()
    assert f"your source `{label}`" in summary.splitlines()[4]  # the header's facts
    assert "mylib 0.1.0 (abc1234 + edits)" in summary  # a failure says which tree
    assert label in step.read_text()
    assert f"your source <code>{label}</code>" in (out / "index.html").read_text()
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["source.mylib"] == label
    assert properties["source.mylib.commit"] == "abc1234" + "0" * 33
    assert properties["source.mylib.dirty"] == "true"
    assert properties["source.mylib.digest"] == "sha256:" + "e" * 64


def test_a_run_without_folder_pins_names_no_source(tmp_path):
    out, _, _ = render(tmp_path)
    assert "your source" not in (out / "summary.md").read_text()
    assert 'name="source.' not in (out / "junit.xml").read_text()
