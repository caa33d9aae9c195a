"""PostgresCdcSource: PostgreSQL changes (logical decoding, `pgoutput`) into Kafka exactly once,
as Debezium-shaped events. `pgoutput` decodes messages, `schemas` and `envelope` make Connect
schemas and Debezium's envelope, `positions` the offsets, `database` talks to PostgreSQL
(psycopg 3), `task` and `connector` are the Connect side."""

from __future__ import annotations

from spark_eos_connect.connectors.postgres.cdc.connector import PostgresCdcSourceConnector

__all__ = ["PostgresCdcSourceConnector"]
