"""Hook shims that `git neo install` writes into .git/hooks (filled by the hooks issue)."""
