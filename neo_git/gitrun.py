"""The one way git-neo runs the `git` command (network, notes, hooks' helpers).

Objects and refs go through pygit2; the `git` command is for what libgit2 does not
do the way the user expects (fetch/push with their ssh config and credential
helpers, `git notes merge`, `git merge-base` over a shallow boundary, ...).
Every call takes a list (never a shell string), a timeout, `stdin=DEVNULL` unless
input is given, and `GIT_TERMINAL_PROMPT=0` so a credential prompt can never hang
a hook.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from neo_git.errors import NeoError

DEFAULT_TIMEOUT = 60.0


class GitCommandError(NeoError):
    """`git …` exited non-zero; carries its exit code and stderr."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str, hint: str | None = None) -> None:
        last = next((line for line in reversed(stderr.strip().splitlines()) if line.strip()), "")
        super().__init__(f"`git {' '.join(args)}` failed (exit {returncode})" + (f": {last}" if last else ""),
                         hint)
        self.returncode = returncode
        self.stderr = stderr


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a git subprocess: never prompt for credentials."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    env.setdefault("GIT_ASKPASS", "")      # no GUI askpass either (an empty value disables it)
    env.setdefault("SSH_ASKPASS", "")
    if extra:
        env.update(extra)
    return env


def run_git(args: Sequence[str], *, cwd: str | os.PathLike | None = None, input: str | bytes | None = None,
            timeout: float = DEFAULT_TIMEOUT, check: bool = True, env: Mapping[str, str] | None = None,
            text: bool = True) -> subprocess.CompletedProcess:
    """Run `git *args`; raise GitCommandError on a non-zero exit when *check*, NeoError when git
    is missing or times out."""
    argv = ["git", *[os.fspath(a) for a in args]]
    try:
        proc = subprocess.run(
            argv, cwd=None if cwd is None else os.fspath(cwd), input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True, timeout=timeout, env=git_env(env), text=text,
            encoding="utf-8" if text else None, errors="replace" if text else None,
        )
    except FileNotFoundError:
        raise NeoError("the `git` command was not found", "install git and make sure it is on PATH") from None
    except subprocess.TimeoutExpired:
        raise NeoError(f"`git {' '.join(argv[1:])}` did not finish within {timeout:g} s",
                       "check the network and the remote, then try again") from None
    if check and proc.returncode != 0:
        stderr = proc.stderr if text else proc.stderr.decode("utf-8", "replace")
        raise GitCommandError(argv[1:], proc.returncode, stderr)
    return proc


class StartedGit:
    """`git *args` started now, its stdout collected later (`output`): commands that do not wait for
    each other run side by side (the pre-commit guard starts its first three at once). Bytes
    out; the same environment, timeout and errors as run_git."""

    def __init__(self, args: Sequence[str], *, cwd: str | os.PathLike | None = None,
                 timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] | None = None) -> None:
        self.argv = ["git", *[os.fspath(a) for a in args]]
        self.timeout = timeout
        try:
            self.proc = subprocess.Popen(self.argv, cwd=None if cwd is None else os.fspath(cwd), env=git_env(env),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError:
            raise NeoError("the `git` command was not found", "install git and make sure it is on PATH") from None

    def output(self, *, check: bool = True) -> bytes:
        """Its stdout, once it has exited; GitCommandError on a non-zero exit when *check*."""
        try:
            stdout, stderr = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise NeoError(f"`git {' '.join(self.argv[1:])}` did not finish within {self.timeout:g} s",
                           "check the repository with `git status`, then try again") from None
        if check and self.proc.returncode != 0:
            raise GitCommandError(self.argv[1:], self.proc.returncode, stderr.decode("utf-8", "replace"))
        return stdout


def git_output(args: Sequence[str], *, cwd: str | os.PathLike | None = None, timeout: float = DEFAULT_TIMEOUT,
               env: Mapping[str, str] | None = None) -> str:
    """stdout of `git *args` with the trailing newline removed (raises like run_git)."""
    return run_git(args, cwd=cwd, timeout=timeout, env=env).stdout.rstrip("\n")


def git_dir_args(git_dir: str | os.PathLike[str], work_tree: str | os.PathLike[str] | None = None) -> list[str]:
    """`--git-dir=… [--work-tree=…]` so a git subprocess acts on exactly this repository."""
    args = [f"--git-dir={git_dir}"]
    if work_tree is not None:
        args.append(f"--work-tree={work_tree}")
    return args
