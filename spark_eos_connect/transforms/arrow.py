"""The topic-only head of a chain, run over an Arrow batch before any record is built.

A chain often starts with stages that look at nothing but the topic: `RegexRouter`, and
`Filter`, each either unconditional or gated by `TopicNameMatches` (with or without `negate`).
On the sink side the records arrive as an Arrow batch with a `topic` column; running those
stages there decides each distinct topic once, rewrites the column with one `take`, and drops
the filtered rows before any key or value is converted. `split_topic_stages(chain)` returns
that head as `TopicStages` and the rest as an ordinary `TransformChain`; applying the head to a
batch and then the rest to each record gives the same records as the whole chain per record.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from spark_eos_connect.transforms.chain import TransformChain, TransformStage
from spark_eos_connect.transforms.predicates import TopicNameMatches
from spark_eos_connect.transforms.record import ConnectRecord
from spark_eos_connect.transforms.routing import Filter, RegexRouter

__all__ = ["TopicStages", "split_topic_stages"]


def _topic_only(stage: TransformStage) -> bool:
    kind = type(stage.transformation)
    if kind not in (RegexRouter, Filter):
        return False
    return stage.predicate is None or type(stage.predicate) is TopicNameMatches


class TopicStages:
    """Leading stages that only read and rewrite the topic."""

    def __init__(self, stages: tuple[TransformStage, ...]) -> None:
        self.stages = stages

    def __bool__(self) -> bool:
        return bool(self.stages)

    def outcome(self, topic: str) -> str | None:
        """The topic after these stages, or None when one of them drops the record."""
        record: ConnectRecord | None = ConnectRecord(topic)
        for stage in self.stages:
            assert record is not None
            record = stage.apply(record)
            if record is None:
                return None
        assert record is not None
        return record.topic

    def apply(self, batch: pa.RecordBatch, column: str = "topic") -> pa.RecordBatch:
        """`batch` with its topic column rewritten and the dropped rows removed."""
        if not self.stages or batch.num_rows == 0:
            return batch
        index = batch.schema.get_field_index(column)
        if index < 0:
            raise KeyError(f"the batch has no {column!r} column (columns: {batch.schema.names})")
        encoded = pc.dictionary_encode(batch.column(index), null_encoding="encode")
        topics: list[str | None] = []
        keep: list[bool] = []
        for topic in encoded.dictionary.to_pylist():
            result = topic if topic is None else self.outcome(topic)
            topics.append(result)
            keep.append(topic is None or result is not None)
        rewritten = pc.take(pa.array(topics, pa.string()), encoded.indices)
        mask = pc.take(pa.array(keep, pa.bool_()), encoded.indices)
        field = batch.schema.field(index).with_type(pa.string())
        return batch.set_column(index, field, rewritten).filter(mask)


def split_topic_stages(chain: TransformChain) -> tuple[TopicStages, TransformChain]:
    """The chain's topic-only head (possibly empty) and the chain of the remaining stages."""
    count = 0
    for stage in chain.stages:
        if not _topic_only(stage):
            break
        count += 1
    return TopicStages(chain.stages[:count]), TransformChain(chain.stages[count:])
