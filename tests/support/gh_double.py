#!/usr/bin/env python3
"""A ``gh`` test double: a fake GitHub kept in a folder, for the workflows run under act.

The file is both things a test needs:

- the executable: ``GhDouble.install()`` writes this file as ``<bin>/gh`` (with the
  test's interpreter in its shebang); the act run gets that folder first on PATH and
  ``GH_DOUBLE_STATE`` naming the state folder. Standard library only.
- the test's side: ``GhDouble`` seeds runs and faults and reads back what was asked.

The state folder holds ``state.json`` (issues, labels, runs, dispatches, canned ``gh
api`` answers, faults), ``runs/<id>/<artifact>/`` (the files ``gh run download``
serves) and ``calls.jsonl``: every call, one JSON line each (argv, and the text of a
body it was given by --body-file / -F / stdin), whatever its outcome. A command the
double does not know is recorded, refused on stderr and exits 1, so a workflow that
starts asking for something new fails the test instead of passing silently.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

STATE_VARIABLE = "GH_DOUBLE_STATE"
OWNER_REPO = "owner/repo"  # what issue URLs and `gh api` answers name
NOT_AUTHENTICATED = (
    "To get started with GitHub CLI, please run:  gh auth login\n"
    "Alternatively, populate the GH_TOKEN environment variable with a GitHub API "
    "authentication token."
)
RATE_LIMITED = "HTTP 403: API rate limit exceeded for installation ID 1. (https://api.github.com/)"
FORBIDDEN = "HTTP 403: Resource not accessible by integration (https://api.github.com/)"
EMPTY_STATE: dict[str, Any] = {
    "issues": [],
    "labels": [],
    "runs": [],
    "dispatches": [],
    "api": {},
    "faults": {},
    # Issue comments as the REST API has them (issue commands, issue/bot.py): {id, issue,
    # body, user: {login, type}, author_association, reactions: [content, ...]}.
    "rest_comments": [],
    # Who may do what (the collaborator permission API): {login: role_name}.
    "permissions": {},
}
BOT_USER = {"login": "github-actions[bot]", "type": "Bot"}  # who the workflow token posts as


class GhError(Exception):
    """What the real gh would say on stderr, and its exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------ the test's side


class GhDouble:
    """The fake GitHub of one test: ``install()`` it, then seed and read it."""

    def __init__(self, state: Path) -> None:
        self.state = Path(state)
        self.state.mkdir(parents=True, exist_ok=True)
        if not (self.state / "state.json").exists():
            _save(self.state, json.loads(json.dumps(EMPTY_STATE)))

    def install(self, bin_dir: Path) -> Path:
        """Write the ``gh`` executable into ``bin_dir``; the folder to put first on PATH."""
        bin_dir.mkdir(parents=True, exist_ok=True)
        script = bin_dir / "gh"
        script.write_text(f"#!{sys.executable}\n" + Path(__file__).read_text())
        script.chmod(0o755)
        return bin_dir

    def env(self) -> dict[str, str]:
        return {STATE_VARIABLE: str(self.state)}

    def seed_run(
        self,
        run_id: int,
        artifacts: dict[str, Path],
        *,
        workflow: str = "nightly.yml",
        branch: str = "main",
        conclusion: str = "success",
    ) -> None:
        """A completed run of ``workflow`` whose artifacts ``gh run download`` serves:
        {artifact name: folder whose files it holds}."""
        for name, folder in artifacts.items():
            target = self.state / "runs" / str(run_id) / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(folder, target)
        with _locked(self.state) as state:
            state["runs"] = [r for r in state["runs"] if r["databaseId"] != run_id]
            state["runs"].append(
                {
                    "databaseId": run_id,
                    "workflowName": workflow,
                    "headBranch": branch,
                    "status": "completed",
                    "conclusion": conclusion,
                }
            )

    def set_fault(self, *, unauthenticated=False, rate_limited=False, label_forbidden=False):
        with _locked(self.state) as state:
            state["faults"] = {
                "unauthenticated": unauthenticated,
                "rate_limited": rate_limited,
                "label_forbidden": label_forbidden,
            }

    def set_api_response(self, endpoint: str, response: Any) -> None:
        with _locked(self.state) as state:
            state["api"][endpoint] = response

    def add_issue(
        self, number: int, *, title: str = "", body: str = "", labels: tuple[str, ...] = ()
    ) -> None:
        with _locked(self.state) as state:
            state["issues"].append(
                {
                    "number": number,
                    "title": title,
                    "body": body,
                    "labels": list(labels),
                    "state": "open",
                    "comments": [],
                }
            )
            state["labels"] = sorted(set(state["labels"]) | set(labels))

    def add_comment(
        self, issue: int, body: str, *, login: str = "alice", association: str = "OWNER"
    ) -> int:
        """A comment on ``issue`` (as the REST API lists it): a person's, or the
        workflow's own for the ``github-actions[bot]`` login; its id."""
        user = BOT_USER if login == BOT_USER["login"] else {"login": login, "type": "User"}
        with _locked(self.state) as state:
            return _new_comment(state, issue, body, user, association)["id"]

    def set_permission(self, login: str, role: str) -> None:
        """``login``'s role here (admin, maintain, write, triage, read; none when unset)."""
        with _locked(self.state) as state:
            state.setdefault("permissions", {})[login] = role

    def edit_issue(self, number: int, body: str) -> None:
        """The issue's author edits its body."""
        with _locked(self.state) as state:
            _find_issue(state, str(number))["body"] = body

    def comments(self, issue: int) -> list[dict[str, Any]]:
        """The REST comments of ``issue``, oldest first."""
        return [c for c in _load(self.state).get("rest_comments", []) if c["issue"] == issue]

    def reactions(self) -> list[tuple[int, str]]:
        """(comment id, content) of every reaction, in order."""
        return [
            (c["id"], content)
            for c in _load(self.state).get("rest_comments", [])
            for content in c["reactions"]
        ]

    def calls(self) -> list[dict[str, Any]]:
        path = self.state / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line]

    def calls_to(self, *words: str) -> list[dict[str, Any]]:
        """The calls whose argv starts with ``words`` (e.g. "issue", "create")."""
        return [c for c in self.calls() if c["argv"][: len(words)] == list(words)]

    def issues(self) -> list[dict[str, Any]]:
        return _load(self.state)["issues"]

    def pulls(self) -> list[dict[str, Any]]:
        """The pull requests opened: {title, head, base, body, number, html_url}."""
        return _load(self.state).get("pulls", [])

    def files(self, branch: str) -> dict[str, str]:
        """What was put on ``branch`` through the contents API: {path: text}."""
        return _load(self.state).get("branches", {}).get(branch, {})

    def dispatches(self) -> list[dict[str, Any]]:
        """[{"workflow", "ref", "inputs"}] in the order dispatched."""
        return _load(self.state)["dispatches"]


# ------------------------------------------------------------------ state


def _load(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "state.json").read_text())


def _save(folder: Path, state: dict[str, Any]) -> None:
    tmp = folder / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(folder / "state.json")


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[dict[str, Any]]:
    """The state, read and written back under a lock (matrix jobs run at once)."""
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = _load(folder)
        yield state
        _save(folder, state)


# ------------------------------------------------------------------ the executable


def _options(args: list[str], flags: tuple[str, ...] = ()) -> tuple[list[str], dict[str, list]]:
    """Positional arguments and {option: [values]}; ``flags`` take no value."""
    positional: list[str] = []
    options: dict[str, list] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg != "-":
            name, _, inline = arg.partition("=")
            if inline or name in flags:
                options.setdefault(name, []).append(inline if inline else True)
            elif i + 1 < len(args):
                options.setdefault(name, []).append(args[i + 1])
                i += 1
            else:
                raise GhError(f"flag needs an argument: {name}")
        else:
            positional.append(arg)
        i += 1
    return positional, options


def _one(options: dict[str, list], *names: str, default: Any = None) -> Any:
    for name in names:
        if name in options:
            return options[name][-1]
    return default


def _body(options: dict[str, list], *names: str) -> str | None:
    """The text given by --body-file FILE (``-`` is stdin) or --body TEXT."""
    path = _one(options, *names)
    if path == "-":
        return sys.stdin.read()
    if path is not None:
        return Path(path).read_text()
    return _one(options, "--body", "-b")


def _issue_url(number: int) -> str:
    return f"https://github.com/{OWNER_REPO}/issues/{number}"


def _issue_json(issue: dict[str, Any], fields: str | None) -> dict[str, Any]:
    shaped = {
        "number": issue["number"],
        "title": issue["title"],
        "body": issue["body"],
        "state": issue["state"].upper(),
        "labels": [{"name": name} for name in issue["labels"]],
        "comments": [{"body": body} for body in issue["comments"]],
        "url": _issue_url(issue["number"]),
    }
    if not fields:
        return shaped
    unknown = [f for f in fields.split(",") if f not in shaped]
    if unknown:
        raise GhError(f"Unknown JSON field: {unknown[0]!r}")
    return {f: shaped[f] for f in fields.split(",")}


def _jq(value: Any, expression: str | None) -> str:
    """The expressions the workflows use (no jq binary): ``.[].FIELD``, ``.[]``, ``.``."""
    if expression is None:
        return json.dumps(value)
    if expression == ".":
        return json.dumps(value)
    items: list[Any]
    if expression == ".[]":
        items = list(value)
    elif expression.startswith(".[]."):
        items = [item[expression[4:]] for item in value]
    else:
        raise GhError(f"the gh double does not evaluate --jq {expression!r}")
    return "\n".join(i if isinstance(i, str) else json.dumps(i) for i in items)


def _find_issue(state: dict[str, Any], number: str) -> dict[str, Any]:
    for issue in state["issues"]:
        if str(issue["number"]) == str(number).lstrip("#"):
            return issue
    raise GhError(
        f"GraphQL: Could not resolve to an issue or pull request with the number of {number}."
    )


def _issue(args: list[str], state: dict[str, Any], record: dict[str, Any]) -> str:
    action, rest = args[0], args[1:]
    positional, options = _options(rest, flags=("--force",))
    if action == "list":
        wanted = _one(options, "--state", "-s", default="open")
        label = _one(options, "--label", "-l")
        found = [
            i
            for i in state["issues"]
            if (wanted == "all" or i["state"] == wanted) and (label is None or label in i["labels"])
        ]
        found.sort(key=lambda i: -i["number"])
        limit = int(_one(options, "--limit", "-L", default=30))
        shaped = [_issue_json(i, _one(options, "--json")) for i in found[:limit]]
        return _jq(shaped, _one(options, "--jq", "-q"))
    if action == "create":
        body = _body(options, "--body-file", "-F")
        record["body"] = body
        labels = [str(label) for label in options.get("--label", []) + options.get("-l", [])]
        for label in labels:
            if label not in state["labels"]:
                raise GhError(f"could not add label: '{label}' not found")
        number = max((i["number"] for i in state["issues"]), default=0) + 1
        state["issues"].append(
            {
                "number": number,
                "title": _one(options, "--title", "-t", default=""),
                "body": body or "",
                "labels": labels,
                "state": "open",
                "comments": [],
            }
        )
        return _issue_url(number)
    issue = _find_issue(state, positional[0]) if positional else None
    if issue is None:
        raise GhError(f"gh issue {action}: an issue number is required")
    if action == "view":
        fields = _one(options, "--json")
        if fields is None:
            return f"{issue['title']}\n\n{issue['body']}"
        return _jq(_issue_json(issue, fields), _one(options, "--jq", "-q"))
    if action == "edit":
        body = _body(options, "--body-file", "-F")
        record["body"] = body
        if body is not None:
            issue["body"] = body
        if "--title" in options:
            issue["title"] = _one(options, "--title")
        issue["labels"] += [str(x) for x in options.get("--add-label", [])]
        return _issue_url(issue["number"])
    if action == "comment":
        body = _body(options, "--body-file", "-F")
        record["body"] = body
        if body is None:
            raise GhError("gh issue comment: --body or --body-file is required")
        # The workflow's token comments as its bot (the REST API lists it so).
        made = _new_comment(state, issue["number"], body, BOT_USER, "NONE")
        return made["html_url"]
    if action in ("close", "reopen"):
        comment = _one(options, "--comment", "-c")
        if comment:
            record["body"] = comment
            issue["comments"].append(comment)
        issue["state"] = "closed" if action == "close" else "open"
        return ""
    raise GhError(f'unknown command "{action}" for "gh issue"')


def _label(args: list[str], state: dict[str, Any]) -> str:
    positional, options = _options(args[1:], flags=("--force", "-f"))
    if args[0] != "create" or not positional:
        raise GhError(f"the gh double does not know gh label {' '.join(args)}")
    if state["faults"].get("label_forbidden"):
        raise GhError(FORBIDDEN)
    name = positional[0]
    if name in state["labels"] and not ("--force" in options or "-f" in options):
        raise GhError(f'label with name "{name}" already exists; use `--force` to update it')
    if name not in state["labels"]:
        state["labels"].append(name)
    return ""


def _workflow(args: list[str], state: dict[str, Any]) -> str:
    positional, options = _options(args[1:])
    if args[0] != "run" or not positional:
        raise GhError(f"the gh double does not know gh workflow {' '.join(args)}")
    inputs: dict[str, str] = {}
    for pair in options.get("-f", []) + options.get("--raw-field", []) + options.get("-F", []):
        key, sep, value = str(pair).partition("=")
        if not sep:
            raise GhError(f"field {pair!r} is not in key=value form")
        inputs[key] = value
    state["dispatches"].append(
        {"workflow": positional[0], "ref": _one(options, "--ref", "-r"), "inputs": inputs}
    )
    return f"✓ Created workflow_dispatch event for {positional[0]} at {inputs and 'ref'}"


def _run(args: list[str], state: dict[str, Any]) -> str:
    positional, options = _options(args[1:])
    if args[0] == "list":
        workflow, branch = _one(options, "--workflow", "-w"), _one(options, "--branch", "-b")
        status = _one(options, "--status", "-s")
        runs = [
            r
            for r in state["runs"]
            if (workflow is None or r["workflowName"] == workflow)
            and (branch is None or r["headBranch"] == branch)
            and (status is None or r["status"] == status or r["conclusion"] == status)
        ]
        runs.sort(key=lambda r: -r["databaseId"])
        runs = runs[: int(_one(options, "--limit", "-L", default=20))]
        fields = _one(options, "--json")
        shaped = [{f: r[f] for f in fields.split(",")} for r in runs] if fields else runs
        return _jq(shaped, _one(options, "--jq", "-q"))
    if args[0] == "download" and positional:
        name = _one(options, "--name", "-n")
        source = STATE_DIR / "runs" / positional[0] / str(name)
        if not source.is_dir():
            raise GhError("no artifact matches any of the names or patterns provided")
        shutil.copytree(source, Path(_one(options, "--dir", "-D", default=".")), dirs_exist_ok=True)
        return ""
    raise GhError(f"the gh double does not know gh run {' '.join(args)}")


def _api(args: list[str], state: dict[str, Any], record: dict[str, Any] | None = None) -> str:
    positional, options = _options(args, flags=("--paginate", "--slurp", "--silent"))
    endpoint = positional[0] if positional else ""
    if endpoint in state["api"] or "/" + endpoint in state["api"]:
        return json.dumps(state["api"].get(endpoint, state["api"].get("/" + endpoint, {})))
    method = str(_one(options, "--method", "-X", default="GET")).upper()
    payload: dict[str, Any] = {}
    if _one(options, "--input") is not None:
        payload = json.loads(Path(_one(options, "--input")).read_text())
        if record is not None and "body" in payload:
            record["body"] = payload["body"]
    for pair in options.get("-f", []) + options.get("--raw-field", []):
        key, _, value = str(pair).partition("=")
        payload[key] = value
    rest = _issues_rest(endpoint, method, payload, state)
    if rest is None:
        rest = _pulls_rest(endpoint, method, payload, state)
    if rest is not None:
        return json.dumps(rest)
    return json.dumps({})


def _new_comment(
    state: dict[str, Any], issue: int, body: str, user: dict[str, str], association: str
) -> dict[str, Any]:
    comments = state.setdefault("rest_comments", [])
    state["last_comment_id"] = state.get("last_comment_id", 9000) + 1  # never reused
    comment = {
        "id": state["last_comment_id"],
        "issue": issue,
        "html_url": _issue_url(issue) + f"#issuecomment-{state['last_comment_id']}",
        "body": body,
        "user": user,
        "author_association": association,
        "reactions": [],
    }
    comments.append(comment)
    _find_issue(state, str(issue))["comments"].append(body)
    return comment


def _issues_rest(endpoint: str, method: str, payload: dict[str, Any], state: dict[str, Any]) -> Any:
    """The REST routes of issue commands: an issue's comments (list, create), a comment
    edited, a reaction, the open issues with a label. None: not one of these."""
    path, _, query = endpoint.partition("?")
    parts = path.strip("/").split("/")
    if parts[:1] == ["repos"] and len(parts) == 6 and parts[3] == "collaborators":
        role = state.get("permissions", {}).get(parts[4], "none")
        return {"permission": "write" if role == "maintain" else role, "role_name": role}
    if parts[:1] != ["repos"] or len(parts) < 4 or parts[3] != "issues":
        return None
    tail = parts[4:]
    comments = state.setdefault("rest_comments", [])
    if len(tail) == 1 and tail[0].isdigit():  # an issue: read, or closed / reopened
        issue = _find_issue(state, tail[0])
        if method == "PATCH" and payload.get("state") in ("open", "closed"):
            issue["state"] = payload["state"]
            issue["state_reason"] = payload.get("state_reason")
        return {k: issue.get(k) for k in ("number", "title", "body", "state", "state_reason")}
    if len(tail) == 2 and tail[1] == "comments" and tail[0].isdigit():
        number = int(tail[0])
        _find_issue(state, tail[0])
        if method == "POST":
            return _new_comment(state, number, str(payload.get("body", "")), BOT_USER, "NONE")
        return [c for c in comments if c["issue"] == number]
    if len(tail) >= 2 and tail[0] == "comments" and tail[1].isdigit():
        found = [c for c in comments if c["id"] == int(tail[1])]
        if not found:
            raise GhError("HTTP 404: Not Found (https://api.github.com/)")
        comment = found[0]
        if len(tail) == 3 and tail[2] == "reactions" and method == "POST":
            comment["reactions"].append(str(payload.get("content")))
            return {"content": payload.get("content")}
        if len(tail) == 2 and method in ("PATCH", "DELETE"):
            if comment["user"] != BOT_USER:
                raise GhError(FORBIDDEN)  # the token edits only its own comments
            if method == "DELETE":
                comments.remove(comment)
                return {}
            comment["body"] = str(payload.get("body", ""))
            return comment
        return comment
    if not tail and method == "GET":
        wanted = dict(pair.partition("=")[::2] for pair in query.split("&") if pair)
        label = wanted.get("labels")
        found = [
            i
            for i in sorted(state["issues"], key=lambda i: i["number"])
            if i["state"] == wanted.get("state", "open") and (not label or label in i["labels"])
        ]
        return [
            {
                "number": i["number"],
                "title": i["title"],
                "body": i["body"],
                "labels": [{"name": n} for n in i["labels"]],
            }
            for i in found
        ]
    return None


def _pulls_rest(endpoint: str, method: str, payload: dict[str, Any], state: dict[str, Any]) -> Any:
    """The REST routes of a pull request made without a clone (github.client.PullRequests):
    a branch's head, a branch made, a file read or put on a branch (contents), a pull
    request opened. Branches are {name: {path: text}}, main's empty. None: not these."""
    path, _, query = endpoint.partition("?")
    parts = path.strip("/").split("/")
    if parts[:1] != ["repos"] or len(parts) < 4:
        return None
    tail, branches = parts[3:], state.setdefault("branches", {"main": {}})
    if tail[:3] == ["git", "ref", "heads"] and "/".join(tail[3:]) in branches:
        return {"object": {"sha": f"head-of-{'/'.join(tail[3:])}"}}
    if tail == ["git", "refs"] and method == "POST":
        name = str(payload.get("ref", "")).removeprefix("refs/heads/")
        if name in branches:
            raise GhError("HTTP 422: Reference already exists (https://api.github.com/)")
        branches[name] = {}
        return {"ref": f"refs/heads/{name}"}
    if tail[:1] == ["contents"] and len(tail) > 1:
        file = unquote("/".join(tail[1:]))
        wanted = {k: unquote(v) for k, v in (p.partition("=")[::2] for p in query.split("&") if p)}
        branch = str(payload.get("branch") or wanted.get("ref") or "main")
        files = branches.get(branch)
        if files is None:
            raise GhError("HTTP 404: Not Found (https://api.github.com/)")
        if method == "PUT":
            files[file] = base64.b64decode(str(payload.get("content", ""))).decode()
            return {"content": {"path": file}}
        if file not in files:
            raise GhError("HTTP 404: Not Found (https://api.github.com/)")
        return {"path": file, "sha": f"blob-{len(files[file])}"}
    if tail == ["pulls"] and method == "POST":
        pulls = state.setdefault("pulls", [])
        number = 100 + len(pulls)
        pull = {k: payload.get(k) for k in ("title", "head", "base", "body")}
        pulls.append(
            {**pull, "number": number, "html_url": f"https://github.com/{OWNER_REPO}/pull/{number}"}
        )
        return pulls[-1]
    return None


def _dispatch(argv: list[str], record: dict[str, Any]) -> str:
    argv = list(argv)
    if "--repo" in argv:  # github.client.GitHub(repo=...) adds it; the double has one repository
        at = argv.index("--repo")
        del argv[at : at + 2]
    if argv[:2] == ["auth", "status"]:
        return "github.com\n  ✓ Logged in to github.com account double (GH_TOKEN)"
    command = argv[0] if argv else ""
    handlers = {"issue": _issue, "label": _label, "workflow": _workflow, "run": _run, "api": _api}
    if command not in handlers or len(argv) < 2:
        raise GhError(f"the gh double does not know: gh {' '.join(argv)}")
    with _locked(STATE_DIR) as state:
        if state["faults"].get("rate_limited"):
            raise GhError(RATE_LIMITED)
        if command == "issue":
            return _issue(argv[1:], state, record)
        if command == "api":
            return _api(argv[1:], state, record)
        return handlers[command](argv[1:], state)


STATE_DIR = Path(os.environ.get(STATE_VARIABLE, "."))


def main(argv: list[str]) -> int:
    if not os.environ.get(STATE_VARIABLE):
        print(f"gh double: {STATE_VARIABLE} is not set", file=sys.stderr)
        return 1
    record: dict[str, Any] = {"argv": argv}
    code, out, err = 0, "", ""
    try:
        if _load(STATE_DIR)["faults"].get("unauthenticated"):
            if argv[:2] == ["auth", "status"]:
                raise GhError(
                    "You are not logged into any GitHub hosts. To log in, run: gh auth login"
                )
            raise GhError(NOT_AUTHENTICATED, code=4)
        out = _dispatch(argv, record)
    except GhError as error:
        code, err = error.code, str(error)
    except (IndexError, KeyError, ValueError, OSError) as error:
        code, err = 1, f"gh double: {type(error).__name__}: {error}"
    record.update(exit=code, stdout=out, stderr=err)
    with open(STATE_DIR / "calls.jsonl", "a") as calls:
        calls.write(json.dumps(record) + "\n")
    if out:
        print(out)
    if err:
        print(err, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
