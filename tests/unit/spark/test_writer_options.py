"""The eosconnect writer's options are checked when Spark creates the writer (in the query's
thread, before its first batch: Spark has no earlier hook for a Python data source's writer),
with every problem listed in one error naming the options."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.spark.source_writer import EosConnectSourceStreamWriter


def test_source_stream_writer_lists_every_problem() -> None:
    with pytest.raises(InvalidConfigError) as caught:
        EosConnectSourceStreamWriter({"kafka.transactional.id": "x"})

    assert set(caught.value.problems) == {"name", "kafka.transactional.id"}
    assert "Invalid configuration (2 problems)" in str(caught.value)


def test_sink_stream_writer_lists_every_problem_before_planning_the_connector() -> None:
    from pyspark.sql.types import StructType

    from spark_eos_connect.spark.sink_writer import EosConnectSinkStreamWriter

    options = {
        "name": "n",
        "connector.class": "FileStreamSink",
        "tasks.max": "0",
        "header.converter": "Nope",
        "transforms": "route",
        "transforms.route.type": "RegexRouter",
        "errors.tolerance": "some",
    }

    with pytest.raises(InvalidConfigError) as caught:
        EosConnectSinkStreamWriter(options, StructType())

    assert set(caught.value.problems) >= {
        "kafka.bootstrap.servers",
        "tasks.max",
        "header.converter",
        "transforms.route.regex",
        "errors.tolerance",
    }
