"""`python jobs/bench.py` (`make bench`): arguments, the run, the table, the JSON and the PNG."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import fields, replace
from pathlib import Path

from spark_eos_connect.apps.bench.config import QUICK, WORKS, BenchConfig

ARGS_ENV = "BENCH_ARGS"
"""Extra arguments from the environment: `make bench BENCH_ARGS=--quick`."""
DEFAULT_OUT = Path("tmp/bench")
"""Where `bench-<records>.json` and `.png` go unless `--out` says otherwise (ignored by git).
The record count in the name keeps a full run's figures when a smaller run (`--quick`, the
README test's) writes its own."""
SIZES = {
    "records": "measured records of the generator and Kafka -> Delta modes",
    "file_records": "lines of the file -> Kafka modes' file",
    "tasks": "the Generator's tasks.max (records must be a multiple of it)",
    "per_trigger": "maxRecordsPerTrigger / maxOffsetsPerTrigger: records per micro-batch",
    "value_size": "generator value.size, file line length, Delta topic value size (bytes)",
    "delta_rounds": "measured rounds per Kafka -> Delta reader (after a warm-up round each)",
    "sink_records": "records of the topic the sinks and the readers into noop read",
    "sink_per_trigger": "records per micro-batch of the sink and noop queries",
    "reader_rounds": "measured rounds per reader into noop (after a warm-up round each)",
    "first_record_runs": "runs of each time-to-first-record mode (median kept)",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (default: `$BENCH_ARGS` then `sys.argv`); sizes left out are None (see
    `build_config`)."""
    if argv is None:
        argv = [*shlex.split(os.environ.get(ARGS_ENV, "")), *sys.argv[1:]]
    defaults = BenchConfig()
    parser = argparse.ArgumentParser(
        description="records/s of eosconnect next to its limit and its peers (Kafka Connect's "
        "EOS worker, Spark's Kafka source), on a local broker started for the run"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"development run: {QUICK['records']:,} records and file lines, "
        f"{QUICK['per_trigger']:,} per trigger, {QUICK['delta_rounds']} Delta rounds, "
        f"{QUICK['sink_records']:,} sink records",
    )
    for name, text in SIZES.items():
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=int,
            default=None,
            help=f"{text} (default {getattr(defaults, name):,})",
        )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(WORKS),
        help="run only this work (repeatable; default: all)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"folder for bench-<records>.json and .png (default {DEFAULT_OUT})",
    )
    return parser.parse_args(argv)


def build_config(args: argparse.Namespace) -> BenchConfig:
    """The defaults, then `--quick`'s sizes, then the sizes given explicitly."""
    known = {f.name for f in fields(BenchConfig)}
    sizes: dict[str, object] = dict(QUICK) if args.quick else {}
    sizes.update({n: getattr(args, n) for n in SIZES if getattr(args, n) is not None})
    if args.only:
        sizes["works"] = tuple(WORKS[w] for w in WORKS if w in args.only)
    config = BenchConfig(**{k: v for k, v in sizes.items() if k in known})  # type: ignore[arg-type]
    return polls_within_a_micro_batch(config)


def polls_within_a_micro_batch(config: BenchConfig) -> BenchConfig:
    """`config` with polls no larger than a task's share of a micro-batch: a micro-batch ends
    between two polls only, so a larger poll would fill it past `per_trigger` (a small run's
    first micro-batch would take every record, and nothing would be left to time)."""
    share = max(1, config.per_trigger // config.tasks)
    return replace(
        config,
        records_per_poll=min(config.records_per_poll, share),
        file_batch_size=min(config.file_batch_size, config.per_trigger),
    )


def main(argv: list[str] | None = None) -> int:
    """Run, print the table, write the JSON and the PNG; 0 when every count matched."""
    args = parse_args(argv)
    try:
        config = build_config(args)
    except ValueError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 2
    from spark_eos_connect.apps.bench.chart import write_png
    from spark_eos_connect.apps.bench.report import table_rows
    from spark_eos_connect.apps.bench.runner import run_bench

    report = run_bench(config, lambda line: print(line, flush=True))
    print()
    print(report.render(), flush=True)
    stem = args.out / f"bench-{config.records}"
    written = [report.write_json(stem.with_suffix(".json"))]
    title = (
        f"make bench: {config.records:,} records, {config.file_records:,} file lines, "
        f"{config.sink_records:,} sink records (records/s, ratios)"
    )
    png = write_png(table_rows(report.results), stem.with_suffix(".png"), title)
    if png is None:
        print("no PNG drawn: matplotlib is missing (pip install -e '.[bench]')")
    else:
        written.append(png)
    print("written: " + ", ".join(str(p) for p in written), flush=True)
    return 0 if report.ok else 1
