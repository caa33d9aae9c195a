"""spark-submit job: Kafka topics into a Delta Lake table, exactly once (the DeltaSink connector).

The script to hand to spark-submit or python; the code ships in the wheel as
`spark_eos_connect.apps.jobs.kafka_to_delta`. `--help` lists its options.
"""

import sys

from spark_eos_connect.apps.jobs.kafka_to_delta import main

if __name__ == "__main__":
    sys.exit(main())
