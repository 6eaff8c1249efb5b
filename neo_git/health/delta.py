"""Did the code get healthier? Compare two snapshots: regression, neutral or improvement.

The rule (docs/architecture.md §6): more god files is a regression, fewer an improvement.
With the god-file count unchanged, more import cycles or a max nesting that
rose by more than the noise band is a regression, and the mirror image an
improvement. "Worse cycles" means more modules tangled in cycles, more new cycles
among modules that were in none than cycles gone, or cycles merged into one (fewer
cycles, but the edges that joined them are new): a merge is never mistaken for
progress, and a cycle split in two is (the edges joining its halves are gone).

The cycles counted are the import-time ones, as in `health` and the guard: moving an
import into the function that uses it (the import-at-the-edge pattern) is progress,
and a cycle that closes only through a deferred import is named in the reasons
but decides nothing. `git config neo.guardCycles all` counts every edge, in the
guard and here alike (`counts_every_edge`).

With `paths`, the comparison is restricted to those files (what a suggestion
touched): god files and nesting among them, and only the cycles that contain
them.
"""
from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from neo_git.health.snapshot import HealthSnapshot, counts_every_edge  # noqa: F401 - delta's setting too

REGRESSION, NEUTRAL, IMPROVEMENT = "regression", "neutral", "improvement"


@dataclass(frozen=True)
class HealthDelta:
    """The change in health between two snapshots, with the files responsible."""

    before: HealthSnapshot
    after: HealthSnapshot
    verdict: str                       # regression | neutral | improvement
    reasons: tuple[str, ...]           # human sentences, most important first
    files: tuple[str, ...]             # the files (or Go packages) that caused the verdict
    god_files_added: tuple[str, ...] = ()
    god_files_removed: tuple[str, ...] = ()
    modules_entering_cycles: tuple[str, ...] = ()
    modules_leaving_cycles: tuple[str, ...] = ()
    nesting_rose: tuple[str, ...] = ()
    nesting_fell: tuple[str, ...] = ()
    god_files_delta: int = 0
    cycles_delta: int = 0              # import-time cycles, what the verdict counts
    every_edge_cycles_delta: int = 0   # every edge, deferred imports included (grimp, madge)
    modules_in_cycles_delta: int = 0
    max_nesting_before: int = 0
    max_nesting_after: int = 0
    lines_delta: int = 0
    paths: tuple[str, ...] | None = None

    @property
    def max_nesting_delta(self) -> int:
        return self.max_nesting_after - self.max_nesting_before

    def to_dict(self) -> dict:
        """JSON form of `git neo health --diff A B --json`."""
        return {
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "files": list(self.files),
            "paths": list(self.paths) if self.paths is not None else None,
            "god_files_delta": self.god_files_delta,
            "cycles_delta": self.cycles_delta,
            "every_edge_cycles_delta": self.every_edge_cycles_delta,
            "modules_in_cycles_delta": self.modules_in_cycles_delta,
            "max_nesting_delta": self.max_nesting_delta,
            "lines_delta": self.lines_delta,
            "god_files_added": list(self.god_files_added),
            "god_files_removed": list(self.god_files_removed),
            "modules_entering_cycles": list(self.modules_entering_cycles),
            "modules_leaving_cycles": list(self.modules_leaving_cycles),
            "nesting_rose": list(self.nesting_rose),
            "nesting_fell": list(self.nesting_fell),
        }


class _View:
    """The part of a snapshot a comparison looks at (all of it, or the given paths)."""

    def __init__(self, snapshot: HealthSnapshot, paths: frozenset[str] | None, every_edge: bool = False) -> None:
        metrics = snapshot.file_metrics
        if paths is not None:
            metrics = {p: m for p, m in metrics.items() if p in paths}
        self.metrics = metrics
        self.god_files = {p for p, m in metrics.items() if snapshot.is_god_file(m)}
        self.max_nesting = max((m.max_nesting for m in metrics.values()), default=0)
        every = snapshot.components
        components = every if every_edge else snapshot.import_time_components
        if paths is not None:
            # Go files are graph nodes through their package directory ("." at the root).
            nodes = set(paths) | {posixpath.dirname(p) or "." for p in paths if p.endswith(".go")}
            components = tuple(c for c in components if nodes.intersection(c))
            every = tuple(c for c in every if nodes.intersection(c))
        self.components = components
        # every-edge cycles that are not import-time cycles themselves: they need a deferred import
        # (measure.cycle_paths' own test; a difference of counts went negative when deferred edges
        # merged two import-time cycles into one)
        import_time = {tuple(c) for c in snapshot.import_time_components}
        self.deferred_only = 0 if every_edge else sum(1 for c in every if tuple(c) not in import_time)
        self.every_edge = len(every)
        self.modules_in_cycles = {node for c in components for node in c}
        self.lines = sum(m.lines for m in metrics.values())


def health_delta(before: HealthSnapshot, after: HealthSnapshot, *, nesting_noise: int = 1,
                 paths: Iterable[str] | None = None, every_edge: bool = False) -> HealthDelta:
    """Compare *before* with *after*; restrict to *paths* (repository paths) if given; with
    *every_edge* count every cycle, deferred imports included (`counts_every_edge`)."""
    wanted = frozenset(paths) if paths is not None else None
    old, new = _View(before, wanted, every_edge), _View(after, wanted, every_edge)

    god_added = sorted(new.god_files - old.god_files)
    god_removed = sorted(old.god_files - new.god_files)
    god_delta = len(new.god_files) - len(old.god_files)
    cycles_delta = len(new.components) - len(old.components)
    entering = sorted(new.modules_in_cycles - old.modules_in_cycles)
    leaving = sorted(old.modules_in_cycles - new.modules_in_cycles)
    modules_delta = len(new.modules_in_cycles) - len(old.modules_in_cycles)
    nesting_delta = new.max_nesting - old.max_nesting
    rose, fell = _nesting_changes(old, new, nesting_noise)

    merged, split, fresh, gone = _regrouping(old.components, new.components)
    # Worse: more modules in cycles, more cycles among modules in none before than cycles gone
    # (a package renamed with its cycle is one gone and one fresh: no change), or cycles tangled
    # into one (two cycles merging keep their modules but add the edges between them). Better: the
    # reverse, with nothing worse (a cycle split in two lost the edges that joined its halves).
    cycles_worse = modules_delta > 0 or fresh > gone or bool(merged)
    cycles_better = not cycles_worse and (modules_delta < 0 or gone > fresh or bool(split))
    nesting_worse = nesting_delta > nesting_noise
    nesting_better = nesting_delta < -nesting_noise

    god_text = _god_sentence(old, new, god_added, god_removed) if god_added or god_removed else ""
    cycle_text = (_cycle_sentence(old, new, entering, leaving, every_edge, merged if cycles_worse else split,
                                  "merged" if cycles_worse else "split")
                  if cycles_worse or cycles_better else "")
    nesting_text = ""
    if nesting_worse or nesting_better:
        nesting_text = _nesting_sentence(old.max_nesting, new.max_nesting, nesting_noise,
                                         rose if nesting_worse else fell, "rose" if nesting_worse else "fell")
    elif nesting_delta:
        nesting_text = (f"max nesting {old.max_nesting} -> {new.max_nesting}, "
                        f"within the noise band of {nesting_noise}")
    deferred_text = ""
    if new.deferred_only != old.deferred_only:
        deferred_text = (f"cycles through deferred imports {old.deferred_only} -> {new.deferred_only} "
                         "(they do not run at import time; not counted)")

    drivers: list[str] = []   # the sentences behind the verdict, listed first
    files: list[str] = []
    if god_delta > 0:
        verdict, drivers, files = REGRESSION, [god_text], god_added
    elif god_delta < 0:
        verdict, drivers, files = IMPROVEMENT, [god_text], god_removed
    elif cycles_worse or nesting_worse:
        verdict = REGRESSION
        if cycles_worse:
            drivers.append(cycle_text)
            files += entering + merged   # a merge brings no module into cycles: the merged ones caused it
        if nesting_worse:
            drivers.append(nesting_text)
            files += rose
    elif cycles_better or nesting_better:
        verdict = IMPROVEMENT
        if cycles_better:
            drivers.append(cycle_text)
            files += leaving + split
        if nesting_better:
            drivers.append(nesting_text)
            files += fell
    else:
        verdict = NEUTRAL
    reasons = drivers + [t for t in (god_text, cycle_text, nesting_text, deferred_text) if t and t not in drivers]
    if not reasons:
        reasons.append(f"no change in god files, {'import' if every_edge else 'import-time'} cycles or max nesting")

    return HealthDelta(
        before=before, after=after, verdict=verdict, reasons=tuple(reasons),
        files=tuple(dict.fromkeys(files)),
        god_files_added=tuple(god_added), god_files_removed=tuple(god_removed),
        modules_entering_cycles=tuple(entering), modules_leaving_cycles=tuple(leaving),
        nesting_rose=tuple(rose), nesting_fell=tuple(fell),
        god_files_delta=god_delta, cycles_delta=cycles_delta, modules_in_cycles_delta=modules_delta,
        every_edge_cycles_delta=new.every_edge - old.every_edge,
        max_nesting_before=old.max_nesting, max_nesting_after=new.max_nesting,
        lines_delta=new.lines - old.lines,
        paths=tuple(sorted(wanted)) if wanted is not None else None,
    )


def _nesting_changes(old: _View, new: _View, noise: int) -> tuple[list[str], list[str]]:
    """Files whose own nesting moved by more than the band; a new file counts if it alone
    lifts the maximum past the band, a removed one if it alone held the maximum up."""
    rose, fell = [], []
    for path in sorted(set(old.metrics) | set(new.metrics)):
        before = old.metrics.get(path)
        after = new.metrics.get(path)
        if before is not None and after is not None:
            change = after.max_nesting - before.max_nesting
            if change > noise:
                rose.append(path)
            elif change < -noise:
                fell.append(path)
        elif after is not None and after.max_nesting > old.max_nesting + noise:
            rose.append(path)
        elif before is not None and before.max_nesting > new.max_nesting + noise:
            fell.append(path)
    return rose, fell


NAMES_SHOWN = 8   # file names per list in a reason; a 3,000-module cycle must not make a 60 KB sentence


def _names(paths: Sequence[str]) -> str:
    """The first few names, and how many more."""
    shown = ", ".join(paths[:NAMES_SHOWN])
    return shown + (f" and {len(paths) - NAMES_SHOWN} more" if len(paths) > NAMES_SHOWN else "")


def _god_sentence(old: _View, new: _View, added: list[str], removed: list[str]) -> str:
    text = f"god files {len(old.god_files)} -> {len(new.god_files)}"
    details = []
    if added:
        details.append("new: " + _names(added))
    if removed:
        details.append("no longer: " + _names(removed))
    return text + (f" ({'; '.join(details)})" if details else "")


def _regrouping(old: tuple, new: tuple) -> tuple[list[str], list[str], int, int]:
    """How the cycles regrouped: the modules of after-cycles that join two or more before-cycles
    (*merged*), of before-cycles now in two or more after-cycles (*split*), and the number of
    after-cycles touching no before-cycle (*fresh*) and of before-cycles touching no after-cycle
    (*gone*)."""
    owner = {node: n for n, component in enumerate(old) for node in component}
    merged: list[str] = []
    fresh = 0
    touched_by: dict[int, set[int]] = {}
    for m, component in enumerate(new):
        olds = {owner[node] for node in component if node in owner}
        if len(olds) > 1:
            merged.extend(component)
        fresh += not olds
        for n in olds:
            touched_by.setdefault(n, set()).add(m)
    split = [node for n, ms in touched_by.items() if len(ms) > 1 for node in old[n]]
    return sorted(merged), sorted(split), fresh, len(old) - len(touched_by)


def _cycle_sentence(old: _View, new: _View, entering: list[str], leaving: list[str], every_edge: bool,
                    regrouped: Sequence[str] = (), how: str = "merged") -> str:
    text = (f"{'import' if every_edge else 'import-time'} cycles {len(old.components)} -> {len(new.components)}, "
            f"modules in cycles {len(old.modules_in_cycles)} -> {len(new.modules_in_cycles)}")
    details = []
    if regrouped:
        details.append(f"cycles {how}: " + _names(regrouped))
    if entering:
        details.append("now in a cycle: " + _names(entering))
    if leaving:
        details.append("out of cycles: " + _names(leaving))
    return text + (f" ({'; '.join(details)})" if details else "")


def _nesting_sentence(before: int, after: int, noise: int, files: list[str], direction: str) -> str:
    text = f"max nesting {before} -> {after} ({after - before:+d}, beyond the noise band of {noise})"
    return text + (f"; {direction} in " + _names(files) if files else "")
