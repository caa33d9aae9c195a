"""`make test-times`' summary: the slowest test files of a times file that the suite's
`$EOSCONNECT_TEST_TIMES` hook wrote (seconds, phase, test id per line; `tests/conftest.py`)."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path


def seconds_by_file(lines: list[str]) -> dict[str, float]:
    """Seconds of every phase of every test, summed per test file."""
    totals: dict[str, float] = defaultdict(float)
    for line in lines:
        seconds, _phase, test = line.rstrip("\n").split("\t", 2)
        totals[test.split("::", 1)[0]] += float(seconds)
    return dict(totals)


def slowest(totals: dict[str, float], count: int = 30) -> list[str]:
    """The `count` slowest files, slowest first, one line each."""
    ranked = sorted(totals.items(), key=lambda item: -item[1])[:count]
    return [f"{seconds:8.1f} s  {path}" for path, seconds in ranked]


def main(argv: list[str]) -> int:
    """Print the slowest files of the times file `argv[0]`."""
    lines = Path(argv[0]).read_text(encoding="utf-8").splitlines()
    print("\n".join(slowest(seconds_by_file(lines))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
