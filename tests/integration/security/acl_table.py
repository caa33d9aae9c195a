"""The ACLs the project needs: the "ACLs" table of docs/security.md as data, and the grants for
one deployment.

`ACL_ROWS` holds each row as the security page prints it (a unit test compares the two), which
of the paths (`PATHS`) need it, and how the tests turn it into ACL grants for a concrete
deployment (`grants`). `test_acls.py` runs each path as a principal granted exactly the rows the
path needs, then once without each of them. Pure Python: the integration tests map `Grant`s to
confluent_kafka `AclBinding`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

SOURCE = "source"
SINK = "sink"
DELTA = "Delta"
ADMIN = "REST/CLI"
PATHS = (SOURCE, SINK, DELTA, ADMIN)
"""What runs as the principal, as the README's "needed by" column names it: the exactly-once
source query, a Kafka → sink connector query, a Kafka → Delta query (`delta_sink`), and the REST
API and CLI stopping connectors and getting, altering and resetting source and sink offsets."""


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
    """Source connectors."""
    data_topics: tuple[str, ...]
    internal_topics: tuple[str, ...]
    sink_topics: tuple[str, ...] = ()
    sink_connectors: tuple[str, ...] = ()
    """Sink connectors, Delta queries included (their `name`)."""


@dataclass(frozen=True)
class AclRow:
    """A row of the README table and the grants it stands for."""

    key: str = field(compare=False)
    """A short id for test names."""
    operations: tuple[str, ...]
    resource: str
    name: str
    needed_by: tuple[str, ...]
    """The paths that fail without the row (each proven by `test_acls.py`)."""
    names: Callable[[Pipeline], list[tuple[str, bool]]] = field(compare=False)

    def grants(self, pipeline: Pipeline) -> list[Grant]:
        """Every (operation, name) this row grants for `pipeline`."""
        return [
            Grant(op, self.resource, name, prefixed)
            for name, prefixed in self.names(pipeline)
            for op in self.operations
        ]

    def markdown(self) -> tuple[str, str, str, str]:
        """(operation, resource, name, needed by) cells as the README prints them."""
        return ", ".join(self.operations), self.resource, self.name, ", ".join(self.needed_by)


def _literal(names: Iterable[str]) -> list[tuple[str, bool]]:
    return [(name, False) for name in names]


ACL_ROWS: tuple[AclRow, ...] = (
    AclRow(
        "task-transactional-ids",
        ("Write", "Describe"),
        "TransactionalId",
        "`<group.id>-<connector>-<task>` for every source task (prefix ACL "
        "`<group.id>-<connector>-`)",
        (SOURCE, ADMIN),
        lambda p: [(f"{p.group_id}-{c}-", True) for c in p.connectors],
    ),
    AclRow(
        "leader-transactional-id",
        ("Write", "Describe"),
        "TransactionalId",
        "`connect-cluster-<group.id>` (the config-topic leader)",
        (SOURCE, SINK, ADMIN),
        lambda p: _literal([f"connect-cluster-{p.group_id}"]),
    ),
    AclRow(
        "offsets-transactional-id",
        ("Write", "Describe"),
        "TransactionalId",
        "`<group.id>-<connector>` (altering and resetting a source connector's offsets)",
        (ADMIN,),
        lambda p: _literal(f"{p.group_id}-{c}" for c in p.connectors),
    ),
    AclRow(
        "topic-write",
        ("Write", "Describe"),
        "Topic",
        "the source connectors' data topics and the three internal topics",
        (SOURCE, SINK, ADMIN),
        lambda p: _literal([*p.data_topics, *p.internal_topics]),
    ),
    AclRow(
        "topic-read",
        ("Read", "Describe"),
        "Topic",
        "the three internal topics, and the topics sink connectors and Delta queries read",
        (SOURCE, SINK, DELTA, ADMIN),
        lambda p: _literal([*p.internal_topics, *p.sink_topics]),
    ),
    AclRow(
        "sink-group-read",
        ("Read",),
        "Group",
        "`connect-<name>` for each sink connector and Delta query",
        (SINK, DELTA, ADMIN),
        lambda p: _literal(f"connect-{c}" for c in p.sink_connectors),
    ),
    AclRow(
        "sink-group-delete",
        ("Delete",),
        "Group",
        "`connect-<name>` (resetting a sink connector's offsets)",
        (ADMIN,),
        lambda p: _literal(f"connect-{c}" for c in p.sink_connectors),
    ),
)


def rows_for(path: str) -> tuple[AclRow, ...]:
    """The rows `path` needs."""
    return tuple(row for row in ACL_ROWS if path in row.needed_by)


def grants(pipeline: Pipeline, rows: Iterable[AclRow] = ACL_ROWS) -> set[Grant]:
    """The union of `rows`' grants for `pipeline` (a grant two rows share counts once)."""
    return {grant for row in rows for grant in row.grants(pipeline)}


def grants_without(
    pipeline: Pipeline, missing: AclRow, rows: Iterable[AclRow] = ACL_ROWS
) -> set[Grant]:
    """Every one of `rows`' grants but `missing`'s (those another row also grants stay)."""
    return grants(pipeline, [row for row in rows if row is not missing])


HEADER = ("operation", "resource", "name", "needed by")


def readme_rows(markdown: str) -> list[tuple[str, ...]]:
    """The rows (cells as in `HEADER`) of the table under the `ACLs` heading (`##` on the
    security page, `###` where it used to be) in `markdown`."""
    lines = re.split(r"\n#{2,3} ACLs\n", markdown, maxsplit=1)[1].splitlines()
    table = _leading_table(lines)
    rows = [tuple(cell.strip() for cell in line.strip().strip("|").split(" | ")) for line in table]
    header, _separator, *body = rows
    assert header == HEADER, header
    return body


def _leading_table(lines: list[str]) -> Iterable[str]:
    """The first run of `|`-lines, skipping blank lines before it."""
    started = False
    for line in lines:
        if line.startswith("|"):
            started = True
            yield line
        elif started or line.strip():
            return
