"""Signals as a stop request: `ctxd watch` (SIGINT, SIGTERM) and `ctxd index` (SIGTERM).

`stop_on_signals(stop, signals)` installs handlers that set the `threading.Event` `stop`
(and record which signal came) instead of ending the process at once, so the command ends
at a consistent point and says so. The kernel hands a process's signal to any one of its
threads; Python runs the handler later, in the main thread, at its next bytecode. A main
thread asleep in `Event.wait(timeout)` is woken only when the signal happened to land on
it, else it slept on to the end of its timeout (`ctxd watch` took up to a second to notice
a SIGTERM on a busy machine). So the handlers also write to a wake-up pipe
(`signal.set_wakeup_fd`, done in C by whichever thread takes the signal), and a small
thread reading it sets `stop` at once.

Used by `server/cli/watch_cmd.py` and `server/cli/main.py` (`index`). Outside the main
thread (a test runner's worker, say) it installs nothing: signals cannot be handled there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any


@contextlib.contextmanager
def stop_on_signals(
    stop: threading.Event,
    signals: Sequence[signal.Signals],
    *,
    second_ends: bool = False,
) -> Iterator[list[int]]:
    """While inside, each of `signals` sets `stop` instead of ending the process.

    Args:
        stop: the event to set.
        signals: the signals that request the stop.
        second_ends: after the first signal, put its default action back, so that a second
            one ends the process at once (a run that is slow to reach its next stop point).

    Yields:
        The numbers of the signals received, in order (empty while none came).
    """
    received: list[int] = []
    if not signals or threading.current_thread() is not threading.main_thread():
        yield received
        return
    wanted = {int(s) for s in signals}

    def handler(signum: int, _frame: FrameType | None) -> None:
        if signum not in received:
            received.append(signum)
        stop.set()
        if second_ends:
            signal.signal(signum, signal.SIG_DFL)

    previous: dict[signal.Signals, Any] = {s: signal.signal(s, handler) for s in signals}
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    old_wakeup = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def relay() -> None:
        with contextlib.suppress(OSError):
            while data := os.read(read_end, 64):
                came = [n for n in data if n in wanted]
                for n in came:
                    if n not in received:
                        received.append(n)
                if came:
                    stop.set()
        os.close(read_end)

    threading.Thread(target=relay, name="ctxd-signals", daemon=True).start()
    try:
        yield received
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for sig, old in previous.items():
            signal.signal(sig, old)
        os.close(write_end)  # the relay thread reads EOF and ends
