"""Keep secrets out of everything the tool writes: reports, logs, recorded environments.

Three nets, applied together by :func:`redact_text`:

1. values of environment variables whose *names* look secret (TOKEN, KEY, SECRET,
   PASSWORD, ...), wherever those values appear in text;
2. credentials inside URLs (``https://user:pass@host`` -> ``https://***@host``);
3. well-known token shapes (``hf_...``, ``ghp_...``, ``github_pat_...``), even when
   they did not come from this process's environment (a traceback of a cell, say).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

MASK = "***"

SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
# Matched from the literal '://' (fast to find); the scheme before it is kept as is.
URL_CREDENTIALS = re.compile(r"://(?P<cred>[^/@\s:]+(?::[^/@\s]*)?)@")
# A token starts at a word boundary: the first letter is matched before the boundary is
# checked (a lookbehind), so the scan skips every position that cannot start a token.
TOKEN_SHAPES = re.compile(
    r"[hgAx](?<=\b[hgAx])"
    r"(?:f_[A-Za-z0-9]{16,}"  # hf_
    r"|h[pousr]_[A-Za-z0-9]{20,}"  # ghp_ gho_ ghu_ ghs_ ghr_
    r"|ithub_pat_[A-Za-z0-9_]{20,}"  # github_pat_
    r"|lpat-[A-Za-z0-9_-]{20,}"  # glpat-
    r"|KIA[0-9A-Z]{16}"  # AKIA
    r"|ox[abpr]-[A-Za-z0-9-]{10,})\b"  # xoxb- ...
)
# Short values ("1", "true") would blank out unrelated text; real secrets are longer.
MIN_SECRET_LENGTH = 6


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_LENGTH}
    # Longest first, so a secret containing another is masked whole.
    return sorted(values, key=len, reverse=True)


@functools.lru_cache(maxsize=8)
def _values_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(map(re.escape, values))) if values else None


def redact_text(text: str, environ: Mapping[str, str] | None = None) -> str:
    return _scrub(text, _values_pattern(tuple(secret_values(environ))))


def redactor(environ: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """redact_text with the environment's secrets read once: for callers that redact
    thousands of strings (a report of a large matrix)."""
    pattern = _values_pattern(tuple(secret_values(environ)))
    return lambda text: _scrub(text, pattern)


def _scrub(text: str, values: re.Pattern[str] | None) -> str:
    if values is not None:
        text = values.sub(MASK, text)
    text = URL_CREDENTIALS.sub(f"://{MASK}@", text)
    return TOKEN_SHAPES.sub(MASK, text)


def redact_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of an environment fit for recording: secret-named values masked,
    the others scrubbed of URL credentials and token shapes."""
    return {k: (MASK if is_secret_name(k) else redact_text(v, environ)) for k, v in environ.items()}


def redact(obj: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Redact every string inside a JSON-like structure."""
    return _redact_all(obj, redactor(environ))


def _redact_all(obj: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(obj, str):
        return scrub(obj)
    if isinstance(obj, Mapping):
        return {k: _redact_all(v, scrub) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_redact_all(v, scrub) for v in obj]
    return obj


def shorten_paths(text: str, places: Mapping[str, str]) -> str:
    """Replace this machine's folders by names that mean something elsewhere
    ('<env>/lib/...', '~/...'): results get committed and pasted into issues."""
    for folder, name in sorted(places.items(), key=lambda kv: len(kv[0]), reverse=True):
        if folder and folder != "/":
            text = text.replace(folder.rstrip("/"), name)
    return text


def machine_places(
    *, seen_from: str | os.PathLike[str] | None = None, **named: str | os.PathLike[str] | None
) -> dict[str, str]:
    """{folder: '<name>'} for the given folders, plus the home folder as '~'.

    ``seen_from`` is the working directory of the process whose output is cleaned:
    pytest writes a file's path relative to it when that is shorter, so a custom
    REPROMATRIX_ENV_DIR near the cases shows up as ``../../envs/<hash>/venv/...``.
    Those relative spellings (and the folders' resolved spellings) are places too."""
    places: dict[str, str] = {}
    for name, path in named.items():
        if not path:
            continue
        spellings = {os.fspath(path), os.path.realpath(path)}
        if seen_from is not None:
            for spelling in list(spellings):
                relative = os.path.relpath(spelling, seen_from)
                # Only a path that names a folder: '../..' alone would match anywhere.
                if relative.startswith("..") and relative.strip("./\\"):
                    spellings.add(relative)
        for spelling in spellings:
            places.setdefault(spelling, f"<{name}>")
    places[os.path.expanduser("~")] = "~"
    return places


def portable_path(path: str | os.PathLike[str], cwd: str | None = None) -> str:
    """A path fit for a report: relative to the working directory when it lies
    inside it, else just its name (a folder of this machine means nothing elsewhere)."""
    absolute = os.path.abspath(os.fspath(path))
    relative = os.path.relpath(absolute, cwd or os.getcwd())
    return relative if not relative.startswith("..") else os.path.basename(absolute)


def portable_argv(argv: list[str], cwd: str | None = None) -> list[str]:
    """A command line fit for a report: absolute paths made portable, secrets masked."""
    return [redact_text(portable_path(a, cwd) if os.path.isabs(a) else a) for a in argv]
