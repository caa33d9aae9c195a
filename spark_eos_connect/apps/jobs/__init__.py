"""The shipped jobs, importable from the wheel: `python -m spark_eos_connect.apps.jobs.<job>` or
`spark-submit jobs/<job>.py` (a thin wrapper around the module of the same name).

- `source_to_kafka`: a source connector into Kafka, exactly once;
- `kafka_to_delta`: Kafka topics into a Delta table (DeltaSink), exactly once;
- `kafka_to_sink`: Kafka topics into any sink connector, offsets committed to `connect-<name>`;
- `end_to_end`: generator -> Kafka -> Delta, verified;
- `demo`: `make demo`, the first two killed with SIGKILL and resumed.
"""

JOBS = ("source_to_kafka", "kafka_to_delta", "kafka_to_sink", "end_to_end", "demo")
