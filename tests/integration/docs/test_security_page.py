"""`docs/security.md` run as a reader runs it, block after block: the REST API block in a shell
of the project's environment (the refusal, the certificate, the credentials file, the HTTPS
server with basic authentication in the background, the curl lines' status codes), then the
config-providers example (its file and variable made in the shell, the session, the query whose
options are references, the script form's wait, the stop) on the test session's broker and
Spark. The SCRAM block needs the SASL_SSL broker: it is run by the security tests on theirs.
Only the broker's address, the port, names and paths are replaced."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.testing import wait_for

from .page_order import PageRun, ShellLine
from .readme import REPO

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "security.md"
SCRAM_TEST = (
    "tests/integration/security/test_readme_scram_acls.py"
    "::test_the_readme_block_creates_a_user_whose_source_query_runs"
)

_EXPORTED = re.search(r"^export ORDERS_CLIENT_ID=(\S+)$", PAGE.read_text(), re.MULTILINE)
assert _EXPORTED, "the page no longer exports ORDERS_CLIENT_ID"
EXPORT = _EXPORTED.group(0)
os.environ["ORDERS_CLIENT_ID"] = _EXPORTED.group(1)
"""The page's `export` before Python starts, done when this module is collected: before the
test session's Spark starts, so that its processes inherit it as the reader's do."""


def test_the_security_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic, name, files = topic_factory("orders"), unique_name("orders-by-reference"), tmp_path
    reference = "${file:/tmp/eosconnect/kafka.properties:bootstrap.servers}"
    page = PageRun(
        PAGE,
        python={
            reference: reference.replace("/tmp/eosconnect", str(files / "eosconnect")),
            "orders-by-reference": name,
            "orders": topic,
            "/tmp/checkpoints/orders-by-reference": str(tmp_path / "ck"),
        },
        shell={
            "127.0.0.1:9092": bootstrap_servers,
            "8083": str(free_port()),
            "/tmp/eosconnect": str(files / "eosconnect"),
        },
        cwd=tmp_path,
    )

    def as_commented(ran: ShellLine) -> None:
        """Each line does what its comment says: an exit code, or an HTTP status."""
        if ran.comment.startswith("exit "):
            assert f"exit {ran.returncode}:" in ran.comment, (ran.line, ran.stderr)
            assert "--certfile" in ran.stderr, ran.stderr  # the refusal says what to add
            return
        assert ran.returncode == 0, (ran.line, ran.stderr)
        if ran.status is not None:
            assert ran.status == int(ran.comment.split()[0]), (ran.line, ran.stdout)
            if ran.status == 401:
                assert '"User cannot access the resource."' in ran.stdout

    page.setup_shell()
    try:
        ran = page.shell_block(after=as_commented)  # the REST API over HTTPS, with basic auth
        assert [r.status for r in ran if r.status] == [200, 401, 401]
        [server] = [r.background for r in ran if r.background is not None]
        assert server.poll() is None  # still serving, as in the reader's shell
        page.close()
        assert "change-me" not in (tmp_path / "background-0.log").read_text()

        page.shell_block(after=as_commented)  # the properties file and the variable
        assert page.exports == [EXPORT]
        page.python_block()  # spark: the session's own (a running session is reused)
        page.python_block()  # the query whose options are references
        query = page.namespace["query"]

        def all_written() -> bool:  # "writes the generator's 100 records"
            assert query.exception() is None, query.exception()
            return len(read_committed(topic, settled=False)) == 100

        wait_for(all_written, 60, "the 100 generated records")
        joined = page.python_block_in_background()  # query.awaitTermination()
        page.python_block()  # query.stop()
        joined(60)

        assert page.covered_elsewhere("python") == SCRAM_TEST  # the secured broker's
        page.finished()
    finally:
        if "query" in page.namespace:
            page.namespace["query"].stop()
        page.close()

    written = [parse_generated_value(r.value) for r in read_committed(topic)]
    assert written == [(0, position) for position in range(100)]  # each once, in order
