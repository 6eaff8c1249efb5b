"""Embedding many texts in bounded memory: batch by batch, each appended to the vector cache
as it is done, with a progress line on a terminal.

The first recall of a large store embeds every fact. In one call that held every text, every
token batch and every vector at once (861 MB at 50,000 facts with MiniLM); here a batch's
texts are read, embedded, stored and handed on, then dropped, so memory stays that of one
batch whatever the store's size. An interrupted run keeps what it stored: the next one embeds
only the rest.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

BATCH = 1024           # texts stored per append (one lock and fsync each)
CALL = 32              # texts per embedder call, at most
# A transformer's working memory grows with (texts in the call) x (longest text)^2: with MiniLM
# under ONNX Runtime 16 texts of ~256 tokens took +320 MB over the loaded model, 256 of them
# +6 GB. A call takes texts while calls x longest^2 stays within this (8 texts of 256 tokens,
# 32 of 128; ~4 characters a token); short facts still go 32 at a time.
CALL_BUDGET = 8 * 256 * 256
# A run of at most this many texts also stays in the vector cache's memory (~8 MB at 512 floats):
# a process usually asks for them again. A larger run (a store's first embedding) keeps none of
# them; they are read back from the file if asked for (holding all of them cost 100 MB at 50,000).
REMEMBER_AT = 4096
DELAY_SECONDS = 1.0    # nothing is drawn for work that ends sooner
REFRESH_SECONDS = 0.2


class VectorSink(Protocol):
    """Where the batches go: the vector cache (`embed/cache.py`'s `VectorCache.store`)."""

    def store(self, embedder, keys: list[bytes], embedded: np.ndarray, remember: bool = True) -> np.ndarray: ...


def embed_in_batches(cache: VectorSink, embedder, keys: Sequence[bytes], text_of: Callable[[int], str],
                     take: Callable[[int, np.ndarray], None], *, batch: int = BATCH,
                     stream: TextIO | None = None) -> None:
    """Embed the texts *text_of(i)* of *keys* (no two alike) `CALL` at a time, append them to
    *cache* *batch* at a time and hand each batch's vectors to *take(first index, vectors)*;
    nothing is kept here (nor in the cache's memory, past `REMEMBER_AT` texts)."""
    progress = _Progress(len(keys), stream if stream is not None else sys.stderr)
    remember = len(keys) <= REMEMBER_AT
    try:
        import numpy as np

        for start in range(0, len(keys), batch):
            end = min(len(keys), start + batch)
            vectors = np.empty((end - start, embedder.dim), dtype=np.float32)
            texts = [text_of(i) for i in range(start, end)]
            for first, last in calls(texts):
                vectors[first:last] = embedder.embed(texts[first:last])
                progress.update(start + last)
            del texts
            take(start, cache.store(embedder, list(keys[start:end]), vectors, remember=remember))
    finally:
        progress.close()


def calls(texts: Sequence[str]) -> list[tuple[int, int]]:
    """(first, end) of each embedder call over *texts*, in order: at most `CALL` texts, and no
    more than `CALL_BUDGET` allows for the longest of them (a long text may go alone)."""
    out, first, longest = [], 0, 0
    for i, text in enumerate(texts):
        tokens = min(512, len(text) // 4 + 2)
        widest = max(longest, tokens)
        if i > first and (i - first == CALL or (i - first + 1) * widest * widest > CALL_BUDGET):
            out.append((first, i))
            first, widest = i, tokens
        longest = widest
    if first < len(texts):
        out.append((first, len(texts)))
    return out


class _Progress:
    """`embedding facts: 12,800/50,000` on a terminal's stderr, rewritten in place."""

    def __init__(self, total: int, stream: TextIO, clock=time.monotonic) -> None:
        self.total = total
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.drawn = 0
        self.last = 0.0
        try:
            self.enabled = total > CALL and bool(stream.isatty())
        except (AttributeError, ValueError):
            self.enabled = False

    def update(self, done: int) -> None:
        now = self.clock()
        if not self.enabled or now - self.start < DELAY_SECONDS or now - self.last < REFRESH_SECONDS:
            return
        self.last = now
        line = f"embedding facts: {done:,}/{self.total:,}"
        self._write("\r" + line + " " * max(0, self.drawn - len(line)))
        self.drawn = len(line)

    def close(self) -> None:
        if self.drawn:
            self._write("\r" + " " * self.drawn + "\r")
            self.drawn = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal: stop drawing, keep embedding
            self.enabled = False
