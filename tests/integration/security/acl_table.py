"""The ACLs the project needs: README.md's "ACLs" table as data, and the grants for one pipeline.

`ACL_ROWS` holds each row exactly as the README prints it (a unit test compares the two) and
how the tests turn it into ACL grants for a concrete pipeline (`grants`). Pure Python: the
integration tests map `Grant`s to confluent_kafka `AclBinding`s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

CLUSTER = "kafka-cluster"
SOURCE = "the exactly-once source pipeline"
OFFSETS = "altering and resetting offsets"
SINK = "sink connectors"
NOTHING = "nothing: since Kafka 3.0 an idempotent producer needs only Write on a topic (KIP-679)"


@dataclass(frozen=True)
class Grant:
    """One ALLOW ACL: `operation` on `resource` `name` (a prefix when `prefixed`)."""

    operation: str
    resource: str
    name: str
    prefixed: bool = False


@dataclass(frozen=True)
class Pipeline:
    """The names one deployment's ACLs are about."""

    group_id: str
    connectors: tuple[str, ...]
    data_topics: tuple[str, ...]
    internal_topics: tuple[str, ...]
    sink_topics: tuple[str, ...] = ()
    sink_connectors: tuple[str, ...] = ()


@dataclass(frozen=True)
class AclRow:
    """A row of the README table and the grants it stands for."""

    key: str = field(compare=False)
    """A short id for test names."""
    operations: tuple[str, ...]
    resource: str
    name: str
    names: Callable[[Pipeline], list[tuple[str, bool]]] = field(compare=False)
    needed_by: str = field(default=SOURCE, compare=False)
    """What fails without the row (proven for SOURCE by `test_acls.py`)."""

    def grants(self, pipeline: Pipeline) -> list[Grant]:
        """Every (operation, name) this row grants for `pipeline`."""
        return [
            Grant(op, self.resource, name, prefixed)
            for name, prefixed in self.names(pipeline)
            for op in self.operations
        ]

    def markdown(self) -> tuple[str, str, str]:
        """(operation, resource, name) cells as the README prints them."""
        return ", ".join(self.operations), self.resource, self.name


def _literal(names: Iterable[str]) -> list[tuple[str, bool]]:
    return [(name, False) for name in names]


ACL_ROWS: tuple[AclRow, ...] = (
    AclRow(
        "task-transactional-ids",
        ("Write", "Describe"),
        "TransactionalId",
        "`<group.id>-<connector>-<task>` for every task (prefix ACL `<group.id>-<connector>-`)",
        lambda p: [(f"{p.group_id}-{c}-", True) for c in p.connectors],
    ),
    AclRow(
        "leader-transactional-id",
        ("Write", "Describe"),
        "TransactionalId",
        "`connect-cluster-<group.id>` (the config-topic leader)",
        lambda p: _literal([f"connect-cluster-{p.group_id}"]),
    ),
    AclRow(
        "offsets-transactional-id",
        ("Write", "Describe"),
        "TransactionalId",
        "`<group.id>-<connector>` (altering and resetting offsets)",
        lambda p: _literal(f"{p.group_id}-{c}" for c in p.connectors),
        OFFSETS,
    ),
    AclRow(
        "cluster-idempotent-write",
        ("IdempotentWrite",),
        "Cluster",
        "the Kafka cluster",
        lambda p: _literal([CLUSTER]),
        NOTHING,
    ),
    AclRow(
        "topic-write",
        ("Write", "Describe"),
        "Topic",
        "the connectors' data topics and the three internal topics",
        lambda p: _literal([*p.data_topics, *p.internal_topics]),
    ),
    AclRow(
        "topic-read",
        ("Read", "Describe"),
        "Topic",
        "the three internal topics, and the sink connectors' topics",
        lambda p: _literal([*p.internal_topics, *p.sink_topics]),
    ),
    AclRow(
        "sink-groups",
        ("Read",),
        "Group",
        "`connect-<name>` for each sink connector",
        lambda p: _literal(f"connect-{c}" for c in p.sink_connectors),
        SINK,
    ),
)


SOURCE_ROWS = tuple(row for row in ACL_ROWS if row.needed_by == SOURCE)


def grants(pipeline: Pipeline, rows: Iterable[AclRow] = ACL_ROWS) -> set[Grant]:
    """The union of `rows`' grants for `pipeline` (a grant two rows share counts once)."""
    return {grant for row in rows for grant in row.grants(pipeline)}


def grants_without(pipeline: Pipeline, missing: AclRow) -> set[Grant]:
    """Every row's grants but `missing`'s (those another row also grants stay)."""
    return grants(pipeline, [row for row in ACL_ROWS if row is not missing])


def readme_rows(markdown: str) -> list[tuple[str, str, str]]:
    """The (operation, resource, name) rows of the table under `### ACLs` in `markdown`."""
    lines = markdown.split("\n### ACLs\n", 1)[1].splitlines()
    table = _leading_table(lines)
    rows = [tuple(cell.strip() for cell in line.strip().strip("|").split(" | ")) for line in table]
    header, _separator, *body = rows
    assert header == ("operation", "resource", "name"), header
    return [(r[0], r[1], r[2]) for r in body]


def _leading_table(lines: list[str]) -> Iterable[str]:
    """The first run of `|`-lines, skipping blank lines before it."""
    started = False
    for line in lines:
        if line.startswith("|"):
            started = True
            yield line
        elif started or line.strip():
            return
