"""Keep secrets out of everything the tool writes: reports, logs, recorded environments.

Three nets, applied together by :func:`redact_text`:

1. values of environment variables whose *names* look secret (TOKEN, KEY, SECRET,
   PASS, PWD, CREDENTIAL, AUTH in any case: ``DB_PASS``, ``api_key``), wherever those
   values appear in text: the variables this process inherited, and those a matrix
   sets for its cells (:func:`remember`, called when matrix.yaml is loaded); with
   them, the credentials found in any URL of either (a pin, an index, find-links);
2. credentials inside URLs (``https://user:pass@host`` -> ``https://***@host``);
3. well-known token shapes (``hf_...``, ``ghp_...``, ``github_pat_...``), even when
   they did not come from this process's environment (a traceback of a cell, say).

Every byte leaves through one of two doors, and both apply the three nets: files
through results.write_text_atomic / write_json_atomic (and the logs and records the
runner rewrites after each interpreter), the console through :func:`console`, which
the command line wraps around every command.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import unquote

MASK = "***"

# PASS covers PASSWORD and PASSWD; PWD covers DB_PWD; AUTH, but not AUTHOR (a commit's
# author is no secret); CREDENTIAL(S).
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASS|PWD|CREDENTIAL|AUTH(?!OR)", re.IGNORECASE)
# The shell's working directories: paths, which shorten_paths makes portable.
NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})
# Matched from the literal '://' (fast to find); the scheme before it is kept as is.
URL_CREDENTIALS = re.compile(r"://(?P<cred>[^/@\s:]+(?::[^/@\s]*)?)@")
# Each token shape: its first letter, and the rest.
_TOKENS = (
    ("h", r"f_[A-Za-z0-9]{16,}"),  # hf_
    ("g", r"h[pousr]_[A-Za-z0-9]{20,}"),  # ghp_ gho_ ghu_ ghs_ ghr_
    ("g", r"ithub_pat_[A-Za-z0-9_]{20,}"),  # github_pat_
    ("g", r"lpat-[A-Za-z0-9_-]{20,}"),  # glpat-
    ("A", r"KIA[0-9A-Z]{16}"),  # AKIA
    ("x", r"ox[abpr]-[A-Za-z0-9-]{10,}"),  # xoxb- ...
)
_FIRSTS = "".join(dict.fromkeys(first for first, _rest in _TOKENS))
# A token starts at a word boundary: the first letter is matched before the boundary is
# checked (a lookbehind), so the scan skips every position that cannot start a token.
TOKEN_SHAPES = re.compile(
    f"[{_FIRSTS}](?<=\\b[{_FIRSTS}])(?:{'|'.join(rest for _first, rest in _TOKENS)})\\b"
)
# Short values ("1", "true") would blank out unrelated text; real secrets are longer.
MIN_SECRET_LENGTH = 6


# userinfo of any URL, for the credentials themselves (a tool may print them decoded,
# or without the URL around them).
_USERINFO = re.compile(r"://([^/@\s]+)@")

_REMEMBERED: set[str] = set()
_REMEMBERED_LOCK = threading.Lock()


def is_secret_name(name: str) -> bool:
    return name.upper() not in NOT_SECRET_NAMES and bool(SECRET_NAME.search(name))


def without_credentials(text: str) -> str:
    """``text`` with the userinfo of every URL in it taken out (``https://u:p@host`` ->
    ``https://host``): for values handed on, where a mask would be a wrong password."""
    while True:
        stripped = URL_CREDENTIALS.sub("://", text)
        if stripped == text:  # a password with a raw '@' leaves a second userinfo
            return text
        text = stripped


def url_credentials(text: str) -> set[str]:
    """The userinfo of each URL in ``text``, whole, decoded and its password alone."""
    found: set[str] = set()
    for match in _USERINFO.finditer(text):
        userinfo = match.group(1)
        password = userinfo.split(":", 1)[1] if ":" in userinfo else userinfo
        found |= {userinfo, unquote(userinfo), password, unquote(password)}
    return {v for v in found if len(v) >= MIN_SECRET_LENGTH}


def secrets_in(environ: Mapping[str, str]) -> set[str]:
    """The secrets an environment holds: values of secret-named variables and the
    credentials of URLs in any value."""
    found: set[str] = set()
    for name, value in environ.items():
        if not isinstance(value, str):
            continue
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
            found.add(value)
        if "@" in value:
            found |= url_credentials(value)
    return found


def remember(environ: Mapping[str, str] = (), texts: Iterable[str] = ()) -> None:
    """Mask these from now on, in this process: the secrets of an environment a
    matrix sets for its cells, and the URL credentials in ``texts`` (pins, indexes)."""
    found = secrets_in(dict(environ))
    for text in texts:
        found |= url_credentials(text)
    with _REMEMBERED_LOCK:
        _REMEMBERED.update(found)


def forget() -> None:
    """Tests: start again from the environment alone."""
    with _REMEMBERED_LOCK:
        _REMEMBERED.clear()


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    environ = os.environ if environ is None else environ
    with _REMEMBERED_LOCK:
        values = secrets_in(environ) | _REMEMBERED
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


def masked_already(text: str) -> str:
    """The door's scrub (results.write_text_atomic) for a text that the code making it
    has masked with these nets: a report (junit.xml value by value as XML spells them,
    summary.md and index.html by redact_text), a JSON file checked by its redactor.
    Every file is scanned once, not again at the door (a junit.xml of 2,000
    combinations is 28 MB)."""
    return text


def redact_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of an environment fit for recording: secret-named values masked,
    the others scrubbed of URL credentials and token shapes."""
    return {k: (MASK if is_secret_name(k) else redact_text(v, environ)) for k, v in environ.items()}


def redact(obj: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Redact every string inside a JSON-like structure."""
    return _redact_all(obj, redactor(environ))


# TOKEN_SHAPES without the word boundaries (in JSON text a token can follow an escape,
# ``\\nhf_...``, where the string itself has a boundary), one pattern a first letter:
# a pattern that starts with one letter is found by a fast search for that letter, one
# that starts with a set of letters tests the set at every character (3x the time on a
# results.json of 36 MB).
_TOKEN_HINTS = tuple(
    re.compile(f"{letter}(?:{'|'.join(rest for first, rest in _TOKENS if first == letter)})")
    for letter in _FIRSTS
)


@dataclass(frozen=True)
class JsonRedactor:
    """Masking for files of JSON (or XML), its secrets read once: for a merge that
    writes thousands of files."""

    scrub: Callable[[str], str]  # redact_text's nets, over a text
    spelt: tuple[str, ...]  # each secret as such a text may hold it

    def may_hold_secrets(self, text: str) -> bool:
        """Whether a string inside ``text`` (``json.dumps`` output, ASCII; or XML)
        could hold what :func:`redact` masks: a secret value, raw or as the text spells
        it, credentials in a URL or a token shape. False: redact() (and redact_text)
        would change nothing, so a large document need not be walked value by value.
        Passes of C: a substring test per secret, one for '://', and a search for the
        token shapes of each first letter (_TOKEN_HINTS)."""
        if any(value in text for value in self.spelt):
            return True
        if "://" in text and URL_CREDENTIALS.search(text):
            return True
        return any(hint.search(text) is not None for hint in _TOKEN_HINTS)


def _json_spelling(value: str) -> str:
    return json.dumps(value)[1:-1]


def _serializer_spelling(value: str) -> str:
    # pydantic's serializer (results files, ensure_ascii) leaves DEL as it is.
    return _json_spelling(value).replace("\\u007f", "\x7f")


def _json_spelling_unicode(value: str) -> str:
    # Non-ASCII as it is: results files written before they were ASCII (a merge copies
    # a job's file as it is, whichever version wrote it).
    return json.dumps(value, ensure_ascii=False)[1:-1]


def json_redactor(environ: Mapping[str, str] | None = None) -> JsonRedactor:
    spellings = (_json_spelling, _serializer_spelling, _json_spelling_unicode)
    return escaped_redactor(spellings, environ)


def escaped_redactor(
    spellings: tuple[Callable[[str], str], ...], environ: Mapping[str, str] | None = None
) -> JsonRedactor:
    """A JsonRedactor for any text that spells a string's characters its own way (JSON,
    XML): ``spellings`` give each secret as such a text may hold it."""
    values = tuple(secret_values(environ))
    pattern = _values_pattern(values)
    spelt = {spell(v) for v in values for spell in spellings} | set(values)
    return JsonRedactor(lambda text: _scrub(text, pattern), tuple(sorted(spelt)))


def _redact_all(obj: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(obj, str):
        return scrub(obj)
    if isinstance(obj, Mapping):
        return {k: _redact_all(v, scrub) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_redact_all(v, scrub) for v in obj]
    return obj


class _RedactingStream(io.TextIOBase):
    """A console stream that masks what is written to it, line by line (a secret is
    never split between two writes of one line); everything else is the stream's.

    A stream whose reader went away (``repromatrix run | head -2``) is not an error
    of the run: its file descriptor is pointed at /dev/null, so that nothing written
    later (nor the interpreter's last flush) raises, and ``on_closed`` is told once."""

    def __init__(self, stream: TextIO, on_closed: Callable[[], None] | None = None) -> None:
        self._stream = stream
        self._pending = ""
        self._on_closed = on_closed
        self._closed = False

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        if lines:
            self._out(redact_text("\n".join(lines) + "\n"))
        if self._pending and ("\r" in self._pending or len(self._pending) > 4096):
            # a progress redraw (\r) or a run-on line: out now, masked all the same
            self._out(redact_text(self._pending))
            self._pending = ""
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._out(redact_text(self._pending))
            self._pending = ""
        self._out(None)

    def _out(self, text: str | None) -> None:
        if self._closed:
            return
        try:
            if text is None:
                self._stream.flush()
            else:
                self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
        except OSError as err:
            if err.errno != errno.EPIPE:
                raise
            self._reader_gone()

    def _reader_gone(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        if self._on_closed is not None:
            self._on_closed()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def console(on_closed: Callable[[], None] | None = None) -> Iterator[None]:
    """Everything printed on stdout and stderr inside, masked: the console's door.
    ``on_closed``: called when a reader closes one of them (the rest goes nowhere)."""
    saved = sys.stdout, sys.stderr
    out = _RedactingStream(sys.stdout, on_closed)
    err = _RedactingStream(sys.stderr, on_closed)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (out, err):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = saved


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
