"""What the driver hands a source task for one micro-batch, and what the task's reader hands
its writer (the attempt manifest). Plain data: pickled into Spark input partitions and JSON files.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from spark_eos_connect.errors import EosConnectError

SPOOL_ENV = "EOSCONNECT_SPOOL_DIR"


@dataclass(frozen=True)
class SourceTaskPlan:
    """One source task's share of one micro-batch (driver → executor)."""

    connector: str
    task: int
    task_class: str
    task_config: dict[str, str]
    transactional_id: str
    exactly_once: bool
    transaction_boundary: str
    transaction_interval_ms: int
    offsets_topic: str
    offsets_topic_partitions: int
    mirror_offsets_topic: str | None
    mirror_offsets_topic_partitions: int
    committed: list[tuple[dict[str, Any], dict[str, Any]]]
    offsets_positions: dict[int, int]
    max_records: int
    max_poll_duration_ms: int
    group_id: str = "eosconnect"
    config_topic: str = ""
    status_topic: str = ""
    generation_commit_offset: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        """Everything the writer needs from the plan (no Kafka client settings: no secrets)."""
        return asdict(self)

    @staticmethod
    def from_manifest(data: dict[str, Any]) -> SourceTaskPlan:
        """Rebuild a plan from `manifest()` output read back from JSON."""
        data = dict(data)
        data["committed"] = [(p, o) for p, o in data["committed"]]
        data["offsets_positions"] = {int(k): v for k, v in data["offsets_positions"].items()}
        return SourceTaskPlan(**data)


def spool_dir() -> Path:
    """Executor-local folder where a task attempt's reader leaves its manifest for its writer."""
    return Path(os.environ.get(SPOOL_ENV) or Path(tempfile.gettempdir()) / "eosconnect-spool")


def write_manifest(attempt_key: str, plan: SourceTaskPlan) -> Path:
    """Atomically publish `plan` for the writer of the same task attempt."""
    folder = spool_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{attempt_key}.json"
    staging = folder / f".{attempt_key}.{os.getpid()}.tmp"
    staging.write_text(json.dumps(plan.manifest()))
    staging.replace(target)
    return target


class MissingManifestError(EosConnectError):
    """The writer found no manifest: its rows did not come from an eosconnect source reader."""


def read_manifest(attempt_key: str, remove: bool = True) -> SourceTaskPlan:
    """The plan the reader of this task attempt published; removed once read."""
    path = spool_dir() / f"{attempt_key}.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise MissingManifestError(
            "the eosconnect writer (source mode) must consume rows of "
            "spark.readStream.format('eosconnect') in the same Spark stage (no repartition or "
            "shuffle in between); no source task manifest was found for this task attempt"
        ) from None
    if remove:
        path.unlink(missing_ok=True)
    return SourceTaskPlan.from_manifest(data)


def _boundaries_path(attempt_key: str) -> Path:
    return spool_dir() / f"{attempt_key}.boundaries"


def append_boundary(attempt_key: str, row: int, action: str) -> None:
    """Reader: the task asked to end a transaction (`commit`/`abort`) after batch row `row`."""
    path = _boundaries_path(attempt_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(f"{row} {action}\n")


def read_boundaries(attempt_key: str) -> dict[int, str]:
    """Writer: every boundary the reader of this attempt has published so far."""
    try:
        lines = _boundaries_path(attempt_key).read_text().splitlines()
    except FileNotFoundError:
        return {}
    boundaries = {}
    for line in lines:
        row, _, action = line.partition(" ")
        boundaries[int(row)] = action
    return boundaries


def remove_boundaries(attempt_key: str) -> None:
    """Writer: forget this attempt's boundaries once the attempt is over."""
    _boundaries_path(attempt_key).unlink(missing_ok=True)
