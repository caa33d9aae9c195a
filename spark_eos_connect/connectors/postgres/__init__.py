"""PostgreSQL connectors by role: `cdc` (PostgresCdcSource, the database's changes into Kafka as
Debezium's events) and `sink` (PostgresSink, Kafka records into tables with their offsets)."""
