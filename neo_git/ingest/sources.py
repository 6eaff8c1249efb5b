"""Which files hold the rules a team wrote for its AI tools, and reading them safely.

Files are read from the work tree (they are often uncommitted). A file that is not
UTF-8 text, is larger than the cap, is not a regular file (a FIFO, a device), or leads outside the work tree through a symlink
is skipped with a warning, and the constraints it gave earlier are left alone: an
unreadable file is not a deleted one.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from neo_git.readfile import FileTooLarge, NotARegularFile, kind_of, read_regular

# Files and folders, relative to the work tree (a folder: every file under it).
SOURCE_PATHS = ("CLAUDE.md", "AGENTS.md", ".cursorrules", ".cursor/rules", ".github/copilot-instructions.md",
                ".github/instructions", ".windsurfrules", ".clinerules")
# Found in sub-folders too (`src/api/CLAUDE.md`): their rules are scoped to that folder.
NESTED = ("CLAUDE.md", "AGENTS.md")
MAX_NESTED = 200
MAX_BYTES = 256 * 1024
MAX_FILES_PER_FOLDER = 200


class SourceText(NamedTuple):
    """One instruction file: its path relative to the work tree and its text (None: skipped)."""

    path: str
    text: str | None
    problem: str = ""   # why it was skipped


def _candidates(workdir: Path) -> list[Path]:
    found: list[Path] = []
    for name in SOURCE_PATHS:
        path = workdir / name
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink())[:MAX_FILES_PER_FOLDER]
        elif path.exists() or path.is_symlink():
            found.append(path)
    return found + _nested(workdir)


def _nested(workdir: Path) -> list[Path]:
    """`CLAUDE.md` / `AGENTS.md` below the top folder, tracked or not, as git lists them (ignored
    folders such as node_modules are skipped the way git skips them)."""
    from neo_git.errors import NeoError
    from neo_git.gitrun import run_git

    specs = [f":(glob)*/**/{name}" for name in NESTED]
    try:
        proc = run_git(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *specs],
                       cwd=workdir, timeout=30, check=False)
    except NeoError:
        return []
    if getattr(proc, "returncode", 1) != 0:
        return []
    out = proc.stdout if isinstance(proc.stdout, str) else proc.stdout.decode("utf-8", "surrogateescape")
    names = sorted({n for n in out.split("\0") if n and "/" in n})[:MAX_NESTED]
    return [workdir / n for n in names]


def read_sources(workdir: Path) -> list[SourceText]:
    """Every instruction file present in *workdir*, in a fixed order, read or skipped."""
    root = Path(workdir).resolve()
    out = []
    for path in _candidates(root):
        rel = path.relative_to(root).as_posix()
        try:
            real = path.resolve()
            if root not in real.parents:
                out.append(SourceText(rel, None, "it leads outside the work tree (symlink)"))
                continue
            data = read_regular(real, MAX_BYTES)   # a FIFO or a device is never opened for a blocking read
        except NotARegularFile:
            out.append(SourceText(rel, None, f"it is {kind_of(real.stat().st_mode)}, not a regular file"))
            continue
        except FileTooLarge as exc:
            size = f" ({exc.size:,} bytes)" if exc.size is not None else ""
            out.append(SourceText(rel, None, f"it is larger than {MAX_BYTES // 1024} KiB{size}"))
            continue
        except OSError as exc:
            out.append(SourceText(rel, None, f"it cannot be read ({exc.strerror or exc})"))
            continue
        except RuntimeError:   # Python < 3.13 raises this for a symlink loop (3.13: OSError ELOOP)
            out.append(SourceText(rel, None, "it is a symbolic link loop"))
            continue
        if b"\0" in data:
            out.append(SourceText(rel, None, "it is a binary file"))
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            out.append(SourceText(rel, None, "it is not UTF-8 text"))
            continue
        out.append(SourceText(rel, text))
    return out
