"""The one build step pyproject.toml cannot express: ship the repository's top-level data
folders (`hooks/`, `construct/`; docs/architecture.md §1) inside the package, as
`neo_git/_shipped/<name>/`, with every file in them (nested folders included).

Packages are discovered in pyproject.toml (`[tool.setuptools.packages.find]`); setuptools
can map outside folders into the package only for packages listed by hand, so the copy
happens here instead. An editable install copies nothing: `neo_git.resources.shipped_dir`
then finds the repository's own folders. MANIFEST.in puts both folders into the sdist.
"""
import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent
# One list of shipped folders: read from the module that looks them up at run time.
RESOURCES = runpy.run_path(str(ROOT / "neo_git" / "resources.py"))


class BuildPyWithShippedFolders(build_py):
    """build_py, then copy the shipped folders into the build tree."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in RESOURCES["SHIPPED"]:
            target = Path(self.build_lib) / "neo_git" / RESOURCES["INSTALLED_DIR"] / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


class DistributionWithEditableData(Distribution):
    """setuptools' editable_wheel installs data files only when the distribution answers
    `has_data()`, a method distutils never had (it is `has_data_files`; pypa/setuptools#3399):
    without this, `pip install -e .` leaves the manual page out."""

    def has_data(self):
        return self.has_data_files()


# The manual page `git neo --help` opens: git runs `man git-neo`, and man looks in
# <prefix>/share/man for every <prefix>/bin on PATH, so a venv or --user install is found.
# The pre-commit framework's entries are shell scripts installed beside `git-neo` (a console
# script would start a Python interpreter just to start another one): `git-neo-guard` is the
# pre-commit shim itself (a link to hooks/pre-commit), `git-neo-outcomes` the post-commit and
# post-merge hand-off.
setup(cmdclass={"build_py": BuildPyWithShippedFolders}, distclass=DistributionWithEditableData,
      data_files=[("share/man/man1", ["man/git-neo.1"])],
      scripts=["hooks/framework/git-neo-guard", "hooks/framework/git-neo-outcomes"])
