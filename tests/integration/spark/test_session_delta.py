"""The session helper gives a SparkSession that reads and writes real Delta tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality

pytestmark = pytest.mark.integration


def test_delta_round_trip_through_the_session_helper(spark: Any, tmp_path: Path) -> None:
    from delta.tables import DeltaTable

    path = str(tmp_path / "table")
    written = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    written.write.format("delta").save(path)
    spark.createDataFrame([(3, "c")], "id long, name string").write.format("delta").mode(
        "append"
    ).save(path)

    read_back = spark.read.format("delta").load(path)

    expected = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "id long, name string")
    assert_df_equality(read_back, expected, ignore_row_order=True)
    assert DeltaTable.isDeltaTable(spark, path)
    assert DeltaTable.forPath(spark, path).history().count() == 2
