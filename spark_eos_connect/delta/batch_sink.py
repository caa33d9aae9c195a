"""`delta_sink(options)`: the `foreachBatch` function of the Delta sink, on the driver.

    query = (
        spark.readStream.format("eosconnect").options(**options).load()
        .writeStream.foreachBatch(delta_sink(options))
        .option("checkpointLocation", checkpoint).start()
    )

Each call writes one micro-batch through `DeltaSinkTask` (one Delta commit, see
`delta.writer`), then runs `pre_commit` and the consumer group commit as a Connect sink worker
would (the Delta task returns `{}`: its offsets live in the table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from spark_eos_connect.api.sink import SinkTaskContext
from spark_eos_connect.delta.connector import DeltaSinkConnector, DeltaSinkTask
from spark_eos_connect.delta.writer import lower_keys
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.protocol.sink_groups import sink_group_id
from spark_eos_connect.runtime.commit_hooks import installed as installed_hooks
from spark_eos_connect.runtime.config.config_references import ConfigProviders, is_provider_option
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy, ensure_dlq_topic
from spark_eos_connect.sink.plan import sink_task_configs

TRANSFORMS_REFUSED = (
    "Option {option} is not supported by DeltaSink: Kafka Connect's Single Message Transforms "
    "are not applied to Delta, whose rows are a DataFrame written in foreachBatch. Transform "
    "the DataFrame (select, withColumn, filter, ...) before delta_sink, e.g. "
    "foreachBatch(lambda df, batch_id: sink(df.filter(...), batch_id)), and remove {option}"
)


def refuse_transforms(props: Mapping[str, Any]) -> None:
    """Raise `ConfigError` when `transforms` (or `predicates`) asks for a chain: the Delta sink
    writes DataFrames and does not run SMTs (lower-case option names)."""
    for option in ("transforms", "predicates"):
        if str(props.get(option) or "").strip(" ,"):
            raise ConfigError(TRANSFORMS_REFUSED.format(option=option))


class DeltaBatchSink:
    """The `foreachBatch` function: write the batch, then `pre_commit` and the group commit
    (skipped: the Delta task returns `{}`)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        props = lower_keys(options)
        refuse_transforms(props)
        providers = ConfigProviders.from_options(props)  # all here runs in the driver process
        props = providers.resolve({k: v for k, v in props.items() if not is_provider_option(k)})
        read = DataSourceOptions.read(props)
        rest, self.kafka = read.rest, read.kafka
        name = rest.get("name")
        if not name:
            raise ConfigError("Missing option name: the connector name is the Delta txnAppId")
        props.setdefault("connector.class", "DeltaSink")
        config = sink_task_configs(DeltaSinkConnector(), props, 1)[0]
        self.task = DeltaSinkTask()
        self.task.initialize(SinkTaskContext(config))
        self.task.start(config)
        self.group = sink_group_id(name)
        errors = ErrorPolicy.from_options(name, rest)
        if errors.dlq_topic:
            if "bootstrap.servers" not in self.kafka:
                raise ConfigError(
                    "errors.deadletterqueue.topic.name needs option kafka.bootstrap.servers"
                )
            ensure_dlq_topic(self.kafka, errors)

    def __call__(self, df: Any, batch_id: int) -> None:
        """Driver: one micro-batch."""
        current = self.task.write_batch(df, batch_id)
        committable = self.task.pre_commit(dict(current)) if current else {}
        installed_hooks().reached("before_group_commit", batch_id)
        if committable:
            offsets = {(tp.topic, tp.partition): o for tp, o in committable.items()}
            KafkaGroupOffsets(self.kafka).commit(self.group, offsets)
        installed_hooks().reached("during_group_commit", batch_id)
        summary = self.task.last_summary() or f"batch {batch_id}"
        if committable:
            summary += f"; {len(committable)} offsets committed to {self.group}"
        print(summary, flush=True)


def delta_sink(options: Mapping[str, Any]) -> Callable[[Any, int], None]:
    """Driver: the `foreachBatch` function writing Kafka rows of the `eosconnect` reader into
    the Delta table named by `path` or `table`, exactly once (options: see `DeltaSink`)."""
    return DeltaBatchSink(options)
