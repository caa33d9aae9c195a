"""Option names are case-insensitive: Spark hands a data source its options lower-cased, and
every option map is read the same way. `lowered` is the one place names are lower-cased (a
unit test checks that no other module does it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def lowered(options: Mapping[Any, Any]) -> dict[str, Any]:
    """`options` with lower-case names (values kept), as Spark passes them to a data source."""
    return {str(k).lower(): v for k, v in options.items()}
