"""`source.offsets_mirror`: committed offsets copied to the global offsets topic, best effort."""

from __future__ import annotations

import json

import pytest

from spark_eos_connect.kafka.producers import ProducerRequestError
from spark_eos_connect.source.offsets_mirror import OffsetsMirror
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryProducer
from spark_eos_connect.testing import example_plan

GLOBAL = "eosconnect-offsets"


def test_offsets_go_to_the_mirror_topic_with_a_producer_built_on_first_use() -> None:
    log = MemoryLog()
    log.create_topic(GLOBAL, 25)
    built: list[MemoryProducer] = []

    def new_producer() -> MemoryProducer:
        built.append(MemoryProducer(log))
        return built[-1]

    mirror = OffsetsMirror(new_producer)
    mirror.write(example_plan([]), [({"s": 0}, {"n": 1})])  # no mirror topic: nothing
    assert built == []

    plan = example_plan([], mirror_offsets_topic=GLOBAL)
    mirror.write(plan, [({"s": 0}, {"n": 1})])
    mirror.write(plan, [({"s": 0}, {"n": 2})])
    mirror.flush(plan)

    assert len(built) == 1
    assert [json.loads(r.value) for r in log.read_committed(GLOBAL)] == [{"n": 1}, {"n": 2}]


def test_a_failed_mirror_write_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Refusing(MemoryProducer):
        def produce(self, *args: object, **kwargs: object) -> None:
            raise ProducerRequestError("_MSG_TIMED_OUT", "no broker")

    mirror = OffsetsMirror(lambda: Refusing(MemoryLog()))

    mirror.write(example_plan([], mirror_offsets_topic=GLOBAL), [({"s": 0}, {"n": 1})])

    assert f"mirroring offsets to {GLOBAL} failed" in caplog.text
