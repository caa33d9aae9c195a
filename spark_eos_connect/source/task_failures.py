"""What a live source task's Kafka failures mean, named for the user: a fenced producer (its
driver stopped it, or a newer generation runs), a record Kafka refused (with the ACL the
principal lacks), or a transaction that failed as a whole."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.errors import missing_acl
from spark_eos_connect.kafka.producers import (
    PRODUCER_ERRORS,
    ProducerClientError,
    ProducerFencedError,
    delivery_error_text,
    is_fenced,
    is_fenced_delivery,
    refused_reason,
)
from spark_eos_connect.source.plan import SourceTaskPlan


class DeliveryFailedError(EosConnectError):
    """Kafka did not accept a record for good; its source offset is not committed."""


class TaskFailures:
    """Explains the failures of the task `plan` describes, on the cluster `kafka` reaches
    (resolved settings: the ACL hints ask its admin API)."""

    def __init__(self, plan: SourceTaskPlan, kafka: Mapping[str, Any]) -> None:
        self.plan = plan
        self.kafka = kafka

    def refused_deliveries(self, refusals: list[tuple[str, Any]]) -> EosConnectError:
        """The failure of a transaction some of whose records Kafka refused (`refusals`: (topic,
        error) in report order): the first refusal names its topic and, when an ACL is missing,
        the operation the principal needs (later errors, such as the producer's `Erroneous
        state`, only follow from it). Refusals that say the producer was fenced mean the task
        was."""
        plan = self.plan
        topic, first = refusals[0]
        if is_fenced_delivery(first):
            return ProducerFencedError(
                f"task {plan.task} of connector {plan.connector} was fenced by a newer producer "
                f"with transactional id {plan.transactional_id}; its records were not committed"
            )
        denied = missing_acl(first, "Write", topic, self.kafka)
        return DeliveryFailedError(
            f"Kafka refused {len(refusals)} records of task {plan.task} of connector "
            f"{plan.connector} (first: {topic}: {delivery_error_text(first)}); their "
            "offsets are not "
            "committed" + (f"; {denied}" if denied is not None else "")
        )

    def refused(
        self, error: ProducerClientError, topic: str, refusals: list[tuple[str, Any]]
    ) -> EosConnectError:
        """The producer refused a record of `topic` at once (its metadata already says why, e.g.
        a missing Write ACL): named like a refusal in a delivery report."""
        reason = refused_reason(error)
        if reason is None or is_fenced(error):
            return self.explained(error, refusals)
        plan = self.plan
        denied = missing_acl(error, "Write", topic, self.kafka)
        return DeliveryFailedError(
            f"Kafka refused a record of task {plan.task} of connector {plan.connector} "
            f"({topic}: {reason})"
            + (f"; {denied}" if denied is not None else "")
            + "; nothing of the transaction was committed"
        )

    def explained(
        self, error: ProducerClientError, refusals: list[tuple[str, Any]]
    ) -> EosConnectError:
        """A failed producer call: a refused record reported earlier is the cause if there is
        one (`refusals`), else fencing, else the transaction as a whole."""
        plan = self.plan
        if not is_fenced(error) and refusals:
            return self.refused_deliveries(refusals)
        if is_fenced(error):
            return ProducerFencedError(
                f"task {plan.task} of connector {plan.connector} was fenced by a newer producer "
                f"with transactional id {plan.transactional_id}; its records were not "
                f"committed ({error.args[0]})"
            )
        # Refused with no record refused: adding the offsets topic to the transaction was
        denied = missing_acl(error, "Write", plan.offsets_topic, self.kafka)
        return DeliveryFailedError(
            f"task {plan.task} of connector {plan.connector}: the transaction failed "
            f"({error.args[0]}); nothing of it was committed"
            + (f"; {denied} (or on the topics of its records)" if denied is not None else "")
        )

    def kafka_failure(
        self, error: ProducerClientError | SystemError, refusals: list[tuple[str, Any]]
    ) -> Exception:
        """What a client error means for the task (a fenced producer fails while serving
        delivery reports with a SystemError whose cause is the client's exception)."""
        cause = error if isinstance(error, PRODUCER_ERRORS) else error.__cause__
        if isinstance(cause, PRODUCER_ERRORS):
            return self.explained(cause, refusals)
        plan = self.plan
        if plan.exactly_once:  # a fenced producer's flush may fail without any error
            return ProducerFencedError(
                f"task {plan.task} of connector {plan.connector} was most likely fenced by a "
                f"newer producer with transactional id {plan.transactional_id}: its producer "
                f"failed ({error}); its records were not committed"
            )
        return error
