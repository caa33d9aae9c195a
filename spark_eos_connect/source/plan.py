"""What the driver hands a source task for one micro-batch. Plain data: pickled into Spark
input partitions and sent on to the task's host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.ports import CommitHooks
from spark_eos_connect.runtime.commit_hooks import NO_HOOKS
from spark_eos_connect.runtime.config_references import ConfigProviders
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy


@dataclass(frozen=True)
class RecordConversion:
    """The connector's converters, transforms and `errors.*` policy (driver → task host).

    `options` holds every `<key|value|header>.converter.<option>`, `transforms`, `predicates`
    and their `<alias>.<option>`s, references unresolved; a converter left None keeps the
    default (bytes as is, str as UTF-8, other values as JSON).
    """

    key_converter: str | None = None
    value_converter: str | None = None
    header_converter: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    errors: ErrorPolicy = field(default_factory=lambda: ErrorPolicy(""))


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
    status_generation: int = 0
    """The generation the driver writes in status records; the task host writes it too."""
    extra: dict[str, Any] = field(default_factory=dict)
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """Resolve `task_config` and the Kafka settings with these on the task's host."""
    conversion: RecordConversion | None = None
    """None: records go to Kafka as they are (the default, and the fast path)."""
    hooks: CommitHooks = NO_HOOKS
    """The driver's commit hooks (none in production; `testing.faults` in crash tests)."""
