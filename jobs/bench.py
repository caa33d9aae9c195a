"""`make bench`: records/s of eosconnect next to its limit (the connector's own task and a
transactional producer, polling timed) and its peers (a Kafka Connect 4.3.1 worker's source and
sink connectors, Spark's built-in Kafka source into Delta and into `noop`), and the time to the
first record of a job started from nothing, on a local broker started for the run; prints the
table and writes tmp/bench/bench-<records>.json and .png.

    python jobs/bench.py            # 1,000,000 records, 3,000,000 for the file and the sinks
    python jobs/bench.py --quick    # 100,000 and 300,000 records, for development
"""

from __future__ import annotations

import sys

from spark_eos_connect.apps.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
