"""The hook shims `git neo install` writes into the repository's hooks folder: post-commit,
post-merge, post-rewrite and pre-commit (POSIX sh; see neo_git/githooks/install.py)."""
