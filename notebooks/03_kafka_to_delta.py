# Databricks notebook source
# MAGIC %md
# MAGIC # Kafka to Delta Lake, exactly once
# MAGIC
# MAGIC The `eosconnect` reader reads Kafka topics as a `read_committed` consumer. Two ways to land
# MAGIC the records:
# MAGIC
# MAGIC 1. **Delta** through `foreachBatch(delta_sink(options))`: each micro-batch is one Delta
# MAGIC    commit that also holds the Kafka offsets it covers, so the table is the source of truth.
# MAGIC 2. A **record-level sink connector** (`FileStreamSink`) through
# MAGIC    `writeStream.format("eosconnect")`: after the batch, the offsets the task's `pre_commit`
# MAGIC    returned are committed to the consumer group `connect-<name>`, as Kafka Connect does.

# COMMAND ----------

# MAGIC %md
# MAGIC Install the project's wheel on the cluster: `make dist` builds it into the project's
# MAGIC `dist/`; in a Databricks Git folder of the project the default path below finds it,
# MAGIC otherwise upload the wheel to the workspace (or a volume) and give its path in the
# MAGIC `wheel` widget.

# COMMAND ----------

from pathlib import Path

WHEEL = "spark_eos_connect-0.1.0-py3-none-any.whl"  # what `make dist` builds
try:
    dbutils.widgets.text("wheel", str(Path.cwd().parent / "dist" / WHEEL))  # noqa: F821
    wheel = dbutils.widgets.get("wheel")  # noqa: F821 - defined on Databricks
except NameError:  # not on Databricks: the library is installed already
    wheel = ""

# COMMAND ----------

# MAGIC %pip install $wheel

# COMMAND ----------

import json
import os
import tempfile
import uuid

from confluent_kafka import ConsumerGroupTopicPartitions, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import functions as F

import spark_eos_connect
from spark_eos_connect.delta import delta_sink, starting_offsets

try:
    dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821 - defined on Databricks
    bootstrap_servers = dbutils.widgets.get("bootstrap_servers")  # noqa: F821
except NameError:
    bootstrap_servers = os.environ["EOSCONNECT_BOOTSTRAP_SERVERS"]

spark_eos_connect.register(spark)  # noqa: F821 - the notebook's SparkSession
run = uuid.uuid4().hex[:8]
topic = f"orders-{run}"
work = tempfile.mkdtemp(prefix="kafka-to-delta-")  # a DBFS or cloud path on Databricks
admin = AdminClient({"bootstrap.servers": bootstrap_servers})
admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result()

# COMMAND ----------

# MAGIC %md
# MAGIC Produce three transactions: two committed, one aborted in between. A `read_committed`
# MAGIC consumer never sees the aborted records, and neither does the `eosconnect` reader.

# COMMAND ----------

producer = Producer({"bootstrap.servers": bootstrap_servers, "transactional.id": f"nb03-{run}"})
producer.init_transactions(30)


def transaction(values: list[str], commit: bool = True) -> None:
    """Produce `values` round-robin over the two partitions in one transaction."""
    producer.begin_transaction()
    for i, value in enumerate(values):
        producer.produce(topic, value.encode(), f"k{i % 3}".encode(), partition=i % 2)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.flush(30)
        producer.abort_transaction(30)


transaction([f"order {i}" for i in range(10)])
transaction([f"aborted {i}" for i in range(4)], commit=False)
transaction([f"order {i}" for i in range(10, 15)])
committed_values = {f"order {i}" for i in range(15)}

# COMMAND ----------

# MAGIC %md
# MAGIC ## Delta: the offsets live in the table
# MAGIC
# MAGIC The same options feed the reader and the sink. The connector `name` is the Delta
# MAGIC `txnAppId` and each micro-batch id its `txnVersion`, so Delta skips a replayed batch.

# COMMAND ----------

options = {
    "name": f"orders-to-delta-{run}",
    "topics": topic,
    "path": f"{work}/tables/orders",
    "kafka.bootstrap.servers": bootstrap_servers,
}
records = spark.readStream.format("eosconnect").options(**options).load()  # noqa: F821
query = (
    records.writeStream.foreachBatch(delta_sink(options))
    .option("checkpointLocation", f"{work}/checkpoints/orders-to-delta")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
assert query.exception() is None

# COMMAND ----------

table = spark.read.format("delta").load(options["path"])  # noqa: F821
table.selectExpr("CAST(value AS STRING) AS value", "_kafka_partition", "_kafka_offset").orderBy(
    "_kafka_partition", "_kafka_offset"
).show(truncate=False)
values = [row.value.decode() for row in table.select("value").collect()]
assert sorted(values) == sorted(committed_values), values  # each committed record once

# COMMAND ----------

# MAGIC %md
# MAGIC Every row carries its Kafka coordinates (`_kafka_topic`, `_kafka_partition`,
# MAGIC `_kafka_offset`), written in the same Delta commit as the data: the next offset to
# MAGIC read per partition is the highest `_kafka_offset` plus one. The commit's `userMetadata`
# MAGIC names the connector, batch and `txnVersion` (it adds offsets only when a record may leave
# MAGIC no row: a value failing `value.schema`, an upsert's tombstone).

# COMMAND ----------

in_rows = {
    str(row["_kafka_partition"]): row["last"] + 1
    for row in table.groupBy("_kafka_partition").agg(F.max("_kafka_offset").alias("last")).collect()
}
history = spark.sql(f"DESCRIBE HISTORY delta.`{options['path']}`")  # noqa: F821
history.select("version", "operation", "userMetadata").orderBy("version").show(truncate=False)
last_commit = history.orderBy(F.desc("version")).first()
recorded = json.loads(last_commit["userMetadata"])["eosconnect"]
print("next offsets from the rows:", in_rows, "last commit:", recorded)
assert recorded["connector"] == options["name"] and "offsets" not in recorded  # noqa: F821
assert json.loads(starting_offsets(options, spark)) == {topic: in_rows}  # noqa: F821

# COMMAND ----------

# MAGIC %md
# MAGIC ### Why `pre_commit` returns `{}` for Delta
# MAGIC
# MAGIC A Kafka Connect sink normally commits the offsets `pre_commit` returns to its consumer
# MAGIC group after writing. For Delta that would be a second write, outside the Delta commit: a
# MAGIC crash between the two leaves the group behind or ahead of the table. So the Delta task's
# MAGIC `pre_commit` returns `{}`, nothing goes to the group `connect-<name>`, and a restart
# MAGIC resumes after the offsets the table holds, even with the checkpoint and group gone.

# COMMAND ----------


def group_offsets(group: str) -> dict[int, int]:
    """A consumer group's committed offsets of `topic` (next offset to read), per partition."""
    request = [ConsumerGroupTopicPartitions(group)]
    listed = admin.list_consumer_group_offsets(request)[group].result()
    return {
        tp.partition: tp.offset
        for tp in listed.topic_partitions or []
        if tp.topic == topic and tp.offset >= 0
    }


print("group offsets:", group_offsets(f"connect-{options['name']}"))
assert group_offsets(f"connect-{options['name']}") == {}

# COMMAND ----------

# MAGIC %md
# MAGIC Lose the checkpoint, produce more, and run again: `starting_offsets` reads the table's
# MAGIC offsets, so the new query reads only what came after them and appends each record once.

# COMMAND ----------

transaction([f"order {i}" for i in range(15, 20)])
committed_values |= {f"order {i}" for i in range(15, 20)}
resume = starting_offsets(options, spark)  # noqa: F821
print("resuming after the table's offsets:", resume)
records = (
    spark.readStream.format("eosconnect")  # noqa: F821
    .options(**options)
    .option("startingOffsets", resume)
    .load()
)
query = (
    records.writeStream.foreachBatch(delta_sink(options))
    .option("checkpointLocation", f"{work}/checkpoints/orders-to-delta-new")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
assert query.exception() is None
table = spark.read.format("delta").load(options["path"])  # noqa: F821
values = [row.value.decode() for row in table.select("value").collect()]
print(len(values), "rows after the second run")
assert sorted(values) == sorted(committed_values), values

# COMMAND ----------

# MAGIC %md
# MAGIC ## A record-level sink connector: `FileStreamSink`
# MAGIC
# MAGIC Each Spark task opens the connector's task, `put`s the records in chunks, then calls
# MAGIC `pre_commit(current_offsets)`. Once Spark has committed the batch, the driver commits
# MAGIC exactly what `pre_commit` returned to the group `connect-<name>`. The default `pre_commit`
# MAGIC flushes and returns the offsets it was given: the next offset after each partition's last
# MAGIC record.

# COMMAND ----------

file_sink = {
    "name": f"orders-to-file-{run}",
    "connector.class": "FileStreamSink",
    "topics": topic,
    "file": f"{work}/orders.txt",
    "kafka.bootstrap.servers": bootstrap_servers,
}
query = (
    spark.readStream.format("eosconnect")  # noqa: F821
    .options(**file_sink)
    .load()
    .writeStream.format("eosconnect")
    .options(**file_sink)
    .option("checkpointLocation", f"{work}/checkpoints/orders-to-file")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()
assert query.exception() is None
with open(file_sink["file"]) as lines:
    written = lines.read().splitlines()
print(len(written), "lines written, e.g.", written[:3])
assert sorted(written) == sorted(committed_values)

# COMMAND ----------

committed = group_offsets(f"connect-{file_sink['name']}")
print(f"connect-{file_sink['name']}:", committed)
last = table.groupBy("_kafka_partition").agg(F.max("_kafka_offset").alias("last")).collect()
assert committed == {row["_kafka_partition"]: row["last"] + 1 for row in last}
