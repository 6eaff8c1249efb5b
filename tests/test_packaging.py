"""The wheel ships hooks/, construct/ and the tree-sitter query files, and an installed
(non-editable) copy finds them through importlib.resources."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Build from a copy: setuptools writes build/ and *.egg-info into the source tree,
# and other people work in this checkout.
_IGNORE = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.pyc",
                                 ".pytest_cache", "tests", "benchmarks")


def _pip(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _can_build_wheels_offline() -> bool:
    """setuptools builds wheels itself from 70.1 on; before that it needs the `wheel` package."""
    import importlib.util

    try:
        import setuptools
    except ImportError:  # Python 3.12+ venvs come without setuptools
        return False
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not _can_build_wheels_offline():
        pytest.skip("this environment cannot build a wheel without the network: "
                    "install `wheel` or setuptools>=70.1 (e.g. in the dev extras)")
    work = tmp_path_factory.mktemp("pkg")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=_IGNORE)
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(work / "dist"), ".", cwd=source)
    (found,) = (work / "dist").glob("git_neo-*.whl")
    return found


@pytest.mark.timeout(60)
def test_wheel_contains_data_packages(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "neo_git/hooks/__init__.py" in names
    assert "neo_git/construct/__init__.py" in names
    assert "neo_git/redact_rules.json" in names  # redaction patterns are data
    scm = {n for n in names if n.startswith("neo_git/health/languages/") and n.endswith(".scm")}
    expected = {f"neo_git/health/languages/{p.name}" for p in (ROOT / "neo_git/health/languages").glob("*.scm")}
    assert expected and scm == expected
    # every file shipped from hooks/ and construct/ in the source tree is in the wheel
    for folder, package in (("hooks", "neo_git/hooks"), ("construct", "neo_git/construct")):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                assert f"{package}/{path.relative_to(ROOT / folder).as_posix()}" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "git-neo = neo_git.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.timeout(60)
def test_installed_copy_finds_its_resources(wheel, tmp_path):
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--no-compile", "-q", "--target", str(target), str(wheel), cwd=tmp_path)
    code = (
        "import importlib.resources as r, sys, neo_git\n"
        "for pkg in ('neo_git.hooks', 'neo_git.construct', 'neo_git.health.languages'):\n"
        "    root = r.files(pkg)\n"
        "    assert root.is_dir(), pkg\n"
        "    print(pkg, root)\n"
        "print('SCM', sorted(p.name for p in r.files('neo_git.health.languages').iterdir() if p.name.endswith('.scm')))\n"
        "print('FILE', neo_git.__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for line in lines:
        if line.startswith(("neo_git.", "FILE")):
            assert str(target) in line and str(ROOT) not in line, line  # the installed copy, not the source
    assert any(line.startswith("neo_git.hooks ") for line in lines)
    assert "'python.scm'" in next(line for line in lines if line.startswith("SCM"))
