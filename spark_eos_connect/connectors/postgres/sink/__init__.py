"""PostgresSink: Kafka records into PostgreSQL tables, exactly once (each `put`'s rows and the
Kafka offsets they end at in one database transaction). `config` reads the options, `schema`
maps Connect schemas to columns, `sql` writes the statements, `writer` runs them, `offsets`
keeps the offsets table, `connector` is the Connect side."""
