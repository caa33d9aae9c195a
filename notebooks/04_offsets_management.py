# Databricks notebook source
# MAGIC %md
# MAGIC # Managing a running connector's offsets (KIP-875)
# MAGIC
# MAGIC A streaming query runs the `Generator` source connector. Next to it, `eosconnect rest`
# MAGIC serves Kafka Connect's REST API over the internal topics, and the running query reacts to
# MAGIC what it writes: stop the connector, read its offsets, alter them, resume, and the query
# MAGIC continues exactly from the altered offset.

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
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import uuid
from typing import Any

import spark_eos_connect
from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.testing import wait_for

try:
    dbutils.widgets.text("bootstrap_servers", "")  # noqa: F821 - defined on Databricks
    bootstrap_servers = dbutils.widgets.get("bootstrap_servers")  # noqa: F821
except NameError:
    bootstrap_servers = os.environ["EOSCONNECT_BOOTSTRAP_SERVERS"]

spark_eos_connect.register(spark)  # noqa: F821 - the notebook's SparkSession
run = uuid.uuid4().hex[:8]
name, topic = f"orders-generator-{run}", f"orders-{run}"
kafka = {"kafka.bootstrap.servers": bootstrap_servers}
work = tempfile.mkdtemp(prefix="offsets-")
ensure_topic(admin_client({"bootstrap.servers": bootstrap_servers}), topic)


def positions() -> list[int]:
    """The generator positions in the topic, as a read_committed consumer sees them."""
    records = read_to_end({"bootstrap.servers": bootstrap_servers}, [topic])
    return [parse_generated_value(record.value)[1] for record in records]


# COMMAND ----------

# MAGIC %md
# MAGIC Start the source query: one task, 200 records per second, a micro-batch every 200 ms.

# COMMAND ----------

stream = (
    spark.readStream.format("eosconnect")  # noqa: F821
    .options(name=name, topic=topic, rate="200", **kafka)
    .option("connector.class", "Generator")
    .option("records.per.poll", "50")
    .option("maxPollDurationMs", "500")
    .load()
)
query = (
    stream.writeStream.format("eosconnect")
    .options(name=name, **kafka)
    .option("checkpointLocation", f"{work}/checkpoint")
    .trigger(processingTime="200 milliseconds")
    .start()
)
wait_for(lambda: len(positions()) > 0, 120, "the first committed records")

# COMMAND ----------

# MAGIC %md
# MAGIC Start `eosconnect rest` on a free port, as you would on the driver or on any machine that
# MAGIC reaches the Kafka cluster (`eosconnect rest --bootstrap-servers HOST:PORT --port 8083`).

# COMMAND ----------

port = free_port()
log_path = f"{work}/rest.log"
with open(log_path, "w") as log:
    server = subprocess.Popen(
        [sys.executable, "-m", "spark_eos_connect.apps.cli", "rest"]
        + ["--bootstrap-servers", bootstrap_servers, "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def rest(method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One REST call: (HTTP status, parsed JSON body or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    return status, json.loads(text) if text else None


def answering() -> bool:
    """Whether the server answers (fails at once if it exited)."""
    if server.poll() is not None:
        with open(log_path) as log:
            raise RuntimeError(f"eosconnect rest exited: {log.read()[-2000:]}")
    try:
        return rest("GET", "/")[0] == 200
    except OSError:
        return False


wait_for(answering, 60, "eosconnect rest to answer")
print(rest("GET", "/")[1])

# COMMAND ----------

# MAGIC %md
# MAGIC The connector is RUNNING, and a running connector's offsets cannot be changed.

# COMMAND ----------

status, connectors = rest("GET", "/connectors?expand=status")
print(json.dumps(connectors[name], indent=2))
assert connectors[name]["status"]["connector"]["state"] == "RUNNING"
status, error = rest("PATCH", f"/connectors/{name}/offsets", {"offsets": []})
print(status, error["message"])
assert status == 400

# COMMAND ----------

# MAGIC %md
# MAGIC ## Stop, inspect, alter
# MAGIC
# MAGIC `PUT /stop` writes an empty task set: the query's next micro-batch runs no task. The offsets
# MAGIC are then those of the last committed transaction: as many as the records in the topic.

# COMMAND ----------

status, _ = rest("PUT", f"/connectors/{name}/stop")
assert status == 204
wait_for(lambda: not query.status["isTriggerActive"], 60, "the query to go idle")
before = positions()
print(rest("GET", f"/connectors/{name}/status")[1])
status, offsets = rest("GET", f"/connectors/{name}/offsets")
print(offsets)
[entry] = offsets["offsets"]
assert entry["offset"] == {"position": len(before)}

# COMMAND ----------

# MAGIC %md
# MAGIC Move the connector to position 5000 with `PATCH /offsets` (only while STOPPED). The
# MAGIC earlier task producers are fenced first, then the offset is written in one transaction.

# COMMAND ----------

altered = {"offsets": [{"partition": entry["partition"], "offset": {"position": 5000}}]}
status, message = rest("PATCH", f"/connectors/{name}/offsets", altered)
print(status, message)
assert status == 200
assert rest("GET", f"/connectors/{name}/offsets")[1] == altered

# COMMAND ----------

# MAGIC %md
# MAGIC ## Resume
# MAGIC
# MAGIC `PUT /resume`: the running query starts the task again, from the altered offset.

# COMMAND ----------

status, _ = rest("PUT", f"/connectors/{name}/resume")
assert status == 202
wait_for(lambda: len(positions()) > len(before) + 50, 120, "records after the resume")
query.stop()

written = positions()
resumed = written[len(before) :]
print(f"{len(before)} records before the stop, then positions {resumed[0]} .. {resumed[-1]}")
assert before == list(range(len(before)))
assert resumed == list(range(5000, 5000 + len(resumed)))  # exactly from the altered offset

# COMMAND ----------

# MAGIC %md
# MAGIC Reset: stop the connector again and `DELETE /offsets`; the next run starts from scratch.

# COMMAND ----------

assert rest("PUT", f"/connectors/{name}/stop")[0] == 204
status, message = rest("DELETE", f"/connectors/{name}/offsets")
print(status, message)
assert status == 200
assert rest("GET", f"/connectors/{name}/offsets")[1] == {"offsets": []}
server.terminate()
server.wait(30)
