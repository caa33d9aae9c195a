"""`make demo`: start a local Kafka broker and show what works today.

Today that is the foundation: a transactional write whose aborted half stays invisible to a
read_committed consumer, and a Delta table written and read through the local Spark session.
"""

from __future__ import annotations

import tempfile

from confluent_kafka import Producer

from spark_eos_connect.kafka.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.spark.session import local_spark_session


def main() -> None:
    with LocalKafkaBroker() as broker:
        config = {"bootstrap.servers": broker.bootstrap_servers}
        print(f"broker up: bootstrap.servers={broker.bootstrap_servers}")
        ensure_topic(admin_client(config), "demo")
        producer = Producer({**config, "transactional.id": "demo"})
        producer.init_transactions(30)
        for commit in (False, True):
            producer.begin_transaction()
            for i in range(100):
                producer.produce("demo", value=f"{commit}-{i}".encode())
            if commit:
                producer.commit_transaction(30)
            else:
                producer.abort_transaction(30)
        committed = read_to_end(config, ["demo"], "read_committed")
        uncommitted = read_to_end(config, ["demo"], "read_uncommitted")
        print(
            f"produced 100 aborted + 100 committed records; read_committed sees "
            f"{len(committed)}, read_uncommitted sees {len(uncommitted)}"
        )

        spark = local_spark_session(app_name="eosconnect-demo")
        path = tempfile.mkdtemp(prefix="eosconnect-demo-") + "/table"
        values = [(r.offset, r.value.decode()) for r in committed if r.value is not None]
        spark.createDataFrame(values, "offset long, value string").write.format("delta").save(path)
        rows = spark.read.format("delta").load(path).count()
        print(f"Delta table {path}: {rows} rows (the committed records)")
        spark.stop()
        assert len(committed) == 100 and rows == 100


if __name__ == "__main__":
    main()
