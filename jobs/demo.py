"""`make demo`: the exactly-once source pipeline on an embedded local broker, crashed and resumed.

The script to hand to spark-submit or python; the code ships in the wheel as
`spark_eos_connect.apps.jobs.demo`.
"""

import sys

from spark_eos_connect.apps.jobs.demo import main

if __name__ == "__main__":
    sys.exit(main())
