"""The Construct pattern library: curated patterns (`construct/<domain>/<name>.md`, shipped
in the wheel, plus a project's own `.neo/construct/`), parsed, validated and searched.

Importing this package is cheap (standard library only); numpy is imported when a
search runs.
"""
from __future__ import annotations

from neo_git.patterns.library import (
                                      Library,
                                      check_pattern_id,
                                      find_pattern,
                                      load_library,
                                      project_root,
                                      shipped_root,
                                      validate_folder,
)
from neo_git.patterns.model import MAX_LINES, REQUIRED_SECTIONS, Pattern, PatternHit, PatternProblem
from neo_git.patterns.search import search_patterns

__all__ = [
    "Library", "MAX_LINES", "Pattern", "PatternHit", "PatternProblem", "REQUIRED_SECTIONS",
    "check_pattern_id", "find_pattern", "load_library", "project_root", "search_patterns",
    "shipped_root", "validate_folder",
]
