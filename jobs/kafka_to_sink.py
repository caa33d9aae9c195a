"""spark-submit job: Kafka topics into a sink connector, as a Kafka Connect sink worker runs it.

The script to hand to spark-submit or python; the code ships in the wheel as
`spark_eos_connect.apps.jobs.kafka_to_sink`. `--help` lists its options.
"""

import sys

from spark_eos_connect.apps.jobs.kafka_to_sink import main

if __name__ == "__main__":
    sys.exit(main())
