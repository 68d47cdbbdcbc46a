"""The autotuner's progress display: a tqdm bar when tqdm is importable, plain lines on stderr
otherwise, and the closing table of failed configs."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional


def _fmt_time(s: Optional[float]) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


class Progress:
    """Counts compiled (ok / failed) and benchmarked configs, the best time and config so far,
    and an estimate of the time left."""

    def __init__(self, title: str, total: int, enabled: bool = True, stream: Any = None) -> None:
        self.title, self.total, self.enabled = title, total, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.compiled = self.failed = self.benchmarked = self.from_records = 0
        self.best: Optional[tuple] = None  # (seconds, config)
        self.start = time.perf_counter()
        self._bar = None
        if enabled and total:
            try:
                from tqdm.auto import tqdm  # noqa: PLC0415

                self._bar = tqdm(total=total, desc=title, file=self.stream, leave=True)
            except ImportError:
                self._bar = None

    def _done(self) -> int:
        return self.benchmarked + self.failed + self.from_records

    def eta(self) -> Optional[float]:
        done = self._done()
        if done == 0 or done >= self.total:
            return None
        elapsed = time.perf_counter() - self.start
        return elapsed / done * (self.total - done)

    def status(self) -> str:
        best = ("-" if self.best is None
                else f"{_fmt_time(self.best[0])} {self.best[1]}")
        eta = self.eta()
        left = "" if eta is None else f", ~{eta:.1f} s left"
        rec = f", {self.from_records} from records" if self.from_records else ""
        return (f"compiled {self.compiled} ok / {self.failed} failed, "
                f"benchmarked {self.benchmarked}/{self.total}{rec}, best {best}{left}")

    def event(self, what: str, advance: bool = False) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(self.status(), refresh=not advance)
            if advance:
                self._bar.update(1)
        else:
            print(f"{self.title}: {what}; {self.status()}", file=self.stream, flush=True)

    def close(self, failures: list) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        elapsed = time.perf_counter() - self.start
        best = "none" if self.best is None else f"{_fmt_time(self.best[0])} {self.best[1]}"
        print(f"{self.title}: done in {elapsed:.2f} s; best {best}", file=self.stream, flush=True)
        if failures:
            print(failure_table(self.title, failures, self.total), file=self.stream, flush=True)


def failure_table(title: str, failures: list, total: int) -> str:
    """``failures``: (config, stage, error). One row each, the error's first line."""
    rows = [(str(c), stage, (err.strip().splitlines() or [""])[0]) for c, stage, err in failures]
    w0 = max(len("config"), *(len(r[0]) for r in rows))
    w1 = max(len("stage"), *(len(r[1]) for r in rows))
    lines = [f"{title}: {len(failures)} of {total} configs failed",
             f"  {'config'.ljust(w0)}  {'stage'.ljust(w1)}  error"]
    lines += [f"  {a.ljust(w0)}  {b.ljust(w1)}  {c}" for a, b, c in rows]
    return "\n".join(lines)
