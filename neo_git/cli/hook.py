"""`git neo hook <git-hook> …` and `git neo hook agent <event>`: what the shims and the
agents' hook configurations run. Both are fail-soft: they never make git or an agent fail."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import argparse  # the hook path (`run_hook`) never builds a parser


def register(sub) -> dict[str, str]:
    """Add hook (internal: run by the hook shims and by agents' hook configurations)."""
    import argparse

    p = sub.add_parser("hook", help="run a hook's work (called by the installed shims and agents)")
    p.add_argument("name", help="post-commit, post-merge, post-rewrite, pre-commit, or 'agent'")
    p.add_argument("hook_args", nargs=argparse.REMAINDER, help="the hook's own arguments")
    return {"hook": "cmd_hook"}


def cmd_hook(args: argparse.Namespace) -> int:
    """Dispatch to the git-hook runner or the agent-hook runner."""
    return run_hook(args.name, args.hook_args)


def run_hook(name: str, hook_args: list[str]) -> int:
    """Run hook *name* with its arguments (`git neo hook …` without argparse: the fast path)."""
    if name == "agent":
        from neo_git.agents.hooks import run_agent_hook

        return run_agent_hook(hook_args)
    from neo_git.githooks.runner import run_git_hook

    return run_git_hook(name, hook_args)
