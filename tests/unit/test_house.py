"""The house rules of docs/architecture.md, measured by scripts/house.py: no circle of imports
(type-only ones included), no module over 400 lines, no function over 60 lines."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def load_house() -> ModuleType:
    spec = importlib.util.spec_from_file_location("house", REPOSITORY / "scripts" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["house"] = module  # dataclasses look their module up while building a class
    spec.loader.exec_module(module)
    return module


house = load_house()


def without_size(fault: str) -> str:
    return fault.split(" (", 1)[0]


def test_augure_keeps_the_house_rules() -> None:
    found = [without_size(f) for f in house.faults("augure", REPOSITORY / "augure")]
    assert found == []


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_a_circle_made_only_of_type_checking_imports_is_a_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_package(
        tmp_path,
        {
            "cottage/__init__.py": "",
            "cottage/low.py": """
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from cottage.high import Roof
                def hold(roof: "Roof") -> None: ...
            """,
            "cottage/high.py": "from cottage.low import hold\nclass Roof: ...\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert house.import_circles("cottage") == [["cottage.high", "cottage.low"]]


def test_a_circle_between_sibling_packages_is_a_fault_though_no_module_circle_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_package(
        tmp_path,
        {
            "villa/__init__.py": "",
            "villa/attic/__init__.py": "",
            "villa/attic/a.py": "import villa.cellar.b\n",
            "villa/attic/c.py": "",
            "villa/cellar/__init__.py": "",
            "villa/cellar/b.py": "",
            "villa/cellar/d.py": "import villa.attic.c\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert house.import_circles("villa") == [["villa.attic", "villa.cellar"]]


def test_long_modules_and_functions_are_faults_measured_from_def_to_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(60))
    write_package(
        tmp_path,
        {
            "shed/__init__.py": "",
            "shed/long.py": f"class Box:\n    def fill(self):\n{textwrap.indent(body, '    ')}",
            "shed/fits.py": f"def fill():\n{body[: body.rindex('    x59')]}",
            "shed/big.py": "x = 1\n" * 401,
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert house.faults("shed", tmp_path / "shed") == [
        "module over 400 lines: shed.big (401)",
        "function over 60 lines: shed.long.Box.fill (61)",
    ]


def test_the_script_prints_the_figures_a_closing_note_quotes() -> None:
    run = subprocess.run(
        [sys.executable, str(REPOSITORY / "scripts" / "house.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    for heading in ("rooms:", "floors:", "largest modules:", "largest functions:", "faults"):
        assert heading in run.stdout, run.stdout
    assert run.returncode == (1 if "faults:\n" in run.stdout else 0), run.stdout
