"""Fetch the JVM parts (Kafka broker, Delta Lake) from Maven Central into a local cache.

Each bundle is a small pom shipped in `spark_eos_connect/jvm/`. Maven resolves it once into
`<cache>/<bundle>/` (a Connect plugin's into `<cache>/<bundle>/<plugin>/`, so that
`<cache>/<bundle>` is a `plugin.path`); a marker file makes the second call instant. The cache
folder is `$EOSCONNECT_JARS_DIR` when set (the Makefile points it at the repository's ignored
`.jars/`), else the folder `make setup` used for this environment (recorded in the environment,
so a fresh shell with the venv finds the task host `make setup` built there), otherwise
`~/.cache/spark-eos-connect/jars`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from spark_eos_connect.errors import SetupError

BUNDLES: dict[str, list[str]] = {
    "kafka": ["-DincludeScope=runtime"],
    "delta": ["-DexcludeTransitive=true"],
    "spark-kafka": ["-DexcludeTransitive=true"],
    "connect": ["-DincludeScope=runtime"],
    "debezium": ["-DincludeScope=runtime"],
    "connect-file": ["-DexcludeTransitive=true"],
}
"""Fetched by `main()` (`make setup`): the broker, Delta, Spark's Kafka source (the faster
reader in front of `delta_sink`), Kafka Connect (the tests compare the project's converters,
transforms, REST API and records with Connect's own) and Debezium's PostgreSQL connector (a
plugin of that worker: the tests compare PostgresCdcSource's envelope with its) and Connect's
own file connectors (the Java plugin the JVM task host's tests run)."""
PLUGIN_BUNDLES: dict[str, str] = {
    "debezium": "debezium-connector-postgres",
    "connect-file": "connect-file",
}
"""Bundles that are Connect plugins, with the sub-folder their jars go into: the bundle's folder
is then a `plugin.path` holding that one plugin (`plugin_path`)."""
SESSION_BUNDLES = ("delta", "spark-kafka")
"""The bundles every Spark started from this environment gets (`spark.jars`)."""
_MARKER = ".complete"


JARS_DIR_ENV = "EOSCONNECT_JARS_DIR"


def recorded_root_file(prefix: str = sys.prefix) -> Path:
    """Where `make setup` records, inside a Python environment, the jars folder it filled."""
    return Path(prefix) / "share" / "spark-eos-connect" / "jars-dir"


def cache_root(prefix: str = sys.prefix) -> Path:
    """The folder that holds one sub-folder of jars per bundle."""
    configured = os.environ.get(JARS_DIR_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    recorded = recorded_root_file(prefix)
    if recorded.is_file():
        return Path(recorded.read_text().strip())
    return Path.home() / ".cache" / "spark-eos-connect" / "jars"


def record_cache_root(prefix: str = sys.prefix) -> Path:
    """Record `cache_root()` in the environment at `prefix`, for shells without
    `$EOSCONNECT_JARS_DIR`; the record's path."""
    target = recorded_root_file(prefix)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"{cache_root(prefix)}\n")
    return target


def _pom_path(bundle: str) -> Path:
    return Path(str(resources.files("spark_eos_connect.jvm").joinpath(f"{bundle}-pom.xml")))


def _pom_digest(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:16]


def ensure_jars(bundle: str) -> Path:
    """Return the folder holding `bundle`'s jars, fetching them with Maven if needed."""
    known = BUNDLES
    if bundle not in known:
        raise SetupError(f"unknown jar bundle {bundle!r}; expected one of {sorted(known)}")
    pom = _pom_path(bundle)
    target = cache_root() / bundle
    marker = target / _MARKER
    digest = _pom_digest(pom)
    if marker.exists() and marker.read_text().strip() == digest:
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(
            "Maven (`mvn`) is needed once to fetch the JVM jars from Maven Central; "
            "install it (e.g. `apt-get install maven`) or run `make setup`"
        )
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    output = staging / PLUGIN_BUNDLES[bundle] if bundle in PLUGIN_BUNDLES else staging
    command = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={output}",
        *known[bundle],
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SetupError(
            f"Maven could not fetch the {bundle} jars (exit {result.returncode}):\n"
            f"{result.stdout[-4000:]}{result.stderr[-4000:]}"
        )
    if not any(output.glob("*.jar")):
        raise SetupError(
            f"Maven fetched no jar for the {bundle} bundle into {output}; "
            f"check {pom} and run `make setup` again"
        )
    (staging / _MARKER).write_text(digest + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def jar_files(bundle: str) -> list[Path]:
    """Absolute paths of every jar in `bundle`, fetching them first if needed."""
    return sorted(ensure_jars(bundle).glob("*/*.jar" if bundle in PLUGIN_BUNDLES else "*.jar"))


def plugin_path(bundle: str) -> Path:
    """The `plugin.path` folder of a Connect plugin bundle (`PLUGIN_BUNDLES`), fetched if
    needed: Connect loads the plugin inside it in a class loader of its own."""
    if bundle not in PLUGIN_BUNDLES:
        raise SetupError(f"{bundle!r} is not a Connect plugin; plugins: {sorted(PLUGIN_BUNDLES)}")
    return ensure_jars(bundle)


def session_jar_files() -> list[Path]:
    """The jars of `SESSION_BUNDLES`: Delta and Spark's Kafka source."""
    return [path for bundle in SESSION_BUNDLES for path in jar_files(bundle)]


def pyspark_conf_dir() -> Path:
    """pyspark's `conf/` folder (Spark's `$SPARK_HOME/conf` when pyspark is pip-installed),
    found without importing pyspark; created when missing."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SetupError("pyspark is not installed: run `make setup`")
    conf_dir = Path(spec.origin).parent / "conf"
    conf_dir.mkdir(exist_ok=True)
    return conf_dir


def write_spark_defaults(conf_dir: Path | None = None) -> Path:
    """Put Delta and Spark's Kafka source on the classpath of every Spark started from this
    environment, `spark-submit` included (its JVM starts before a job can add jars), via
    pyspark's `spark-defaults.conf`."""
    target = (conf_dir or pyspark_conf_dir()) / "spark-defaults.conf"
    jars = ",".join(str(path) for path in session_jar_files())
    target.write_text(
        "# Written by `python -m spark_eos_connect.jvm.jars` (make setup): Delta and Spark's\n"
        "# Kafka source from local jars.\n"
        f"spark.jars {jars}\n"
        "spark.sql.extensions io.delta.sql.DeltaSparkSessionExtension\n"
        "spark.sql.catalog.spark_catalog org.apache.spark.sql.delta.catalog.DeltaCatalog\n"
    )
    return target


DRIVER_PYTHON_COMMAND = "eosconnect-spark-python"
"""The interpreter command installed beside this one (`spark.worker_python`)."""


def write_spark_env(driver_python: Path, conf_dir: Path | None = None) -> Path:
    """Have a `spark-submit` from this environment start its driver JVM with
    `$PYSPARK_DRIVER_PYTHON` naming `driver_python` unless the caller set one, via pyspark's
    `spark-env.sh` (which Spark's launch scripts source). The driver JVM reads that variable once,
    at its start, for the Python processes it runs on its own (the lookup of Python data
    sources): a job cannot set it after its JVM is up, and pyspark's own daemon would print a
    `BrokenPipeError` traceback to the job's console whenever the JVM closes such a worker's
    socket first."""
    target = (conf_dir or pyspark_conf_dir()) / "spark-env.sh"
    target.write_text(
        "# Written by `python -m spark_eos_connect.jvm.jars` (make setup): the driver JVM's own\n"
        "# Python processes run this environment's interpreter through its quiet daemon.\n"
        f'PYSPARK_DRIVER_PYTHON="${{PYSPARK_DRIVER_PYTHON:-{driver_python}}}"\n'
    )
    return target


def main() -> None:
    """Fetch every bundle and register Delta with this environment's Spark (`make setup`)."""
    for bundle in BUNDLES:
        print(f"{bundle}: {len(jar_files(bundle))} jars in {ensure_jars(bundle)}")
    print(f"spark defaults: {write_spark_defaults()}")
    command = Path(sys.executable).parent / DRIVER_PYTHON_COMMAND
    if command.exists():
        print(f"spark env: {write_spark_env(command)}")
    print(f"jars folder recorded in {record_cache_root()}")


if __name__ == "__main__":
    main()
