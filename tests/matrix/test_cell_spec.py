"""matrix/cell.py's CellSpec: the one road to a cell, from a combination (the matrix
run) or from a command line (--pin over --cell), and what the store is asked for it."""

from __future__ import annotations

from repromatrix.environment import EnvRequest, IndexSettings
from repromatrix.matrix import load_matrix
from repromatrix.matrix.cell import CellSpec
from repromatrix.matrix.pins import PinKind, parse_pin

MATRIX = """
packages: [torch, transformers, peft, torchvision]
tiers:
  t:
    - id: full
      python: "3.11"
      torch: system
      transformers: "4.46.3"
      peft: git+https://github.com/huggingface/peft@abc123
      torchvision: null
      index_url: https://mirror.example/simple
      extra_index_urls: [https://download.example/whl/cpu]
      find_links: [/srv/wheels]
      exclude_newer: "2025-01-01"
      overrides: ["certifi>=2026.1"]
      env: {HF_HUB_OFFLINE: "1"}
      as_of: transformers
"""


def _combo(write_matrix):
    return load_matrix(write_matrix(MATRIX)).find("full")


def test_a_combinations_cell_is_everything_it_sets_for_its_environment(write_matrix) -> None:
    combo = _combo(write_matrix)
    cell = CellSpec.of(combo)
    index = IndexSettings(find_links=("/user/wheels",)).for_cell(cell)
    request = EnvRequest.for_cell(cell, index)
    assert request.pins == combo.pins and request.python == "3.11"
    assert request.index.index_url == "https://mirror.example/simple"
    assert request.index.extra_index_urls == ("https://download.example/whl/cpu",)
    assert request.index.find_links == ("/srv/wheels", "/user/wheels"), "the cell's come first"
    assert request.exclude_newer == "2025-01-01"
    assert request.overrides == ("certifi>=2026.1",)
    assert request.env == (("HF_HUB_OFFLINE", "1"),)
    assert (request.as_of, request.stack) == ("transformers", combo.stack)


def test_a_command_lines_pins_go_over_its_cell(write_matrix) -> None:
    combo = _combo(write_matrix)
    given = (parse_pin("transformers", "4.57.0"), parse_pin("trl", "latest"))
    cell = CellSpec.from_command(given, cell=combo, searched="peft", python="3.12")
    pins = {pin.package: pin for pin in cell.pins}
    assert pins["transformers"].spec == "4.57.0", "--pin wins over the combination's pin"
    assert "peft" not in pins, "the searched package gives way"
    assert pins["torch"].kind is PinKind.SYSTEM and pins["torchvision"].kind is PinKind.ABSENT
    assert cell.pins[-2:] == given, "the command's own pins come last"
    assert cell.python == "3.12"
    assert (cell.index_url, cell.overrides, cell.env) == (
        combo.index_url,
        combo.overrides,
        combo.env,
    )
    # Time travel is the command's own (--as-of), never the combination's.
    assert (cell.as_of, cell.stack, cell.exclude_newer) == (None, (), None)


def test_culprits_cell_holds_only_what_a_lock_cannot_carry(write_matrix) -> None:
    cell = CellSpec.from_command((), cell=_combo(write_matrix), held_only=True)
    kinds = {pin.package: pin.kind for pin in cell.pins}
    assert kinds == {
        "torch": PinKind.SYSTEM,
        "peft": PinKind.DIRECT,
        "torchvision": PinKind.ABSENT,
    }, "transformers' exact pin is the locks' to give"


DEFAULTS = """
packages: [torch, transformers, mylib]
defaults:
  python: "3.12"
  torch: "2.13.0"
  mylib: "."
  extra_index_urls: [https://download.example/whl/cpu]
  exclude_newer: "2025-01-01"
tiers:
  t:
    - {id: a, transformers: "4.57.0"}
"""


def test_without_a_cell_the_defaults_are_the_base_and_what_was_taken_is_said(
    write_matrix,
) -> None:
    path = write_matrix(DEFAULTS)
    # mylib: "." is a folder pin: the folder must be a Python project (else bad input).
    (path.parent / "pyproject.toml").write_text('[project]\nname = "mylib"\nversion = "0.1"\n')
    defaults = load_matrix(path).defaults
    assert defaults is not None
    given = (parse_pin("torch", "2.12.0"),)
    cell = CellSpec.from_command(given, defaults=defaults, searched="transformers")
    pins = {pin.package: pin for pin in cell.pins}
    assert pins["torch"].spec == "2.12.0" and pins["mylib"].location == path.parent
    assert (cell.python, cell.extra_index_urls) == ("3.12", ("https://download.example/whl/cpu",))
    assert cell.exclude_newer is None, "time travel is the command's own"
    assert cell.took() == (
        "from matrix.yaml's defaults: mylib=., Python 3.12, its indexes (--pin overrides)"
    )
    assert cell == CellSpec.from_command(given, defaults=defaults, python="3.12")
    culprit = CellSpec.from_command((), defaults=defaults, held_only=True)
    assert [pin.package for pin in culprit.pins] == ["mylib"], "a folder: no lock carries it"
    # A --cell is the whole cell: the defaults are its matrix's already; nothing is said.
    whole = CellSpec.from_command((), cell=load_matrix(path).find("a"), defaults=defaults)
    assert whole.took() == ""


def test_without_a_cell_the_command_line_is_all_there_is() -> None:
    pin = parse_pin("six", "1.16.0")
    assert CellSpec.from_command((pin,), python="3.11") == CellSpec(pins=(pin,), python="3.11")


def test_a_stack_travels_only_with_a_cutoff() -> None:
    request = EnvRequest.for_cell(CellSpec(stack=("torch",)), IndexSettings())
    assert (request.as_of, request.stack) == (None, ()), "no cutoff: nothing moves"
    dated = CellSpec(stack=("torch",)).with_time_travel("2025-01-01", ("torch",))
    assert EnvRequest.for_cell(dated, IndexSettings()).stack == ("torch",)


def test_package_indexes_merge_by_package_and_reach_the_cell_and_its_json(write_matrix) -> None:
    from repromatrix.matrix.cell import cell_json, parse_cell

    matrix = load_matrix(
        write_matrix(
            """
packages: [torch, peft]
defaults:
  package_indexes: {torch: "https://download.pytorch.org/whl/cpu", Peft: "https://a.example/s"}
tiers:
  t:
    - {id: one, torch: "2.13.0", package_indexes: {peft: "https://u:p@b.example/s"}}
"""
        )
    )
    combo = matrix.find("one")
    assert combo.package_indexes == (
        ("peft", "https://u:p@b.example/s"), ("torch", "https://download.pytorch.org/whl/cpu"),
    )  # fmt: skip
    index = IndexSettings().for_cell(CellSpec.of(combo))
    assert index.index_of("torch") == "https://download.pytorch.org/whl/cpu"
    assert index.extra_index_urls == ()  # torch's index serves torch alone
    again = parse_cell(cell_json(combo), "--cell")
    assert dict(again.package_indexes)["peft"] == "https://b.example/s"  # no credentials travel


def test_a_package_index_that_is_no_url_is_one_line(write_matrix) -> None:
    import pytest

    from repromatrix.errors import UserError

    path = write_matrix("packages: [torch]\ntiers:\n  t:\n    - {id: a, torch: '2.13.0', "
                        "package_indexes: {torch: 'two words'}}\n")  # fmt: skip
    with pytest.raises(UserError) as refused:
        load_matrix(path)
    assert "package_indexes" in str(refused.value) and "'two words'" in str(refused.value)
