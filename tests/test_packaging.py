"""The wheel ships every package found under neo_git/, hooks/ and construct/ (as plain data
folders under neo_git/_shipped/, nested files included) and the tree-sitter query files, and
an installed (non-editable) copy finds them through `neo_git.resources.shipped_dir`."""
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


# Added to the copy that is built: a new package (found without listing it), a shim, and
# a pattern in a nested folder without __init__.py.
PLANTED = {
    "neo_git/planted_pkg/__init__.py": "",
    "neo_git/planted_pkg/inner/__init__.py": "",
    "neo_git/planted_pkg/inner/mod.py": "VALUE = 1\n",
    "hooks/planted-hook": "#!/bin/sh\nexec git neo hook planted \"$@\"\n",
    "construct/planted-domain/planted-pattern.md": "# A planted pattern\n",
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not _can_build_wheels_offline():
        pytest.skip("this environment cannot build a wheel without the network: "
                    "install `wheel` or setuptools>=70.1 (e.g. in the dev extras)")
    work = tmp_path_factory.mktemp("pkg")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=_IGNORE)
    for relative, content in PLANTED.items():  # what other work will add: it must ship without config
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_text(content, encoding="utf-8")
    (source / "hooks" / "planted-hook").chmod(0o755)
    _pip("wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(work / "dist"), ".", cwd=source)
    (found,) = (work / "dist").glob("git_neo-*.whl")
    return found


def _source_packages() -> set[str]:
    return {str(p.parent.relative_to(ROOT)) for p in (ROOT / "neo_git").rglob("__init__.py")
            if "__pycache__" not in p.parts}


@pytest.mark.timeout(60)
def test_wheel_contains_every_package_and_the_data_folders(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for package in _source_packages() | {"neo_git/planted_pkg", "neo_git/planted_pkg/inner"}:
        assert f"{package}/__init__.py" in names, package
    assert "neo_git/planted_pkg/inner/mod.py" in names
    assert "neo_git/redact_rules.json" in names  # redaction patterns are data
    scm = {n for n in names if n.startswith("neo_git/health/languages/") and n.endswith(".scm")}
    expected = {f"neo_git/health/languages/{p.name}" for p in (ROOT / "neo_git/health/languages").glob("*.scm")}
    assert expected and scm == expected
    # every file of hooks/ and construct/ (the source tree's and the planted ones), nothing else there
    for folder in ("hooks", "construct"):
        files = {path.relative_to(ROOT / folder).as_posix() for path in (ROOT / folder).rglob("*")
                 if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}
        files |= {k.split("/", 1)[1] for k in PLANTED if k.startswith(folder + "/")}
        shipped = {n.split("/", 3)[3] for n in names if n.startswith(f"neo_git/_shipped/{folder}/")}
        assert shipped == files, folder
    # the data folders are not packages, and take no name a module could want
    assert not any(n.startswith(("neo_git/hooks/", "neo_git/construct/")) for n in names)
    assert not any(n.startswith("neo_git/_shipped/") and n.endswith("__init__.py") for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "git-neo = neo_git.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_no_module_takes_the_shipped_folder_name():
    from neo_git.resources import INSTALLED_DIR, SHIPPED

    package = ROOT / "neo_git"
    assert not (package / f"{INSTALLED_DIR}.py").exists() and not (package / INSTALLED_DIR).exists()
    for name in SHIPPED:
        assert (ROOT / name).is_dir() and not (ROOT / name / "__init__.py").exists()


@pytest.mark.timeout(60)
def test_installed_copy_finds_its_resources(wheel, tmp_path):
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--no-compile", "-q", "--target", str(target), str(wheel), cwd=tmp_path)
    code = (
        "import importlib.resources as r, os, neo_git\n"
        "from neo_git.resources import shipped_dir\n"
        "for name in ('hooks', 'construct'):\n"
        "    print('DIR', name, shipped_dir(name))\n"
        "print('HOOK', os.access(shipped_dir('hooks') / 'planted-hook', os.X_OK))\n"
        "print('MD', sorted(p.relative_to(shipped_dir('construct')).as_posix()"
        " for p in shipped_dir('construct').rglob('*.md')))\n"
        "print('SCM', sorted(p.name for p in r.files('neo_git.health.languages').iterdir() if p.name.endswith('.scm')))\n"
        "import neo_git.planted_pkg.inner.mod as m\n"
        "print('FILE', neo_git.__file__, m.__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for line in lines:
        if line.startswith(("DIR", "FILE")):
            assert str(target) in line and str(ROOT) not in line, line  # the installed copy, not the source
    assert f"DIR hooks {target / 'neo_git' / '_shipped' / 'hooks'}" in lines
    assert "HOOK True" in lines  # a shim keeps its executable bit
    assert "planted-domain/planted-pattern.md" in next(line for line in lines if line.startswith("MD"))
    assert "'python.scm'" in next(line for line in lines if line.startswith("SCM"))


def test_a_source_checkout_finds_the_repository_folders():
    from neo_git.resources import shipped_dir

    assert shipped_dir("hooks") == ROOT / "hooks" and shipped_dir("construct") == ROOT / "construct"
    with pytest.raises(KeyError):
        shipped_dir("tests")
