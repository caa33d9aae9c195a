"""Every snippet of the README and the docs pages runs against the test broker: the text comes
from the pages themselves, with only addresses, names and paths substituted, so an edited page is
what gets tested.
`tests/unit/test_readme_coverage.py` fails when a snippet has no test here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.protocol.offsets_format import decode_offset_key, decode_offset_value
from spark_eos_connect.testing import wait_for

from .page_order import PageRun
from .readme import (
    REPO,
    make_targets,
    pages,
    replace_tokens,
    snippet,
)

pytestmark = pytest.mark.integration


def positions(records: list[Any]) -> dict[int, list[int]]:
    """Generator positions per task, in topic order."""
    by_task: dict[int, list[int]] = {}
    for record in records:
        task, position = parse_generated_value(record.value)
        by_task.setdefault(task, []).append(position)
    return by_task


def run_python_block(code: str, namespace: dict[str, Any], what: str) -> dict[str, Any]:
    """Execute a README Python block in `namespace` (returned)."""
    exec(compile(code, f"README.md[{what}]", "exec"), namespace)
    return namespace


def job_argv(command: str, replacements: dict[str, str], bootstrap_servers: str) -> list[str]:
    """A README `python jobs/...` command made concrete, on the test broker."""
    argv = replace_tokens(shlex.split(command), replacements)
    assert argv[0] == "python" and argv[1].startswith("jobs/"), command
    assert "--bootstrap-servers" not in argv
    return [sys.executable, *argv[1:], "--bootstrap-servers", bootstrap_servers]


def run_job(argv: list[str], timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a job from the repository root as the README's users do."""
    result = subprocess.run(
        argv, cwd=REPO, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result


# --- Python blocks ------------------------------------------------------------------------------


def test_connect_config_runs_unchanged(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """The Converters page in page order (the session, the file, the Connect config, the stop):
    numbers land wrapped and routed with JsonConverter's bytes, the line Cast cannot read is
    skipped, and the file offset moves past it (it is the last line)."""
    orders, quantities = topic_factory("orders"), topic_factory("orders-quantities")
    name, source = unique_name("orders-file"), tmp_path / "orders.txt"
    page = PageRun(
        REPO / "docs" / "converters-and-transforms.md",
        python={
            "orders-file": name,
            "/tmp/orders.txt": str(source),
            "orders": orders,
            "orders-quantities": quantities,
            "127.0.0.1:9092": bootstrap_servers,
            "/tmp/checkpoints/orders-file": str(tmp_path / "ck"),
        },
    )

    def file_position() -> Any:
        found = [
            decode_offset_value(r.value)
            for r in read_committed("eosconnect-offsets")
            if decode_offset_key(r.key)[0] == name
        ]
        return found[-1] if found else None

    page.setup_shell()
    try:
        page.python_block()  # spark: the session's own (a running session is reused)
        page.python_block()  # the file
        page.python_block()  # the Connect config, run
        query = page.namespace["query"]

        def both_numbers() -> bool:
            assert query.exception() is None, query.exception()
            return len(read_committed(quantities, settled=False)) == 2

        wait_for(both_numbers, 120, "the two numbers")
        wait_for(
            lambda: file_position() == {"position": len(source.read_bytes())},
            60,
            "the file offset past the skipped line",
        )
        page.python_block()  # query.stop()
        page.finished()
    finally:
        if "query" in page.namespace:
            page.namespace["query"].stop()

    envelope = (
        '{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,'
        '"field":"quantity"}],"optional":false},"payload":{"quantity":%d}}'
    )
    assert [r.value for r in read_committed(quantities)] == [
        (envelope % n).encode() for n in (42, 7)
    ]
    assert read_committed(orders) == []
    assert file_position() == {"position": len(source.read_bytes())}


# --- shell commands -----------------------------------------------------------------------------


def test_source_to_kafka_job_command(
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("orders")
    argv = job_argv(
        snippet("python jobs/source_to_kafka.py").text,
        {"gen": unique_name("gen"), "topic=orders": f"topic={topic}", "/tmp/ck": str(tmp_path)},
        bootstrap_servers,
    )
    max_records = next(int(a.split("=")[1]) for a in argv if a.startswith("max.records="))

    run_job(argv)

    assert positions(read_committed(topic)) == {0: list(range(max_records))}


def test_kafka_to_delta_job_command(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce_transaction: Callable[..., None],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic, table = topic_factory("t", partitions=2), tmp_path / "table"
    produce_transaction(topic, [f"v{i}".encode() for i in range(5)], partitions=2)
    produce_transaction(topic, [b"aborted"], commit=False)
    argv = job_argv(
        snippet("python jobs/kafka_to_delta.py").text,
        {"n": unique_name("n"), "t": topic, "/tmp/t": str(table), "/tmp/ck": str(tmp_path / "ck")},
        bootstrap_servers,
    )

    run_job(argv)

    values = [r.value for r in spark.read.format("delta").load(str(table)).collect()]
    assert sorted(values) == [f"v{i}".encode() for i in range(5)]


def test_bench_command_on_a_small_run() -> None:
    """`make bench` is `python jobs/bench.py`; run here on 2,000 records instead of 1,000,000,
    generator modes only (the peers' modes start a Connect worker and more Spark queries: the
    full run is `make bench`'s, not the test suite's)."""
    [recipe] = make_targets((REPO / "Makefile").read_text())["bench"][1]
    command = snippet("python jobs/bench.py", (REPO / "docs" / "benchmark.md").read_text()).text
    assert recipe == "$(PY) " + command.removeprefix("python ")
    argv = shlex.split(command)
    small = ["--records", "2000", "--tasks", "2", "--per-trigger", "1000", "--value-size", "10"]
    small += ["--only", "generator"]

    result = run_job([sys.executable, *argv[1:], *small], timeout_s=400)

    assert "| eosconnect exactly-once  |   2,000 |" in result.stdout, result.stdout[-3000:]
    assert result.stdout.count("OK ") >= 3  # each mode verified with a read_committed count


def test_make_help_lists_the_targets_the_readme_names() -> None:
    result = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    text = "\n".join(path.read_text() for path in pages())
    named = set(re.findall(r"`make ([\w-]+)`", text))
    assert named and named <= listed


def test_make_test_times_writes_each_tests_phases_then_names_the_slowest_files(
    tmp_path: Path,
) -> None:
    [run, summary] = make_targets((REPO / "Makefile").read_text())["test-times"][1][1:]
    assert "EOSCONNECT_TEST_TIMES=$(CURDIR)/test-times.tsv $(PY) -m pytest" in run, run
    assert "tests/slowest_files.py test-times.tsv" in summary, summary
    times, target = tmp_path / "times.tsv", "tests/unit/source/test_boundaries.py"
    env = {**os.environ, "EOSCONNECT_TEST_TIMES": str(times)}
    argv = [sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", target]

    ran = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)

    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    rows = [line.split("\t") for line in times.read_text().splitlines()]
    tests = {test for _, _, test in rows}
    assert tests and all(test.startswith(f"{target}::") for test in tests)
    assert sorted(phase for _, phase, _ in rows) == sorted(
        ["setup", "call", "teardown"] * len(tests)
    )
    slowest = subprocess.run(
        [sys.executable, "tests/slowest_files.py", str(times)],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    [line] = slowest.stdout.splitlines()
    assert line.endswith(f" s  {target}")


def test_make_test_cluster_collects_exactly_the_cluster_tests() -> None:
    [recipe] = make_targets((REPO / "Makefile").read_text())["test-cluster"][1]
    argv = [sys.executable, *shlex.split(recipe)[1:], "--collect-only", "-q"]
    assert shlex.split(recipe)[0] == "$(PY)", recipe

    result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    collected = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    cluster = REPO / "tests" / "integration" / "cluster"
    cluster_tests = {str(path.relative_to(REPO)) for path in cluster.glob("test_*.py")}
    assert cluster_tests and collected == cluster_tests
