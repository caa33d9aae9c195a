"""spark-submit job: a Connect-style source connector into Kafka, exactly once (KIP-618).

The script to hand to spark-submit or python; the code ships in the wheel as
`spark_eos_connect.apps.jobs.source_to_kafka`. `--help` lists its options.
"""

import sys

from spark_eos_connect.apps.jobs.source_to_kafka import main

if __name__ == "__main__":
    sys.exit(main())
