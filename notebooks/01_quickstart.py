# Databricks notebook source
# MAGIC %md
# MAGIC # spark_eos_connect quickstart
# MAGIC
# MAGIC Kafka Connect-style connectors in Spark Structured Streaming, exactly once. This notebook
# MAGIC streams the built-in generator connector into a Kafka topic and reads the topic back as a
# MAGIC `read_committed` consumer would.

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

# MAGIC %md
# MAGIC Point the notebook at your Kafka cluster (a widget on Databricks; the environment variable
# MAGIC `EOSCONNECT_BOOTSTRAP_SERVERS` elsewhere) and register the `eosconnect` data source.

# COMMAND ----------

import os
import tempfile
import uuid

import spark_eos_connect

try:
    dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821 - defined on Databricks
    bootstrap_servers = dbutils.widgets.get("bootstrap_servers")  # noqa: F821
except NameError:
    bootstrap_servers = os.environ["EOSCONNECT_BOOTSTRAP_SERVERS"]

spark_eos_connect.register(spark)  # noqa: F821 - the notebook's SparkSession
run = uuid.uuid4().hex[:8]
topic = f"quickstart-{run}"
kafka = {"kafka.bootstrap.servers": bootstrap_servers}

# COMMAND ----------

# MAGIC %md
# MAGIC A source connector is just options: its `name`, its `connector.class` (a shipped short
# MAGIC name or `package.module.Class`), `tasks.max`, and the connector's own options.

# COMMAND ----------

records = (
    spark.readStream.format("eosconnect")  # noqa: F821
    .option("name", f"quickstart-{run}")
    .option("connector.class", "Generator")
    .option("tasks.max", "2")
    .option("topic", topic)
    .option("max.records", "500")
    .options(**kafka)
    .load()
)
query = (
    records.writeStream.format("eosconnect")
    .option("name", f"quickstart-{run}")
    .options(**kafka)
    .option("checkpointLocation", tempfile.mkdtemp(prefix="quickstart-"))
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()

# COMMAND ----------

# MAGIC %md
# MAGIC Read the topic back with `read_committed`: only records of committed transactions count.

# COMMAND ----------

from spark_eos_connect.kafka.clients import read_to_end

committed = read_to_end({"bootstrap.servers": bootstrap_servers}, [topic])
print(f"{len(committed)} records committed to {topic}")
assert len(committed) == 1000
