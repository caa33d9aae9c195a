"""Scanning the package's source for lines only one module may hold."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "spark_eos_connect"


def lines_outside(owner: Path, pattern: re.Pattern[str]) -> list[str]:
    """`path:line: text` of every line of the package matching `pattern`, but in `owner`."""
    return [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != owner
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
