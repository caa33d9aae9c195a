"""`make bench`: how far the pipeline is from its physical limit and from its peers, in one run
on one local broker.

Three works, each verified by counting what arrived (read_committed, or the Delta table):

- **file -> Kafka** (one task): a file of `records` lines of `value_size` bytes, read by
  FileStreamSource. Rows: the limit (`limit`), a Kafka Connect 4.3.1 EOS worker
  (`connect_worker`), the eosconnect exactly-once query (`pipeline`).
- **generator -> Kafka** (`tasks` tasks): the Generator connector. Rows: the limit, eosconnect
  exactly-once and at-least-once (`pipeline`).
- **Kafka -> Delta**: a topic of `records` records into a Delta table by Spark's built-in Kafka
  source and by the eosconnect reader with `delta_sink` (`kafka_delta`).

`runner` runs them, `report` prints the table and writes the JSON, `chart` draws the PNG,
`cli` is what `jobs/bench.py` calls.
"""
