"""What a repository configures for issue commands and the watch: the ``issue:``
section of ``.github/repromatrix.yml`` (every key optional), plus the repository
variable ``REPROMATRIX_TRUSTED`` (logins, comma or space separated) that the workflow
passes in the environment.

    issue:
      trusted: [alice, bob]           # logins trusted besides the associations
      associations: [OWNER, MEMBER, COLLABORATOR]
      label: repro                    # issues with it are watched each night
      watch_limit: 5                  # watched issues a night, least recently watched first
      max_releases: 12                # releases one sweep may test
      minutes: 60                     # one probe's time limit (the job stops at 2x)
      pins: [torch==2.13.0]           # held in every run unless the command pins the package
      bots: ["github-actions[bot]"]   # the logins the workflow's token comments as: the
                                      # bot comment, approvals and the tracking issue's
                                      # hunt answers are read from these only (github/authors.py)
      confirm: 2                      # reruns of a flip, each in a fresh interpreter, before
                                      # it is said (one that does not hold is flaky)
      repositories:                   # where a package's commits are (default: the GitHub
        transformers: https://github.com/huggingface/transformers   # repository its
                                      # metadata names): a flip is bisected to its commit
      watch:
        main: [transformers]          # the repro also runs on these packages' main branch
      close: false                    # true: a confirmed flip to passing closes the issue
      keep_label: repromatrix:keep    # the label that keeps an issue's repro as a case
      confinement: required           # or optional: where bubblewrap is missing, repros
                                      # run unconfined instead of being refused

The confinement opt-out may also be said in the project's matrix.yaml, beside its
tiers (``issue: {confinement: optional}``): either file saying ``optional`` opts out.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from repromatrix.errors import UserError
from repromatrix.github.authors import BOT_LOGIN, DEFAULT_BOTS
from repromatrix.matrix.model import Confinement, IssueBlock
from repromatrix.matrix.pins import parse_pin_option
from repromatrix.matrix.validation import validate
from repromatrix.names import canonicalize_name

CONFIG_FILE = Path(".github/repromatrix.yml")
MATRIX_FILE = Path("matrix.yaml")
TRUSTED_VARIABLE = "REPROMATRIX_TRUSTED"
# A person who may label an issue is trusted for the label when GitHub gives them one of
# these (the labeled event carries no author association: the permission API says it).
TRUSTED_PERMISSIONS = ("admin", "maintain", "write")
PACKAGE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
# A package's repository, as git clones it: https (GitHub, a mirror) or a local file://
# one (a runner's own copy); no credentials, no options.
_REPOSITORY = re.compile(r"^(?:https://[A-Za-z0-9.-]+(?::\d+)?|file://)/[A-Za-z0-9._~/+-]+$")
ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIMER",
                "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN", "NONE")  # fmt: skip


class WatchSettings(BaseModel):
    """``watch:``: what the nightly watch follows besides the newest releases."""

    model_config = ConfigDict(extra="forbid")

    # Packages whose main branch the repro also runs on (their repository: repositories:).
    main: list[str] = Field(default_factory=list, max_length=10)

    @field_validator("main")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not PACKAGE_NAME.match(name):
                raise ValueError(f"{name[:60]!r} is not a package name")
        return [canonicalize_name(name) for name in value]


class IssueSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trusted: list[str] = []
    associations: list[str] = ["OWNER", "MEMBER", "COLLABORATOR"]
    label: str = Field("repro", min_length=1, max_length=50)
    watch_limit: int = Field(5, ge=0, le=100)
    max_releases: int = Field(12, ge=1, le=200)
    minutes: int = Field(60, ge=1, le=360)
    pins: list[str] = []
    bots: list[str] = Field(default_factory=lambda: list(DEFAULT_BOTS), min_length=1, max_length=10)
    confirm: int = Field(2, ge=0, le=10)
    repositories: dict[str, str] = Field(default_factory=dict, max_length=50)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    close: bool = False
    keep_label: str = Field("repromatrix:keep", min_length=1, max_length=50)

    @field_validator("repositories")
    @classmethod
    def _repositories(cls, value: dict[str, str]) -> dict[str, str]:
        checked = {}
        for name, url in value.items():
            if not PACKAGE_NAME.match(name):
                raise ValueError(f"{name[:60]!r} is not a package name")
            checked[canonicalize_name(name)] = repository_url(url)
        return checked

    # The run job confines the repro (issue/confine.py) and refuses where it cannot;
    # "optional" runs it unconfined there instead (the maintainer's choice, said in the log).
    confinement: Confinement = "required"

    @field_validator("bots", "associations", "pins")
    @classmethod
    def _each(cls, value: list[str], info: ValidationInfo) -> list[str]:
        check = _ITEM_CHECKS[info.field_name or ""]
        for item in value:
            check(item)
        return value


def _bot_login(login: str) -> None:
    if not BOT_LOGIN.match(login):
        raise ValueError(f"{login[:60]!r} is not a bot login (NAME[bot])")


def _association(word: str) -> None:
    if word not in ASSOCIATIONS:
        raise ValueError(f"{word!r} is not one of {', '.join(ASSOCIATIONS)}")


def _pin(text: str) -> None:
    try:
        parse_pin_option(text)
    except UserError as err:
        raise ValueError(str(err)) from None


# Each list's items, checked one by one (a ValueError names the item).
_ITEM_CHECKS = {"bots": _bot_login, "associations": _association, "pins": _pin}


def repository_url(url: str) -> str:
    """A package's repository URL as the watch clones it (ValueError: not one)."""
    if not isinstance(url, str) or not _REPOSITORY.match(url) or "/." in url:
        raise ValueError(
            f"{str(url)[:80]!r} is not a repository URL (https://HOST/PATH or file:///PATH)"
        )
    return url.removesuffix("/")


def _issue_section(path: Path, expected: str) -> object:
    """The ``issue:`` mapping of a YAML file ({} where the file or the key is absent)."""
    data: object = {}
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise UserError(f"{path}: not YAML ({' '.join(str(err).split())[:200]})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected {expected}")
    return data.get("issue") or {}


def load_settings(
    path: Path = CONFIG_FILE,
    environ: dict[str, str] | None = None,
    matrix: Path = MATRIX_FILE,
) -> IssueSettings:
    """The settings (defaults where the file or key is absent); a bad file is one line."""
    section = _issue_section(path, "a mapping with an 'issue:' key")
    # One line naming the file, the key and the value, as for matrix.yaml.
    settings = validate(IssueSettings, section, str(path), ("issue",))
    declared = validate(IssueBlock, _issue_section(matrix, "a mapping"), str(matrix), ("issue",))
    if declared.confinement == "optional":
        settings = settings.model_copy(update={"confinement": "optional"})
    listed = (environ if environ is not None else os.environ).get(TRUSTED_VARIABLE, "")
    extra = [login for login in re.split(r"[\s,]+", listed) if login]
    if extra:
        settings = settings.model_copy(update={"trusted": [*settings.trusted, *extra]})
    return settings


def is_trusted(login: str, association: str, settings: IssueSettings) -> bool:
    """Trusted: an author association the settings list (OWNER, MEMBER, COLLABORATOR by
    default), or a login they name (GitHub logins compare without case)."""
    if association in settings.associations:
        return True
    return login.lower() in {name.lower() for name in settings.trusted}
