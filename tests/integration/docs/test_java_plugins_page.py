"""`docs/connectors/java-plugins.md` run as a reader runs it: every block in page order in one
namespace (the jars folder exported and checked, Connect's Java FileStreamSourceConnector from
`.jars/connect-file` into Kafka, the read_committed look at the topic, the offsets through the
CLI, the script form's wait and the stop; then the PostgreSQL set-up, Debezium's Java
PostgresConnector from `.jars/debezium` with `exactly.once.support=required`, the insert, the
look at the events, the stop and the slot's removal), on the test broker and the test
PostgreSQL server. Only hosts, ports, paths and names are replaced (the plugin folders by the
absolute ones the test session uses). Between blocks the test waits only where the page says
to ("a moment later"). The task configs in the config topic then show that the Java plugins
ran, not this project's connectors."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm import jars
from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresCluster

from .page_order import PageRun, slot_and_publications_left
from .readme import REPO

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "connectors" / "java-plugins.md"
LINES = ["first line", "second line", "third line"]
"""The file the page writes."""
JAVA_FILE_TASK = "org.apache.kafka.connect.file.FileStreamSourceTask"
DEBEZIUM_TASK = "io.debezium.connector.postgresql.PostgresConnectorTask"
TIMEOUT_S = 180.0


def test_the_java_plugins_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    postgres: PostgresCluster,
    tmp_path: Path,
) -> None:
    lines_name = topic_factory("java-lines")  # the connector's name and its topic
    source = tmp_path / "lines.txt"  # not "java-lines": the shell replaces that word
    inventory = unique_name("inventory").replace("-", "_")  # the database and the topic prefix
    role, slot = f"{inventory}_dbz_user", f"{inventory}_dbz"
    debezium_name, items_topic = unique_name("inventory-debezium"), f"{inventory}.public.items"
    ensure_topic(admin_client(kafka_config), items_topic, partitions=1)  # readable while empty
    page = PageRun(
        PAGE,
        python={
            "/tmp/java-lines.txt": str(source),
            "java-lines": lines_name,
            ".jars/connect-file": str(jars.plugin_path("connect-file")),
            "127.0.0.1:9092": bootstrap_servers,
            "/tmp/checkpoints/java-lines": str(tmp_path / "ck-lines"),
            "inventory-debezium": debezium_name,
            ".jars/debezium": str(jars.plugin_path("debezium")),
            "127.0.0.1": postgres.host,
            "5432": str(postgres.port),
            "dbz_user": role,
            "inventory": inventory,
            "inventory_dbz": slot,
            "/tmp/checkpoints/inventory-debezium": str(tmp_path / "ck-debezium"),
            "inventory.public.items": items_topic,
        },
        shell={
            "/tmp/java-lines.txt": str(source),
            "java-lines": lines_name,
            "127.0.0.1:9092": bootstrap_servers,
        },
        sql={"dbz_user": role, "inventory": inventory, "inventory_dbz": slot},
        postgres=postgres,
        cwd=REPO,  # "from the repository's folder": plugin.path names .jars/... relative to it
    )
    # the session is shared: a query of an earlier test that failed would end the page's
    # awaitTermination() at once (as in a notebook that ran such a query before)
    spark.streams.resetTerminated()
    try:
        page.setup_shell()

        run_the_file_source_example(page, read_committed, lines_name, source)
        run_the_debezium_example(page, postgres, read_committed, inventory, slot, items_topic)
        page.finished()
    finally:
        for name in ("query", "debezium"):
            if name in page.namespace:
                page.namespace[name].stop()
        postgres.drop_database(inventory)
        postgres.database().execute(f'DROP ROLE IF EXISTS "{role}"')
        page.close()

    # the Java plugins ran: their task configs name Connect's task.class, as a worker's do
    assert last_task_class(read_committed, lines_name) == JAVA_FILE_TASK
    assert last_task_class(read_committed, debezium_name) == DEBEZIUM_TASK


def run_the_file_source_example(
    page: PageRun, read_committed: Callable[..., list[Any]], topic: str, source: Path
) -> None:
    """The FileStreamSourceConnector blocks: each line once, Connect's offsets, the stop."""
    page.shell_block()  # printf: the file
    page.python_block()  # spark: the session's own (a running session is reused)
    page.python_block()  # the Java connector's query
    query = page.namespace["query"]

    def written() -> list[bytes]:  # "a moment later ... the three lines"
        assert query.exception() is None, query.exception()
        return [r.value for r in read_committed(topic, settled=False)]

    wait_for(lambda: len(written()) >= len(LINES), TIMEOUT_S, "the file's lines in Kafka")
    shown = page.python_block()  # .show() of the topic, read_committed
    assert shown_rows(shown) == [(line,) for line in LINES], shown

    [offsets] = page.shell_block()  # eosconnect offsets get
    assert offsets.returncode == 0, offsets.stderr
    assert json.loads(offsets.stdout) == {
        "offsets": [
            {
                "partition": {"filename": str(source)},
                "offset": {"position": len("".join(f"{line}\n" for line in LINES))},
            }
        ]
    }
    assert '"position": 34' in offsets.comment  # what the page says the reader sees

    joined = page.python_block_in_background()  # query.awaitTermination()
    page.python_block()  # query.stop()
    joined(60)
    assert not query.isActive
    assert [r.value for r in read_committed(topic)] == [line.encode() for line in LINES]


def run_the_debezium_example(
    page: PageRun,
    postgres: PostgresCluster,
    read_committed: Callable[..., list[Any]],
    inventory: str,
    slot: str,
    topic: str,
) -> None:
    """The Debezium blocks: the set-up SQL, the query, the insert, the events, the clean-up."""
    page.sql_block()  # the role, the database, public.items and its publication
    postgres.created.append(inventory)  # dropped with its slots when the test ends
    page.python_block()  # Debezium's query
    debezium = page.namespace["debezium"]

    def events() -> list[tuple[str, int]]:
        assert debezium.exception() is None, debezium.exception()
        found = [json.loads(r.value)["payload"] for r in read_committed(topic, settled=False)]
        return [(event["op"], event["after"]["id"]) for event in found]

    wait_for(lambda: len(events()) >= 2, TIMEOUT_S, "Debezium's snapshot in Kafka")
    page.sql_block(default_database=inventory)  # the insert
    # "a moment later the topic holds Debezium's three change events"
    wait_for(lambda: len(events()) >= 3, TIMEOUT_S, "the streamed insert in Kafka")
    shown = page.python_block()  # .show() of op and name, read_committed
    assert shown_rows(shown) == [("r", "hammer"), ("r", "saw"), ("c", "drill")], shown
    assert events() == [("r", 1), ("r", 2), ("c", 3)]  # each once, in order

    page.python_block()  # debezium.stop()
    assert not debezium.isActive
    stopped = time.monotonic()

    def slot_active() -> list[tuple[Any, ...]]:  # the page's check, until it says f
        with postgres.database(inventory).connect() as connection:
            return connection.execute(
                "SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,)
            ).fetchall()

    wait_for(lambda: slot_active() == [(False,)], 120, "the task to let go of the slot")
    assert time.monotonic() - stopped < 60  # "about 30 seconds after the query stopped"
    assert page.sql_block(default_database=inventory) == [(False,)]
    page.sql_block()  # drop the slot and the publication
    assert slot_and_publications_left(postgres, inventory, slot) == (0, 0)


def last_task_class(read_committed: Callable[..., list[Any]], name: str) -> str:
    """The `task.class` of the connector's last task-0 config in the config topic."""
    configs = [
        json.loads(r.value)["properties"]
        for r in read_committed("eosconnect-configs")
        if r.key == f"task-{name}-0".encode() and r.value
    ]
    assert configs, f"no task config of {name}"
    return str(configs[-1].get("task.class"))


def shown_rows(shown: str) -> list[tuple[str, ...]]:
    """The rows a DataFrame's `show()` printed (its header left out), cells stripped."""
    rows = [
        tuple(cell.strip() for cell in line.strip().strip("|").split("|"))
        for line in shown.splitlines()
        if line.startswith("|")
    ]
    return rows[1:]
