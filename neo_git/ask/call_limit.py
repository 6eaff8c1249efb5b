"""One model call under a wall-clock limit.

The SDKs' and urllib's timeouts are per network read: a server that sends one byte every few
seconds never trips them, and their retries and backoff add to it. `complete_within` runs the
call in a daemon thread and stops waiting at `request.timeout` seconds (the loop has already
shortened it to what is left of the question's time budget): the call is then reported as a
time-out, and the thread, still reading, ends with the process (`cli.exit_now` does not wait
for daemon threads)."""
from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING

from neo_git.ask.providers import ProviderError

if TYPE_CHECKING:  # pragma: no cover
    from neo_git.ask.model import ModelReply, ModelRequest
    from neo_git.ask.providers import Provider


def complete_within(provider: Provider, request: ModelRequest) -> ModelReply:
    """`provider.complete(request)`, or a "timeout" ProviderError once `request.timeout` seconds
    have passed, whatever the server is doing."""
    results: queue.Queue = queue.Queue(maxsize=1)

    def call() -> None:
        try:
            results.put((True, provider.complete(request)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as it is
            results.put((False, exc))

    threading.Thread(target=call, name=f"neo-ask-{request.stage}", daemon=True).start()
    try:
        ok, value = results.get(timeout=max(0.001, request.timeout))
    except queue.Empty:
        settings = getattr(provider, "settings", None)
        who = f"{provider.name} ({settings.model})" if settings is not None else provider.name
        raise ProviderError("timeout", f"{who} did not answer within {request.timeout:g} s (the whole call: "
                            "a reply still arriving counts)", "raise `git config neo.timeout`, or ask with a "
                            "lower --effort") from None
    if ok:
        return value
    raise value
