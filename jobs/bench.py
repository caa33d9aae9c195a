"""`make bench`: records/s of the raw transactional producer, the exactly-once pipeline and the
at-least-once pipeline, side by side, on a local broker started for the run.

    python jobs/bench.py --records 1000000 --tasks 2 --per-trigger 200000 --value-size 100
"""

from __future__ import annotations

import argparse
import sys

from spark_eos_connect.bench import BenchConfig, run_bench


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    defaults = BenchConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--records",
        type=int,
        default=defaults.records,
        help="measured records per mode, across all tasks (a multiple of --tasks)",
    )
    parser.add_argument(
        "--tasks", type=int, default=defaults.tasks, help="tasks.max (parallel tasks)"
    )
    parser.add_argument(
        "--per-trigger",
        type=int,
        default=defaults.per_trigger,
        help="maxRecordsPerTrigger (records per micro-batch across all tasks)",
    )
    parser.add_argument(
        "--value-size", type=int, default=defaults.value_size, help="the Generator's value.size"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = BenchConfig(
            records=args.records,
            tasks=args.tasks,
            per_trigger=args.per_trigger,
            value_size=args.value_size,
        )
    except ValueError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 2
    report = run_bench(config, lambda line: print(line, flush=True))
    print()
    print(report.render(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
