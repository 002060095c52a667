from __future__ import annotations

from repromatrix.environment.indexes import IndexSettings


def test_pip_settings_become_uv_flags():
    settings = IndexSettings.from_environment(
        {
            "PIP_INDEX_URL": "https://mirror.example/simple",
            "PIP_EXTRA_INDEX_URL": "https://a.example/simple https://b.example/simple",
            "PIP_FIND_LINKS": "/wheels /more-wheels",
        }
    )
    assert settings.uv_args() == [
        "--index-url", "https://mirror.example/simple",
        "--extra-index-url", "https://a.example/simple",
        "--extra-index-url", "https://b.example/simple",
        "--find-links", "/wheels",
        "--find-links", "/more-wheels",
    ]  # fmt: skip


def test_uv_variables_win_over_pip_ones():
    settings = IndexSettings.from_environment(
        {"PIP_FIND_LINKS": "/pip-wheels", "UV_FIND_LINKS": "/uv-wheels", "UV_INDEX_URL": "x"}
    )
    assert settings.find_links == ()
    assert "--find-links" not in settings.uv_args()
    # uv reads its own variables; they still count for the environment's identity.
    assert dict(settings.uv_variables) == {"UV_FIND_LINKS": "/uv-wheels", "UV_INDEX_URL": "x"}


def test_no_configuration_means_no_flags():
    assert IndexSettings.from_environment({}).uv_args() == []


def test_a_combinations_indexes_come_first():
    user = IndexSettings.from_environment({"PIP_EXTRA_INDEX_URL": "https://user.example/simple"})
    combined = user.overlaid(
        index_url="https://download.pytorch.org/whl/cu126",
        extra_index_urls=("https://cells.example/simple", "https://user.example/simple"),
    )
    assert combined.index_url == "https://download.pytorch.org/whl/cu126"
    assert combined.extra_index_urls == (
        "https://cells.example/simple",
        "https://user.example/simple",
    )


def test_offline_wheelhouse_uses_no_index():
    assert IndexSettings.offline("wheels").uv_args() == ["--no-index", "--find-links", "wheels"]


def test_description_hides_credentials_and_local_folders():
    settings = IndexSettings(
        index_url="https://user:s3cr3t-pass@mirror.example/simple",
        find_links=("/home/someone/wheels/",),
        extra_index_urls=("file:///srv/pypi/simple",),
    )
    described = str(settings.describe())
    assert "s3cr3t-pass" not in described
    assert "https://***@mirror.example/simple" in described
    assert "/home/someone" not in described and "<local>/wheels" in described
    assert "/srv/pypi" not in described and "<local>/simple" in described
