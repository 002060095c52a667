"""What the watch says after a night (the post job; pure: the state before, the night's
answer, the comments to make and the state after).

- **A flip, confirmed**: the outcome differs from the last decisive night's and held in
  every run (the first and the ``confirm`` reruns, issue/follow.py). One comment:

      repromatrix watch: now passes: fixed in transformers 5.3.0, commit abc1234 (#41234),
      confirmed 3/3 ([run](...))

      - fails: `repromatrix check --script repro.py --pin transformers==5.2.0`
      - passes: `repromatrix check --script repro.py --pin transformers==5.3.0`
      - found by: ...

  Passing on released versions, it proposes closing the issue (or closes it, with
  ``issue: close: true``), and a kept case's registry entry is marked possibly-fixed
  with the release and commit (a ``Mark`` for the keep job).
- **A flip that did not hold** in every run is flaky: said once, with its counts, until
  the next confirmed flip; the last decisive night stays what a flip is measured from.
- **Main ahead**: a package's main branch passes (in every run) where tonight's release
  fails: "passes on transformers main since commit abc1234; not in a release yet", once;
  the flip that a release brings later says that the release carries it.

Everything quoted (versions, a commit's subject, a note) goes in through
github.markdown's builders: the comment is inert and far under GitHub's limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from repromatrix.github.markdown import (
    COMMENT_LIMIT,
    code_span,
    escaped,
    is_plain_url,
    link,
    one_line,
)
from repromatrix.issue.answer import Commit, Named, OnMain, Result
from repromatrix.issue.plan import Job
from repromatrix.issue.state import Observed, State
from repromatrix.issue.watch import flip
from repromatrix.matrix.pins import parse_pin_option, pin_text

FLIP_MARKER = "<!-- repromatrix:flip -->"
REPRO_FILE = "repro.py"  # what the repro lines call the issue's block, saved
_GITHUB = "https://github.com/"


@dataclass(frozen=True)
class Mark:
    """A kept case's registry entry to mark possibly-fixed (the keep job's work)."""

    issue: int
    case: str
    fixed_in: str  # "transformers 5.3.0, commit abc1234 (#41234)"


@dataclass
class Night:
    """What a night of the watch does to an issue: its new state, the comments to
    make, whether to close it, and the registry mark of a kept case."""

    state: State
    comments: list[str] = field(default_factory=list)
    close: bool = False
    mark: Mark | None = None
    said: list[str] = field(default_factory=list)  # one line each, for the log


def night(state: State, job: Job, result: Result, now: str, run_url: str) -> Night:
    """The state after tonight's answer (``state.watch``, ``decisive``, ``flaky``,
    ``ahead``) and what to say; ``state`` is not changed."""
    updated = state.model_copy(deep=True)
    observed = Observed(outcome=result.outcome or "skip", versions=result.versions, at=now)
    done = result.status == "done"
    told = Night(updated)
    sentence = flip(state.decisive, observed) if done else None
    runs = result.runs or [observed.outcome]
    held = sum(1 for outcome in runs if outcome == observed.outcome)
    if sentence and held < len(runs):
        if state.flaky is None:
            updated.flaky = observed
            told.comments.append(_flaky(state.decisive, observed, held, len(runs), run_url))
            told.said.append(f"flaky: {held} of {len(runs)} runs")
    elif sentence:
        updated.decisive = observed
        updated.flaky = None
        told.comments.append(
            flip_comment(job, state, observed, result.named, (held, len(runs)), run_url)
        )
        told.said.append(sentence)
        if observed.outcome == "good":
            told.close = job.close and _released(observed)
            if state.kept is not None and _released(observed):  # a pre-release: not yet
                fixed_in = fixed_in_words(result.named, observed)
                told.mark = Mark(job.issue, state.kept.case, fixed_in)
            updated.ahead = {}  # a release carries it now (said in the flip)
    elif done and observed.outcome in ("good", "bad"):
        updated.decisive = observed
    for on_main in result.main if done else []:
        line = _main(updated, job, on_main, observed, run_url)
        if line:
            told.comments.append(line)
            told.said.append(f"{on_main.package} main passes ahead of a release")
    return told


def flip_comment(
    job: Job,
    state: State,
    now: Observed,
    named: Named | None,
    held: tuple[int, int],
    run_url: str,
) -> str:
    """The comment of a confirmed flip: its line, one repro line per side, how it was
    found, what main said before, and the proposal to close."""
    passes = now.outcome == "good"
    before = state.decisive
    head = "now passes" if passes else "fails again"
    found = named is not None and named.release is not None and named.package is not None
    if found:
        assert named is not None
        where = (
            f"{'fixed' if passes else 'broken'} in {_text(named.package)} {_text(named.release)}"
        )
        if named.commit is not None:
            where += ", commit " + _commit(named.commit, job.repositories.get(named.package or ""))
        sentence = f"{head}: {where}"
    else:
        said = flip(before, now) or head
        sentence = _text(said)
    confirmed = f", confirmed {held[0]}/{held[1]}" if held[1] > 1 else ""
    lines = [FLIP_MARKER, f"repromatrix watch: {sentence}{confirmed} ({link('run', run_url)})", ""]
    old = named.old if named and named.old else (before.versions if before else {})
    new = named.new if named and named.new else now.versions
    old_word, new_word = ("fails", "passes") if passes else ("passes", "fails")
    lines.append(f"- {old_word}: {code_span(repro_line(job, old))}")
    lines.append(f"- {new_word}: {code_span(repro_line(job, new))}")
    if named is not None:
        lines.append(f"- found by: {found_by(named)}")
    carried = [name for name in state.ahead if passes]
    for name in carried:
        said = state.ahead[name][:12]
        lines.append(
            f"- {_text(name)} main: passed since commit {_text(said)} (said before); "
            + (
                f"{_text(named.package)} {_text(named.release)} carries it now"
                if found and named is not None
                else "a release carries it now"
            )
        )
    if passes:
        lines += ["", _closing(job, now)]
    lines.append("")
    lines.append(f"_The repro is the issue's approved block, saved as {code_span(REPRO_FILE)}._")
    body = "\n".join(lines) + "\n"
    return body if len(body) <= COMMENT_LIMIT else body[: COMMENT_LIMIT - 200] + "\n…\n"


def repro_line(job: Job, versions: dict[str, str]) -> str:
    """The command that reproduces one side: the job's pins, the followed packages at
    that side's versions (every line of it parses: tests/issue/test_issue_flips.py)."""
    pins = []
    for text_ in job.pins:
        pin = parse_pin_option(text_)
        version = versions.get(pin.package)
        pins.append(f"{pin.package}=={version}" if version else pin_text(pin))
    for name, version in versions.items():
        if not any(p.startswith(f"{name}==") for p in pins):
            pins.append(f"{name}=={version}")
    args = " ".join(f"--pin {p}" for p in pins)
    return f"repromatrix check --script {REPRO_FILE} {args}"


def found_by(named: Named) -> str:
    """How the flip was named, in words: the hunts, what they searched, the commit."""
    parts = []  # a hunt that searched nothing (its plan refused) is said by its note
    if named.how == "bisect" and named.package and named.releases:
        parts.append(f"a bisect of {_text(named.package)}'s {named.releases} releases")
    elif named.how == "culprit" and named.releases:
        parts.append(f"a culprit hunt (ddmin, then a bisect of {named.releases} releases)")
    if named.commits:
        parts.append(f"then of the {named.commits} commits between the two releases")
    if named.commit is not None and named.commit.subject:
        parts.append(f"the commit: {_text(one_line(named.commit.subject, 200))}")
    if named.note:
        parts.append(_text(named.note))
    parts.append(f"{named.cells} cells, the reruns included")
    return "; ".join(parts)


def fixed_in_words(named: Named | None, now: Observed) -> str:
    """Where a flip to passing was fixed, on one line (the registry's possibly-fixed)."""
    if named is None or named.package is None or named.release is None:
        return ", ".join(f"{n} {v}" for n, v in now.versions.items())
    said = f"{named.package} {named.release}"
    if named.commit is not None:
        said += f", commit {named.commit.sha[:12]}"
        if named.commit.pr:
            said += f" (#{named.commit.pr})"
    return said


def _text(value: object) -> str:
    """Quoted text inside a line of ours (github.markdown.escaped: nothing it holds
    opens Markdown, a mention or a reference; no line start to guard)."""
    return escaped(one_line(str(value)))


def _link(label: str, url: str) -> str:
    """A link to a page of the package's repository the issue config names."""
    return f"[{_text(label)}]({url})" if is_plain_url(url) else _text(label)


def _commit(commit: Commit, repository: str | None) -> str:
    """``abc1234def01 (#41234)``: linked to the package's repository when the issue
    config names it on GitHub (a commit a run job named is never a link otherwise)."""
    sha = commit.sha[:12]
    github = repository if repository and repository.startswith(_GITHUB) else None
    shown = _link(sha, f"{github}/commit/{commit.sha}") if github else _text(sha)
    if commit.pr:
        pr = f"#{commit.pr}"
        shown += " (" + (_link(pr, f"{github}/pull/{commit.pr}") if github else _text(pr)) + ")"
    return shown


def _closing(job: Job, now: Observed) -> str:
    if not _released(now):
        return "_It passes with a pre-release: the issue stays open until a release does._"
    if job.close:
        return "_It holds on released versions: the watch closes the issue (`issue: close: true`)._"
    return (
        "_It holds on released versions: the issue looks fixed, and a maintainer can close "
        "it. Nothing is closed automatically unless .github/repromatrix.yml says "
        "`issue: close: true`._"
    )


def _released(now: Observed) -> bool:
    try:
        return all(not Version(v).is_prerelease for v in now.versions.values())
    except InvalidVersion:
        return False


def _flaky(before: Observed | None, now: Observed, held: int, runs: int, run_url: str) -> str:
    word = "passes" if now.outcome == "good" else "fails"
    versions = ", ".join(f"{n} {v}" for n, v in now.versions.items()) or "today's releases"
    then = ""
    if before is not None:
        other = "fails" if before.outcome == "bad" else "passes"
        then = f"; it {other} on the last decisive night"
    return (
        f"{FLIP_MARKER}\nrepromatrix watch: flaky, not a flip: {word} in {held} of {runs} runs "
        f"with {_text(versions)}{_text(then)} ({link('run', run_url)}). Said once: the watch "
        "says the next flip that holds in every run.\n"
    )


def _main(state: State, job: Job, on_main: OnMain, released: Observed, run_url: str) -> str | None:
    """Main ahead of the releases, said once (``state.ahead`` remembers the commit);
    main failing again forgets it."""
    name = on_main.package
    runs = on_main.runs or ([on_main.outcome] if on_main.outcome else [])
    ahead = (
        on_main.outcome == "good"
        and released.outcome == "bad"
        and all(r == "good" for r in runs)
        and on_main.commit is not None
    )
    if not ahead:
        if on_main.outcome == "bad":
            state.ahead.pop(name, None)
        return None
    if name in state.ahead:
        return None
    assert on_main.commit is not None
    since = on_main.since or on_main.commit
    state.ahead[name] = since.sha
    subject = f"\n- the commit: {_text(one_line(since.subject, 200))}\n" if since.subject else ""
    release = released.versions.get(name)
    fails = f" ({_text(name)} {_text(release)} fails)" if release else ""
    confirmed = f", confirmed {len(runs)}/{len(runs)}" if len(runs) > 1 else ""
    return (
        f"{FLIP_MARKER}\nrepromatrix watch: passes on {_text(name)} main since commit "
        f"{_commit(since, job.repositories.get(name))}; not in a release yet"
        f"{fails}{confirmed} ({link('run', run_url)})\n{subject}"
    )
