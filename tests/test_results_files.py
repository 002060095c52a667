"""The results files themselves: atomic, readable by everyone."""

from __future__ import annotations

import json
import stat

from repromatrix.results.schema import write_json_atomic, write_text_atomic


def test_atomic_writes_leave_no_temporary_file_and_are_world_readable(tmp_path):
    write_json_atomic(tmp_path / "a" / "results.json", {"schema": 1})
    write_text_atomic(tmp_path / "a" / "summary.md", "# hi\n")
    assert json.loads((tmp_path / "a" / "results.json").read_text()) == {"schema": 1}
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["results.json", "summary.md"]
    for name in ("results.json", "summary.md"):
        mode = stat.S_IMODE((tmp_path / "a" / name).stat().st_mode)
        assert mode & stat.S_IROTH, oct(mode)
