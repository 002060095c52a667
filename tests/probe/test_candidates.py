"""Candidate versions from indexes built in the test: a file:// PEP 503 index, a
find-links folder of tiny wheels, and a PEP 691 JSON index served over HTTP with
basic auth (credentials must never show)."""

from __future__ import annotations

import base64
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from packaging.version import Version

from repromatrix.environment.indexes import IndexSettings
from repromatrix.errors import UserError
from repromatrix.probe.candidates import Listing, list_releases, sources, version_of

PACKAGE = "tiny-pkg"


def fake_wheel(folder: Path, name: str, version: str) -> Path:
    """A zip with METADATA: enough for a listing (and a valid wheel name)."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(
            f"{dist}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        )
    return path


def html_index(root: Path, name: str, files: list[tuple[str, str | None]]) -> str:
    """A PEP 503 index with one project page; (filename, yanked reason or None)."""
    page = root / name
    page.mkdir(parents=True)
    anchors = []
    for filename, yanked in files:
        attribute = f' data-yanked="{yanked}"' if yanked is not None else ""
        anchors.append(f'<a href="../../files/{filename}#sha256=00"{attribute}>{filename}</a>')
    (page / "index.html").write_text(
        "<!DOCTYPE html><html><body>\n" + "<br/>\n".join(anchors) + "\n</body></html>"
    )
    return root.as_uri() + "/"


def versions(listing: Listing) -> list[str]:
    return [str(v) for v in listing.versions()]


def test_a_file_index_lists_versions_in_pep440_order(tmp_path: Path) -> None:
    url = html_index(
        tmp_path / "simple",
        PACKAGE,
        [
            ("tiny_pkg-1.10.0-py3-none-any.whl", None),
            ("tiny_pkg-1.9.0-py3-none-any.whl", None),
            ("tiny_pkg-1.9.0.tar.gz", None),
            ("tiny_pkg-1.2.0-py3-none-any.whl", None),
            ("tiny-pkg-1.11.0rc1.tar.gz", None),
            ("tiny_pkg-1.3.0-py3-none-any.whl", "broken upload"),
            ("tiny_pkg-1.3.0.tar.gz", ""),  # PEP 592: the attribute alone means yanked
            ("tiny_pkg-1.4.0-py3-none-any.whl", "one file yanked, the other not"),
            ("tiny_pkg-1.4.0.tar.gz", None),
            ("other_pkg-9.0.0-py3-none-any.whl", None),  # another project's file
            ("tiny_pkg-2.0.0%2Blocal-py3-none-any.whl", None),  # URL-encoded '+'
        ],
    )
    listing = list_releases(PACKAGE, IndexSettings(index_url=url))
    assert versions(listing) == [
        "1.2.0",
        "1.3.0",
        "1.4.0",
        "1.9.0",
        "1.10.0",
        "1.11.0rc1",
        "2.0.0+local",
    ]
    assert listing.releases[Version("1.3.0")].yanked
    assert not listing.releases[Version("1.4.0")].yanked
    # Yanked and pre-releases are not candidates; the ends always are.
    between = listing.between(Version("1.2.0"), Version("2.0.0+local"))
    assert [str(v) for v in between] == ["1.2.0", "1.4.0", "1.9.0", "1.10.0", "2.0.0+local"]
    with_pre = listing.between(Version("1.10.0"), Version("1.2"), pre=True)
    assert [str(v) for v in with_pre] == ["1.2.0", "1.4.0", "1.9.0", "1.10.0"]
    assert "1.11.0rc1" in [
        str(v) for v in listing.between(Version("1.9"), Version("2.0.0+local"), pre=True)
    ]
    assert [str(v) for v in listing.between(Version("1.3.0"), Version("1.9.0"))] == [
        "1.3.0",
        "1.4.0",
        "1.9.0",
    ], "a yanked end named by the user stays"


def test_a_find_links_folder_of_wheels(tmp_path: Path) -> None:
    wheels = tmp_path / "wheelhouse"
    wheels.mkdir()
    for version in ("0.3.0", "0.1.0", "0.2.0", "0.2.1.dev1"):
        fake_wheel(wheels, PACKAGE, version)
    fake_wheel(wheels, "torch", "2.13.0")
    (wheels / "notes.txt").write_text("not a distribution")
    listing = list_releases(PACKAGE, IndexSettings.offline(str(wheels)))
    assert versions(listing) == ["0.1.0", "0.2.0", "0.2.1.dev1", "0.3.0"]
    assert [str(v) for v in listing.between(Version("0.1.0"), Version("0.3.0"))] == [
        "0.1.0",
        "0.2.0",
        "0.3.0",
    ]
    # The same folder as a file:// URL.
    listing = list_releases(PACKAGE, IndexSettings(find_links=(wheels.as_uri(),), no_index=True))
    assert versions(listing) == ["0.1.0", "0.2.0", "0.2.1.dev1", "0.3.0"]


def test_versions_are_the_union_of_every_source(tmp_path: Path) -> None:
    main = html_index(tmp_path / "main", PACKAGE, [("tiny_pkg-1.0.0.tar.gz", None)])
    extra = html_index(tmp_path / "extra", PACKAGE, [("tiny_pkg-1.1.0.tar.gz", None)])
    links = tmp_path / "links"
    links.mkdir()
    fake_wheel(links, PACKAGE, "1.2.0")
    fake_wheel(links, PACKAGE, "1.0.0")
    index = IndexSettings(index_url=main, extra_index_urls=(extra,), find_links=(str(links),))
    listing = list_releases(PACKAGE, index)
    assert versions(listing) == ["1.0.0", "1.1.0", "1.2.0"]
    assert len(listing.releases[Version("1.0.0")].sources) == 2
    assert [s.kind for s in sources(index)] == ["index", "index", "find-links"]


def test_uv_variables_are_sources_too(tmp_path: Path) -> None:
    index = IndexSettings(
        uv_variables=(
            ("UV_DEFAULT_INDEX", "https://mirror.example/simple"),
            ("UV_INDEX", "private=https://private.example/simple"),
            ("UV_FIND_LINKS", "/srv/a,/srv/b"),
        )
    )
    assert [s.location for s in sources(index)] == [
        "https://mirror.example/simple",
        "https://private.example/simple",
        "/srv/a",
        "/srv/b",
    ]
    assert sources(IndexSettings())[0].location == "https://pypi.org/simple/"
    assert [s.kind for s in sources(IndexSettings.offline(str(tmp_path)))] == ["find-links"]


def test_unknown_package_is_a_user_error(tmp_path: Path) -> None:
    url = html_index(tmp_path / "simple", PACKAGE, [("tiny_pkg-1.0.0.tar.gz", None)])
    with pytest.raises(UserError, match="unknown package 'no-such-pkg'"):
        list_releases("no-such-pkg", IndexSettings(index_url=url))
    with pytest.raises(UserError, match="no such folder"):
        list_releases(PACKAGE, IndexSettings.offline(str(tmp_path / "missing")))


def test_version_of_ignores_other_files() -> None:
    assert version_of("tiny_pkg-1.0-py3-none-any.whl", PACKAGE) == Version("1.0")
    assert version_of("Tiny.Pkg-1.0.zip", PACKAGE) == Version("1.0")
    assert version_of("tiny_pkg-1.0.exe", PACKAGE) is None
    assert version_of("tiny_pkg-notaversion.tar.gz", PACKAGE) is None
    assert version_of("other-1.0.tar.gz", PACKAGE) is None


# --------------------------------------------------------------------------- PEP 691 over HTTP

USER, PASSWORD = "reader", "s3cr3t-pass-word"


class _Index(BaseHTTPRequestHandler):
    """A PEP 691 JSON index behind basic auth; HTML for clients that do not ask JSON."""

    def do_GET(self) -> None:
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.end_headers()
            return
        if self.path.rstrip("/") != f"/simple/{PACKAGE}":
            self.send_response(404)
            self.end_headers()
            return
        files = [
            {"filename": "tiny_pkg-3.0.0-py3-none-any.whl", "url": "x", "hashes": {}},
            {"filename": "tiny_pkg-3.1.0-py3-none-any.whl", "url": "x", "hashes": {}},
            {
                "filename": "tiny_pkg-3.2.0-py3-none-any.whl",
                "url": "x",
                "hashes": {},
                "yanked": "bad build",
            },
        ]
        if "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": PACKAGE, "files": files})
            content_type = "application/vnd.pypi.simple.v1+json"
        else:
            body = "<html></html>"
            content_type = "text/html"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def json_index() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    # A short poll: shutdown() waits for one (the default, 0.5 s a test).
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()


def test_a_pep691_json_index_with_credentials(json_index: str) -> None:
    with_credentials = json_index.replace("http://", f"http://{USER}:{PASSWORD}@")
    listing = list_releases(PACKAGE, IndexSettings(index_url=with_credentials))
    assert versions(listing) == ["3.0.0", "3.1.0", "3.2.0"]
    assert listing.releases[Version("3.2.0")].yanked
    assert all(PASSWORD not in s and USER not in s for s in listing.sources)


def test_credentials_never_show_in_errors(json_index: str) -> None:
    wrong = json_index.replace("http://", f"http://{USER}:wrong-{PASSWORD}@")
    with pytest.raises(UserError) as raised:
        list_releases(PACKAGE, IndexSettings(index_url=wrong))
    message = str(raised.value)
    assert "HTTP 401" in message
    assert PASSWORD not in message and USER not in message
    assert "\n" not in message

    unreachable = f"http://{USER}:{PASSWORD}@127.0.0.1:9/simple/"
    with pytest.raises(UserError) as raised:
        list_releases(PACKAGE, IndexSettings(index_url=unreachable))
    assert PASSWORD not in str(raised.value)
    assert "cannot read" in str(raised.value)


class _HtmlOnly(BaseHTTPRequestHandler):
    """An older index: PEP 503 HTML whatever the client asks; a find-links page too."""

    def do_GET(self) -> None:
        pages = {
            f"/simple/{PACKAGE}/": '<a href="/f/tiny_pkg-5.0.0.tar.gz">x</a>'
            '<a href="/f/tiny_pkg-5.1.0-py3-none-any.whl#sha256=1">y</a>',
            "/links.html": '<a href="https://files.example/tiny_pkg-5.2.0-py3-none-any.whl">z</a>',
        }
        if self.path not in pages:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(pages[self.path].encode())

    def log_message(self, *args: object) -> None:
        pass


def test_an_html_index_and_an_html_find_links_page_over_http() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlOnly)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        index = IndexSettings(index_url=f"{base}/simple", find_links=(f"{base}/links.html",))
        assert versions(list_releases(PACKAGE, index)) == ["5.0.0", "5.1.0", "5.2.0"]
        # A package the index does not have (404) is simply not there.
        with pytest.raises(UserError, match="unknown package"):
            list_releases("other-pkg", IndexSettings(index_url=f"{base}/simple"))
    finally:
        server.shutdown()
