"""`make bench`: how far the pipeline is from its physical limit and from its peers, in one run
on one local broker.

Six works, each verified by counting what arrived (read_committed, the Delta table, the
sink's file, the rows read):

- **file -> Kafka** (one task): a file of `records` lines of `value_size` bytes, read by
  FileStreamSource. Rows: the limit (`limit`), a Kafka Connect 4.3.1 EOS worker
  (`connect_peer`), the eosconnect exactly-once query (`pipeline`).
- **generator -> Kafka** (`tasks` tasks): the Generator connector. Rows: the limit, eosconnect
  exactly-once and at-least-once (`pipeline`).
- **Kafka -> Delta**: a topic of `records` records into a Delta table by Spark's built-in Kafka
  source and by the eosconnect reader with `delta_sink` (`kafka_delta`).
- **Kafka -> file** (`tasks.max` 1 and 2): a topic of `sink_records` records into a file by
  Kafka Connect's FileStreamSinkConnector (`connect_peer`) and by the eosconnect reader and
  FileStreamSink (`sink`).
- **Kafka -> noop**: the same topic read into Spark's `noop` sink by Spark's Kafka source and
  by the eosconnect reader (`sink`).
- **first record**: seconds until the first record is visible, for `jobs/source_to_kafka.py`
  started from nothing and for a connector created on a running Connect worker
  (`first_record`).

`runner` runs them, `report` prints the table and writes the JSON, `chart` draws the PNG,
`cli` is what `jobs/bench.py` calls.
"""
