"""The health cache's file name, read by the package's lazy front (`cached_summary`) before any
health module loads, and by the cache itself (`cache.py`)."""

CACHE_FILE = "health.sqlite"   # in .git/neo/ (see cache.py)
