"""The commits of one package's repository between two refs, as bisect candidates.

``bisect --git URL --good REF --bad REF`` searches the first-parent commits from
one ref to the other (a merge is one step: its PR as a whole, as in
cargo-bisect-rustc), and installs ``PACKAGE @ git+URL@SHA`` at each step: uv
builds it, and the environment's identity holds the sha, so a commit tested
twice is built once.

The repository is cloned once (bare) into ``<store>/_git/<hash of URL>`` and
fetched again on later runs; ``file://`` repositories work offline. A release
tag is found by version: ``v1.2.3`` or ``1.2.3``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from repromatrix import procs
from repromatrix.errors import UserError
from repromatrix.redact import redact_text

GIT_TIMEOUT = 600.0
_PR = re.compile(r"\(#(\d+)\)\s*$|Merge pull request #(\d+)")


@dataclass(frozen=True, order=True)
class Commit:
    """One candidate commit; shown as its short sha."""

    index: int  # position in the first-parent history between the refs (oldest 0)
    sha: str
    subject: str = ""
    date: str = ""  # committer date, ISO 8601: the day of the stack with --as-of PACKAGE

    @property
    def pr(self) -> str | None:
        """The pull request the subject names: "... (#123)" or "Merge pull request #123"."""
        match = _PR.search(self.subject)
        return (match.group(1) or match.group(2)) if match else None

    def __str__(self) -> str:
        return self.sha[:12]

    def describe(self) -> dict[str, object]:
        return {"sha": self.sha, "subject": self.subject, "pr": self.pr, "date": self.date}


@dataclass
class History:
    url: str
    good_ref: str
    bad_ref: str
    commits: list[Commit]  # oldest first, both ends included
    good: Commit
    bad: Commit


def git(args: list[str], *, cwd: Path | None = None, what: str = "git") -> str:
    done = procs.run(["git", *args], cwd=cwd, timeout=GIT_TIMEOUT)
    if done.returncode != 0 or done.timed_out:
        lines = done.stderr.strip().splitlines()
        # git's reason is its fatal: line; what follows it is advice ("and the repository exists.")
        fatal = [line for line in lines if line.startswith("fatal: ")]
        said = redact_text((fatal or lines or [""])[0 if fatal else -1])
        raise UserError(f"{what}: {said or 'git failed'}")
    return done.stdout


def mirror(url: str, store: Path) -> Path:
    """A bare clone of ``url`` kept under ``store``, fetched up to date."""
    folder = store / "_git" / hashlib.sha256(url.encode()).hexdigest()[:16]
    shown = redact_text(url)
    if (folder / "HEAD").exists():
        git(
            ["fetch", "--quiet", "--force", "--tags", "origin", "+refs/heads/*:refs/heads/*"],
            cwd=folder,
            what=f"--git {shown}",
        )
    else:
        folder.parent.mkdir(parents=True, exist_ok=True)
        git(["clone", "--quiet", "--bare", url, str(folder)], what=f"--git {shown}")
    return folder


def resolve_ref(repo: Path, ref: str, option: str) -> str:
    """The full sha of a tag, branch or (short) sha."""
    for candidate in (ref, f"refs/tags/{ref}", f"refs/heads/{ref}"):
        done = procs.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
            cwd=repo,
            timeout=60,
        )
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    raise UserError(f"{option} {ref}: no such tag, branch or commit in the repository")


def release_tag(repo: Path, version: str) -> str | None:
    """The tag of a release: v1.2.3 or 1.2.3."""
    for tag in (f"v{version}", version):
        done = procs.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"],
            cwd=repo,
            timeout=60,
        )
        if done.returncode == 0:
            return tag
    return None


def history(url: str, good_ref: str, bad_ref: str, store: Path) -> History:
    """The first-parent commits from one ref to the other, oldest first. UserError
    when the refs are unknown, the same, or neither is an ancestor of the other."""
    repo = mirror(url, store)
    good = resolve_ref(repo, good_ref, "--good")
    bad = resolve_ref(repo, bad_ref, "--bad")
    if good == bad:
        raise UserError(f"--good {good_ref} and --bad {bad_ref} are the same commit")
    old, new = _ordered(repo, good, bad, good_ref, bad_ref)
    listed = git(
        ["log", "--first-parent", "--format=%H%x00%cI%x00%s", f"{old}..{new}"],
        cwd=repo,
        what="git log",
    )
    entries = [line.split("\x00", 2) for line in listed.splitlines() if line]
    entries.reverse()
    if not entries or entries[-1][0] != new:
        raise UserError(f"{bad_ref}: not on the first-parent history from {good_ref}")
    first = git(["log", "-1", "--format=%H%x00%cI%x00%s", old], cwd=repo).strip().split("\x00", 2)
    rows = [first, *entries]
    commits = [Commit(i, sha, subject, when) for i, (sha, when, subject) in enumerate(rows)]
    by_sha = {c.sha: c for c in commits}
    return History(url, good_ref, bad_ref, commits, by_sha[good], by_sha[bad])


def _ordered(repo: Path, good: str, bad: str, good_ref: str, bad_ref: str) -> tuple[str, str]:
    """(older, newer): whichever is the ancestor of the other."""
    for old, new in ((good, bad), (bad, good)):
        done = procs.run(["git", "merge-base", "--is-ancestor", old, new], cwd=repo, timeout=60)
        if done.returncode == 0:
            return old, new
    raise UserError(f"--good {good_ref} and --bad {bad_ref}: neither is an ancestor of the other")


def requirement_url(url: str, commit: Commit) -> str:
    return f"git+{url}@{commit.sha}"
