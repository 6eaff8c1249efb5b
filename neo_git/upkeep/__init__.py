"""Memory upkeep: scope caps, stale pruning, demotion, synthesis and purge.

`run_gc(store)` runs every step (`git neo gc`); `maybe_run_daily(store)` runs it at
most once a day, after outcome processing. Each step is a pure function over one
scope's facts (`steps.py`, `synthesis.py`) written through `FactStore.transact`.
"""
from neo_git.upkeep.rules import Action
from neo_git.upkeep.runner import STEPS, UpkeepReport, maybe_run_daily, run_gc

__all__ = ["Action", "STEPS", "UpkeepReport", "maybe_run_daily", "run_gc"]
