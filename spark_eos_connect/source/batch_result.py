"""`BatchResult`: what one live source task did in one micro-batch (executor side; the stream
writer reports it to the driver)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BatchResult:
    """What one task did in one micro-batch."""

    connector: str = ""
    task: int = -1
    records: int = 0
    transactions: int = 0
    offsets_committed: int = 0
    aborted_transactions: int = 0
    stale_rows_skipped: int = 0
    exactly_once: bool = True
    reused: bool = False
    open_transaction: bool = False
    replayed: bool = False
    """The rows are those an earlier attempt of the same micro-batch committed (nothing ran)."""
