"""spark-submit job: generator source -> Kafka -> Delta Lake, exactly once end to end.

The script to hand to spark-submit or python; the code ships in the wheel as
`spark_eos_connect.apps.jobs.end_to_end`. `--help` lists its options.
"""

import sys

from spark_eos_connect.apps.jobs.end_to_end import main

if __name__ == "__main__":
    sys.exit(main())
