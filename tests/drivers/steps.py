"""Step reporting shared by the Python driver scenarios.

Each step prints PASS or FAIL with its name (and the error: class, SQLSTATE,
message); the scenario ends with a "N passed, N failed" line and exits 1 if
any step failed. A failed step does not stop the scenario: later steps run
(they may fail because of it), so one run shows everything that breaks. A step's title has no ": " in it
(scripts/drivers.sh reads the title up to the first one).
"""

import asyncio
import os
import sys
import traceback


def describe(exc):
    """One line naming an error: its class, SQLSTATE when it has one, message."""
    # The driver's exception may be wrapped (SQLAlchemy's DBAPIError.orig).
    inner = getattr(exc, "orig", None) or exc
    code = getattr(inner, "sqlstate", None) or getattr(inner, "pgcode", None)
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}" + (f" [{code}]" if code else "") + f": {first}"


class Scenario:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.first_failure = None
        self.on_failure = []  # callbacks that put the sessions back in order
        self.on_async_failure = []  # the same, as coroutine functions
        print(f"== {name} ({describe_target()})", flush=True)

    def _fail(self, title, exc):
        self.failed += 1
        if self.first_failure is None:
            self.first_failure = title
        print(f"FAIL {title}: {describe(exc)}", flush=True)
        if os.environ.get("DRIVERS_VERBOSE"):
            traceback.print_exc()
        for cleanup in self.on_failure:
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - best effort
                pass

    def step(self, title):
        """Decorator: runs the function at once as the step `title`."""

        def run(fn):
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                self._fail(title, exc)
            else:
                self.passed += 1
                print(f"PASS {title}", flush=True)
            return fn

        return run

    async def astep(self, title, fn, timeout=30):
        """Runs the coroutine function `fn` as the step `title`."""
        try:
            await asyncio.wait_for(fn(), timeout)
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            if isinstance(exc, asyncio.TimeoutError):
                exc = TimeoutError(f"no answer within {timeout}s")
            self._fail(title, exc)
            for cleanup in self.on_async_failure:
                try:
                    await cleanup()
                except Exception:  # noqa: BLE001
                    pass
        else:
            self.passed += 1
            print(f"PASS {title}", flush=True)

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed", flush=True)
        sys.exit(1 if self.failed else 0)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def check_eq(got, want, what="value"):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def check_exact(got, want, what="value"):
    """Equal and written the same: a Decimal's scale and NaN (which equals
    nothing) count, bytes and UUIDs compare by their repr."""
    if repr(got) != repr(want):
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def describe_target():
    host = os.environ.get("PGHOST", "(default host)")
    port = os.environ.get("PGPORT", "(default port)")
    return f"host={host} port={port}"
