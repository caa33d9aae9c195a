"""What a live source task's Kafka failures are named: a refused record (its topic, the reason,
the ACL the principal lacks), a fenced producer, a failed transaction, and a producer failing
without a Kafka error (fenced, most likely, in exactly-once mode)."""

from __future__ import annotations

from dataclasses import replace

from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.producers import ProducerFencedError, ProducerRequestError
from spark_eos_connect.source.task_failures import DeliveryFailedError, TaskFailures
from spark_eos_connect.testing import example_plan

KAFKA = {"bootstrap.servers": "unused:1"}
DENIED = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed")


def failures(exactly_once: bool = True) -> TaskFailures:
    return TaskFailures(example_plan([], exactly_once=exactly_once), KAFKA)


def test_a_record_refused_at_once_names_its_topic_reason_and_missing_acl() -> None:
    error = failures().refused(KafkaException(DENIED), "orders", [])

    assert isinstance(error, DeliveryFailedError)
    assert "(orders: Broker: Topic authorization failed)" in str(error)
    assert "it needs Write on Topic 'orders'" in str(error)
    assert str(error).endswith("nothing of the transaction was committed")


def test_the_first_refused_delivery_is_the_cause() -> None:
    refusals = [("orders", DENIED), ("orders", KafkaError(KafkaError._STATE))]

    error = failures().refused_deliveries(refusals)

    assert isinstance(error, DeliveryFailedError)
    assert "Kafka refused 2 records of task 0 of connector c (first: orders:" in str(error)
    assert "it needs Write on Topic 'orders'" in str(error)


def test_fenced_deliveries_and_calls_mean_a_fenced_task() -> None:
    fenced = KafkaError(KafkaError.PRODUCER_FENCED)

    assert isinstance(failures().refused_deliveries([("t", fenced)]), ProducerFencedError)
    error = failures().explained(KafkaException(fenced), [("t", DENIED)])
    assert isinstance(error, ProducerFencedError)
    assert "transactional id eosconnect-c-0" in str(error)


def test_a_failed_call_after_a_refused_record_is_named_by_the_refusal() -> None:
    failed = ProducerRequestError("_INCONSISTENT", "Unable to commit", txn_requires_abort=True)

    with_refusal = failures().explained(failed, [("orders", DENIED)])
    alone = failures().explained(failed, [])

    assert "Kafka refused 1 records" in str(with_refusal)
    assert isinstance(alone, DeliveryFailedError)
    assert "the transaction failed (_INCONSISTENT" in str(alone)


def test_a_producer_failing_without_a_kafka_error_is_most_likely_fenced_with_transactions() -> None:
    crashed = SystemError("error return without exception set")

    assert isinstance(failures().kafka_failure(crashed, []), ProducerFencedError)
    assert failures(exactly_once=False).kafka_failure(crashed, []) is crashed
    caused = SystemError("callback failed")
    caused.__cause__ = KafkaException(KafkaError(KafkaError.PRODUCER_FENCED))
    assert isinstance(failures(exactly_once=False).kafka_failure(caused, []), ProducerFencedError)


def test_the_plan_named_is_the_current_one() -> None:
    named = failures()
    named.plan = replace(named.plan, task=3)

    assert "task 3 of connector c" in str(named.refused_deliveries([("t", DENIED)]))
