"""Names `vulture neo_git --min-confidence 80` reports that a protocol requires, each with where
(read by tests/test_dead_code.py; vulture counts an attribute of `protocol` as a use of the name)."""
from vulture.whitelist_utils import Whitelist

protocol = Whitelist()
# `signal.signal` calls a handler as handler(signum, frame): agents/deadline.py, agents/hooks.py,
# agents/warm.py, githooks/runner.py.
protocol.signum
# A context manager's __exit__ receives the exception triple: citations/code.py, health/cache.py,
# health/progress.py, report/series.py.
protocol.exc_info
