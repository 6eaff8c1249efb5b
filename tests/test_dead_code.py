"""No dead code in the package: vulture at 80% confidence finds nothing (unused imports, variables,
unreachable code) except the names a protocol requires, listed with their reason in
`tests/vulture_whitelist.py`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_vulture_finds_no_dead_code():
    found = subprocess.run([sys.executable, "-m", "vulture", "neo_git", "tests/vulture_whitelist.py",
                            "--min-confidence", "80"], cwd=ROOT, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=120)
    assert found.returncode == 0, found.stdout + found.stderr
