# Databricks notebook source
# MAGIC %md
# MAGIC # Exactly-once source to Kafka (KIP-618)
# MAGIC
# MAGIC A `FileStreamSource` connector reads lines of a file into Kafka. Each task's records and
# MAGIC its source offsets go into one Kafka transaction, so the offsets move if and only if the
# MAGIC records are committed. Running the query again resumes from the offsets stored in Kafka,
# MAGIC even with a fresh checkpoint.

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

import os
import tempfile
import uuid
from pathlib import Path

import spark_eos_connect
from spark_eos_connect.kafka.clients import read_to_end

try:
    dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821 - defined on Databricks
    bootstrap_servers = dbutils.widgets.get("bootstrap_servers")  # noqa: F821
except NameError:
    bootstrap_servers = os.environ["EOSCONNECT_BOOTSTRAP_SERVERS"]

spark_eos_connect.register(spark)  # noqa: F821 - the notebook's SparkSession
run = uuid.uuid4().hex[:8]
name, topic = f"file-source-{run}", f"lines-{run}"
kafka = {"kafka.bootstrap.servers": bootstrap_servers}
source = Path(tempfile.mkdtemp(prefix="file-source-")) / "input.txt"
source.write_text("".join(f"line {i}\n" for i in range(100)))

# COMMAND ----------


def run_once(checkpoint: str) -> None:
    """One micro-batch of the file source into Kafka."""
    lines = (
        spark.readStream.format("eosconnect")  # noqa: F821
        .options(name=name, **{"connector.class": "FileStreamSource"})
        .options(file=str(source), topic=topic, **kafka)
        .load()
    )
    query = (
        lines.writeStream.format("eosconnect")
        .option("name", name)
        .options(**kafka)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


run_once(tempfile.mkdtemp(prefix="ck-"))
print(len(read_to_end({"bootstrap.servers": bootstrap_servers}, [topic])), "records in Kafka")

# COMMAND ----------

# MAGIC %md
# MAGIC The offsets topic holds Kafka Connect's own record: key `["<name>",{"filename":...}]`,
# MAGIC value `{"position":<bytes read>}`.

# COMMAND ----------

offsets = [
    (r.key.decode(), r.value.decode())
    for r in read_to_end({"bootstrap.servers": bootstrap_servers}, ["eosconnect-offsets"])
    if r.key and name in r.key.decode() and r.value
]
print(offsets[-1])

# COMMAND ----------

# MAGIC %md
# MAGIC Append to the file and run again with a **new** checkpoint: the query resumes from the
# MAGIC committed offset, so only the new lines are written, once.

# COMMAND ----------

with source.open("a") as appended:
    appended.write("".join(f"line {i}\n" for i in range(100, 120)))
run_once(tempfile.mkdtemp(prefix="ck-"))
values = [r.value for r in read_to_end({"bootstrap.servers": bootstrap_servers}, [topic])]
print(len(values), "records,", len(set(values)), "distinct")
assert values == [f"line {i}".encode() for i in range(120)]
