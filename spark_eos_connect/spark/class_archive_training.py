"""Training the driver JVM's class archive (`spark.class_archive`), run by `make setup`:

    python -m spark_eos_connect.spark.class_archive_training

A local session runs a SQL job and a streaming query from a Python data source into a Python
Arrow writer, as the project's jobs do, and its JVM writes the classes it loaded into the
archive when it exits (`-XX:ArchiveClassesAtExit`). Nothing is trained when the archive for
this JDK and pyspark exists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spark_eos_connect.spark.class_archive import CONF_DIR_ENV, archive_file, empty_conf_dir
from spark_eos_connect.spark.session import build_session, job_log_file, plan_session

TRAIN_FLAG = "--train"
TRAIN_TIMEOUT_S = 600.0
MODULE = "spark_eos_connect.spark.class_archive_training"
OUT_ENV = "EOSCONNECT_CLASS_ARCHIVE_OUT"
"""Where the training session's JVM writes the archive."""
TRAINING_CDS_LOGGING = "-Xlog:cds=error -Xlog:cds+dynamic=error"
"""The training's JVM lists every class it cannot archive as a warning: only errors are shown."""


def _training_source() -> Any:
    """A Python streaming data source (reader and Arrow writer), defined here so that the
    training does not need Kafka."""
    import pyarrow as pa
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceStreamArrowWriter,
        DataSourceStreamReader,
        InputPartition,
        WriterCommitMessage,
    )

    class Reader(DataSourceStreamReader):
        def initialOffset(self) -> dict[str, int]:
            return {"at": 0}

        def latestOffset(self, start: Any = None, limit: Any = None) -> dict[str, int]:
            return {"at": 1000}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
            return [InputPartition(i) for i in range(2)]

        def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
            topics = pa.array(["t"] * 500, pa.string())
            partitions = pa.array([partition.value] * 500, pa.int32())
            yield pa.RecordBatch.from_arrays([topics, partitions], ["topic", "partition"])

    class Writer(DataSourceStreamArrowWriter):
        def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

        def commit(self, messages: list[Any], batchId: int) -> None:
            pass

    class Source(DataSource):
        @classmethod
        def name(cls) -> str:
            return "eosconnect_training"

        def schema(self) -> str:
            return "topic string, partition int"

        def streamReader(self, schema: Any) -> DataSourceStreamReader:
            return Reader()

        def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamArrowWriter:
            return Writer()

    return Source


def _train_in_this_process() -> None:
    """The workload whose classes go into the archive (this process's JVM writes it at exit)."""
    options = f"-XX:ArchiveClassesAtExit={os.environ[OUT_ENV]} {TRAINING_CDS_LOGGING}"
    dump = {"spark.driver.extraJavaOptions": options}
    plan = plan_session("eosconnect-class-archive", extra=dump, env={}, delta=False)
    spark = build_session(plan, quiet_log=job_log_file("class-archive-training"))
    spark.range(1000).selectExpr("id % 7 AS k").groupBy("k").count().collect()
    spark.dataSource.register(_training_source())
    with tempfile.TemporaryDirectory() as checkpoint:
        query = (
            spark.readStream.format("eosconnect_training")
            .load()
            .writeStream.format("eosconnect_training")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    jvm = spark.sparkContext._gateway.proc
    spark.stop()
    jvm.stdin.close()  # the gateway JVM exits when its stdin closes, and writes the archive
    jvm.wait(TRAIN_TIMEOUT_S)


def train(root: Path | None = None) -> Path:
    """Make the archive for this JDK and pyspark (about half a minute, once)."""
    target = archive_file(root=root)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    env = {
        **os.environ,
        CONF_DIR_ENV: str(empty_conf_dir(root)),
        OUT_ENV: str(partial),
    }
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", MODULE, TRAIN_FLAG],
        env=env,
        check=True,
        timeout=TRAIN_TIMEOUT_S,
    )
    if not partial.is_file():
        raise RuntimeError(f"the training session wrote no class archive at {partial}")
    partial.replace(target)
    print(f"class archive: {target} ({time.monotonic() - started:.0f} s)", flush=True)
    return target


def main(argv: list[str] | None = None) -> None:
    """`make setup`: train the archive unless it exists; `--train`: be the training session."""
    args = sys.argv[1:] if argv is None else argv
    if TRAIN_FLAG in args:
        _train_in_this_process()
        return
    existing = archive_file()
    if existing.is_file():
        print(f"class archive: {existing} (up to date)", flush=True)
        return
    train()


if __name__ == "__main__":
    main()
