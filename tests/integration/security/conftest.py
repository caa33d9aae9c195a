"""A SASL_SSL broker enforcing ACLs, shared by the security tests, and principals on it.

The broker starts once per pytest worker; every security test module carries the `security`
xdist group, so under `--dist loadgroup` one worker runs them all against one broker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from spark_eos_connect.jvm.broker import LocalKafkaBroker

SECURITY_MARKS = [pytest.mark.integration, pytest.mark.xdist_group("security")]


@pytest.fixture(scope="session")
def secured_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafkaBroker]:
    """`LocalKafkaBroker(security="sasl_ssl")`: SCRAM-SHA-512/PLAIN over TLS, ACLs enforced."""
    broker = LocalKafkaBroker(
        data_dir=tmp_path_factory.mktemp("kafka-sasl-ssl"), security="sasl_ssl"
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.close()


@dataclass(frozen=True)
class Principal:
    """A SCRAM user of the secured broker and its librdkafka settings."""

    name: str
    password: str
    config: dict[str, str]

    @property
    def user(self) -> str:
        """The ACL principal, `User:<name>`."""
        return f"User:{self.name}"


@pytest.fixture
def principal_factory(secured_broker: LocalKafkaBroker) -> Iterator[Callable[[str], Principal]]:
    """`make("alice")`: a new SCRAM user with no ACLs; its ACLs are deleted at teardown."""
    made: list[Principal] = []

    def make(prefix: str = "user") -> Principal:
        name, password = f"{prefix}-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
        secured_broker.create_user(name, password)
        config = secured_broker.client_config(name, password)
        made.append(Principal(name, password, config))
        return made[-1]

    yield make
    secured_broker.delete_acls(acl_filter(p.user) for p in made)


def acl_filter(user: str) -> AclBindingFilter:
    """Every ACL of `user`."""
    return AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        user,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )


def allow(
    user: str,
    operation: AclOperation,
    resource: ResourceType,
    name: str,
    pattern: ResourcePatternType = ResourcePatternType.LITERAL,
) -> AclBinding:
    """An ALLOW ACL for `user` from any host."""
    return AclBinding(resource, name, pattern, user, "*", operation, AclPermissionType.ALLOW)
