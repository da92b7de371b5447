"""`stop_on_signals` (server/cli/stop_signals.py): a signal is a stop request that the
main thread sees at once, whichever thread the kernel hands it to.

Real signals to this process; `signal.pthread_kill` aims one at a chosen thread, as the
kernel may do with a signal sent to the process (`kill PID`, `systemctl stop`).
"""

from __future__ import annotations

import os
import signal
import threading

from ctxd.server.cli.stop_signals import stop_on_signals

WAIT = 60.0  # only bounds a failure; a stop request is seen at once


def test_a_signal_taken_by_another_thread_wakes_the_main_threads_wait():
    # The main thread waits in `Event.wait` (as `ctxd watch` does); a plain handler runs
    # only when the main thread next runs bytecode, i.e. at the end of that wait.
    stop = threading.Event()
    before = signal.getsignal(signal.SIGTERM)
    parked = threading.Event()
    other = threading.Thread(target=parked.wait, daemon=True)
    other.start()
    try:
        with stop_on_signals(stop, (signal.SIGTERM,)) as received:
            assert other.ident is not None
            signal.pthread_kill(other.ident, signal.SIGTERM)
            assert stop.wait(WAIT)
        assert received == [signal.SIGTERM]
    finally:
        parked.set()
        other.join(WAIT)
    assert signal.getsignal(signal.SIGTERM) is before  # put back


def test_the_second_signal_ends_the_process_when_asked():
    # What was there before is put back (a background job, as CI's, inherits SIGINT ignored).
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    stop = threading.Event()
    with stop_on_signals(stop, (signal.SIGTERM, signal.SIGINT), second_ends=True) as received:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.wait(WAIT)
        assert received == [signal.SIGINT]
        # The first one put the default action back: a second one would end the process.
        assert signal.getsignal(signal.SIGINT) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_outside_the_main_thread_it_installs_nothing():
    seen: list[object] = []

    def body() -> None:
        with stop_on_signals(threading.Event(), (signal.SIGTERM,)) as received:
            seen.append(received)

    t = threading.Thread(target=body)
    t.start()
    t.join(WAIT)
    assert seen == [[]]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
