"""The `eosconnect` command line."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from spark_eos_connect import __version__
from spark_eos_connect.errors import ConfigError, EosConnectError

if TYPE_CHECKING:
    from spark_eos_connect.herder import Herder
    from spark_eos_connect.rest.auth import BasicAuth
    from spark_eos_connect.rest.listen import TlsFiles

BOOTSTRAP_ENV = "EOSCONNECT_BOOTSTRAP_SERVERS"
QUIET_LOG_LEVEL = "2"
"""librdkafka's `log_level` unless --verbose: critical lines only, not a FAIL line per retry
(what went wrong is in the error the command prints)."""
REACHABLE_WAIT_S = 8.0
"""How long a command waits for a first answer from the brokers before it names the address."""


def _run_kafka(args: argparse.Namespace) -> int:
    from spark_eos_connect.jvm.broker import LocalKafkaBroker
    from spark_eos_connect.jvm.cluster import LocalKafkaCluster

    if args.brokers < 1:
        raise ConfigError(f"--brokers must be at least 1, not {args.brokers}")
    if args.brokers > 1 and (args.security != "none" or args.port is not None):
        raise ConfigError(
            "--brokers N > 1 runs a PLAINTEXT cluster on free ports: leave out --security and "
            "--port (they apply to a single broker)"
        )
    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    kafka: LocalKafkaBroker | LocalKafkaCluster = (
        LocalKafkaCluster(args.brokers, data_dir=args.data_dir)
        if args.brokers > 1
        else LocalKafkaBroker(port=args.port, data_dir=args.data_dir, security=args.security)
    )
    try:
        kafka.start()
        for key, value in kafka.client_config().items():
            if key != "bootstrap.servers":
                print(f"{key}={value}")
        print(f"bootstrap.servers={kafka.bootstrap_servers}", flush=True)
        while not stop_requested.wait(0.5):
            if isinstance(kafka, LocalKafkaBroker) and not kafka.is_running():
                print(f"the broker exited unexpectedly; see {kafka.log_path}", file=sys.stderr)
                return 1
            if isinstance(kafka, LocalKafkaCluster) and not kafka.running():
                print(f"every broker exited; see the logs in {kafka.data_dir}", file=sys.stderr)
                return 1
    finally:
        kafka.close()
    return 0


class _UsageError(Exception):
    """Bad command-line usage detected after parsing (exit code 2)."""


def _kafka_options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _UsageError(f"-X takes KEY=VALUE, got {pair!r}")
        options[key] = value
    return options


def _kafka_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The Kafka client settings of an admin command or `eosconnect rest`: `--bootstrap-servers`
    and the `-X` settings, their `${provider:[path:]key}` references resolved here as the driver
    resolves its `kafka.*` options. `-X config.providers...` settings choose the providers
    (default: env, file and directory) and are not passed to Kafka. A reference that cannot be
    resolved is a ConfigError naming the option and the reference, never a value."""
    from spark_eos_connect.runtime.config.config_references import (
        ConfigProviders,
        is_provider_option,
    )

    options = _kafka_options(args.kafka_option)
    given = options.pop("bootstrap.servers", None)
    if args.bootstrap_servers and given and given != args.bootstrap_servers:
        raise _UsageError(
            f"--bootstrap-servers {args.bootstrap_servers} and -X bootstrap.servers={given} "
            "differ: give the address once"
        )
    bootstrap = args.bootstrap_servers or given
    if not bootstrap:
        raise _UsageError(
            f"--bootstrap-servers (or -X bootstrap.servers=...) is required (or set "
            f"{BOOTSTRAP_ENV})"
        )
    if not getattr(args, "verbose", False):
        options.setdefault("log_level", QUIET_LOG_LEVEL)
    providers = ConfigProviders.from_options(
        {key: value for key, value in options.items() if is_provider_option(key)}
    )
    kafka = {key: value for key, value in options.items() if not is_provider_option(key)}
    resolved: dict[str, Any] = providers.resolve(kafka, prefix="-X ")
    servers = providers.resolve({"--bootstrap-servers": bootstrap})
    resolved["bootstrap.servers"] = servers["--bootstrap-servers"]
    return resolved


def _herder(args: argparse.Namespace) -> Herder:
    from spark_eos_connect.herder import Herder, WorkerSettings
    from spark_eos_connect.jvm_tasks.resolution import checked_plugin_path
    from spark_eos_connect.kafka.clients import ensure_reachable
    from spark_eos_connect.kafka.security import authenticates

    plugin_path = ",".join(args.plugin_path) or None
    checked_plugin_path(plugin_path)  # a missing folder is named before Kafka is asked
    kafka = _kafka_settings(args)
    if not authenticates(kafka):  # a refused login is named by the herder's own first call
        ensure_reachable(kafka, min(args.timeout, REACHABLE_WAIT_S), fail_fast=True)
    settings = WorkerSettings(
        group_id=args.group_id,
        config_topic=args.config_topic,
        offsets_topic=args.offsets_topic,
        status_topic=args.status_topic,
        exactly_once=args.exactly_once_source_support.lower() == "enabled",
        plugin_packages=tuple(args.plugin_packages),
        plugin_path=plugin_path,
    )
    return Herder(kafka, settings, timeout_s=args.timeout).start()


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, sort_keys=False))


NOT_FOUND_HINT = "; eosconnect connectors lists the connectors there are"


def _admin(action: Callable[[Herder, argparse.Namespace], Any]) -> Callable[..., int]:
    """Wrap an admin command: JSON on stdout, exit 1 with the message on stderr (no traceback)
    when refused, also for a librdkafka error the herder passes on as it is."""

    def run(args: argparse.Namespace) -> int:
        from spark_eos_connect.herder import HerderError
        from spark_eos_connect.kafka.errors import KafkaClientError

        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        from spark_eos_connect.errors import ConfigError

        try:
            herder = _herder(args)
        except (_UsageError, ConfigError) as error:  # a bad -X reference is a usage error
            print(f"eosconnect {args.command}: {error}", file=sys.stderr)
            return 2
        except (EosConnectError, ValueError) as error:
            print(f"eosconnect {args.command}: {error}", file=sys.stderr)
            return 1
        try:
            result = action(herder, args)
        except HerderError as error:
            hint = NOT_FOUND_HINT if error.status == 404 else ""
            print(
                f"eosconnect {args.command}: {error} (HTTP {error.status}){hint}", file=sys.stderr
            )
            return 1
        except (EosConnectError, KafkaClientError) as error:
            print(f"eosconnect {args.command}: {error}", file=sys.stderr)
            return 1
        finally:
            herder.close()
        if result is not None:
            _print_json(result)
        return 0

    return run


def _read_json(args: argparse.Namespace, inline: str | None, subject: str) -> Any:
    """The JSON given inline or in `--file` (``-``: standard input); a 400 when malformed."""
    from spark_eos_connect.herder import BadRequestError

    if args.file is not None:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    else:
        text = inline or ""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise BadRequestError(f"{subject} not valid JSON: {error}") from error


def _read_offsets_body(args: argparse.Namespace) -> Any:
    return _read_json(args, args.offsets, "The offsets are")


def _create(herder: Herder, args: argparse.Namespace) -> dict[str, Any]:
    """`eosconnect create`: as ``POST /connectors``; the 201 body."""
    config = _read_json(args, args.config, "The config is")
    return herder.create(args.name, config, args.initial_state)


def _target_answer(herder: Herder, name: str, target: str) -> dict[str, Any]:
    """What pause, resume and stop print: the target state written and the connector's status
    as `status` shows it now (a running query follows within a second)."""
    return {"name": name, "target_state": target, "connector": herder.status(name)["connector"]}


def _rest_tls(args: argparse.Namespace) -> TlsFiles | None:
    """The TLS files of `eosconnect rest`, loaded once to fail early; None without --certfile."""
    from spark_eos_connect.rest.listen import TlsFiles, read_password_file

    if args.certfile is None:
        if args.keyfile or args.keyfile_password_file:
            raise _UsageError("--keyfile and --keyfile-password-file need --certfile")
        return None
    password = None
    if args.keyfile_password_file:
        password = read_password_file(args.keyfile_password_file)
    keyfile = Path(args.keyfile) if args.keyfile else None
    tls = TlsFiles(Path(args.certfile), keyfile, password or None)
    tls.check()
    return tls


def _rest_security(args: argparse.Namespace) -> tuple[TlsFiles | None, BasicAuth | None]:
    """(TLS, basic auth) of `eosconnect rest`; ConfigError when refused or unreadable."""
    from spark_eos_connect.rest.auth import load_credentials
    from spark_eos_connect.rest.listen import check_exposure

    check_exposure(args.host, args.certfile is not None, args.basic_auth_file is not None)
    tls = _rest_tls(args)
    auth = load_credentials(args.basic_auth_file) if args.basic_auth_file else None
    return tls, auth


def _run_rest(args: argparse.Namespace) -> int:
    from spark_eos_connect.errors import ConfigError
    from spark_eos_connect.rest import serve
    from spark_eos_connect.rest.guards import max_request_bytes

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from spark_eos_connect.rest.listen import check_port_free

    try:
        limit = max_request_bytes(args.max_request_bytes)
        tls, auth = _rest_security(args)
        check_port_free(args.host, args.port)
        herder = _herder(args)
    except (_UsageError, ConfigError) as error:
        print(f"eosconnect rest: {error}", file=sys.stderr)
        return 2
    except EosConnectError as error:  # the brokers refused or did not answer
        print(f"eosconnect rest: {error}", file=sys.stderr)
        return 1
    serve(herder, host=args.host, port=args.port, tls=tls, auth=auth, max_request_bytes=limit)
    return 0


def _add_cluster_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cluster")
    group.add_argument(
        "--bootstrap-servers",
        default=os.environ.get(BOOTSTRAP_ENV),
        help=f"Kafka bootstrap servers, HOST:PORT[,...] (default: ${BOOTSTRAP_ENV})",
    )
    group.add_argument("--group-id", default="eosconnect", help="group.id (default: %(default)s)")
    group.add_argument(
        "--config-topic",
        default="eosconnect-configs",
        help="config.storage.topic (default: %(default)s)",
    )
    group.add_argument(
        "--offsets-topic",
        default="eosconnect-offsets",
        help="offset.storage.topic (default: %(default)s)",
    )
    group.add_argument(
        "--status-topic",
        default="eosconnect-status",
        help="status.storage.topic (default: %(default)s)",
    )
    group.add_argument(
        "--exactly-once-source-support",
        default="enabled",
        choices=["enabled", "preparing", "disabled"],
        help="exactly.once.source.support: with 'enabled', altering source offsets fences the "
        "connector's task producers and writes in a transaction (default: %(default)s)",
    )
    group.add_argument(
        "--plugin-packages",
        action="append",
        default=[],
        metavar="PACKAGES",
        help="plugin.packages: Python packages (comma-separated, repeatable) whose connector "
        "classes may be named by dotted path; the shipped connectors are always available and "
        "no other module is imported for a connector.class (default: none)",
    )
    group.add_argument(
        "--plugin-path",
        action="append",
        default=[],
        metavar="PATHS",
        help="plugin.path, as in a Connect worker's config: folders of Kafka Connect Java "
        "plugins (comma-separated, repeatable), whose connectors /connector-plugins lists and "
        "validates with their own ConfigDef; a source connector.class they hold is that Java "
        "plugin; a folder that does not exist is refused at start (default: none)",
    )
    group.add_argument(
        "-X",
        "--kafka-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Kafka client setting, e.g. -X security.protocol=SASL_SSL (repeatable); values "
        "may reference secrets, e.g. -X 'sasl.password=${file:/etc/kafka.properties:password}' "
        "(providers env, file and directory unless -X config.providers=... says otherwise)",
    )
    group.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per Kafka operation (default: 30)"
    )
    group.add_argument(
        "--verbose",
        action="store_true",
        help="print the Kafka client's (librdkafka's) own log lines too",
    )


def _add_admin_commands(commands: Any) -> None:
    def command(name: str, help: str, description: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(
            name, help=help, description=description
        )
        _add_cluster_options(parser)
        return parser

    rest = command(
        "rest",
        "serve Kafka Connect's REST API backed by the internal topics",
        "Serve Kafka Connect's REST API (/connectors, /connectors/{c}/status|config|tasks|"
        "offsets|stop|pause|resume|restart, /connector-plugins) backed only by the Kafka "
        "internal topics. OpenAPI description at /openapi.json.",
    )
    rest.add_argument("--port", type=int, default=8083, help="listen port (default: 8083)")
    rest.add_argument(
        "--host",
        default="127.0.0.1",
        help="listen address (default: %(default)s); an address other than loopback "
        "(127.0.0.0/8, ::1, localhost) needs --certfile and/or --basic-auth-file",
    )
    rest.add_argument(
        "--max-request-bytes",
        default=None,
        metavar="N",
        help="rest.max.request.bytes: the largest request body accepted; a larger one is "
        "answered 413 before it is parsed (default: 4194304)",
    )
    security = rest.add_argument_group("security")
    security.add_argument(
        "--certfile", help="serve HTTPS with this PEM certificate chain (and key, if no --keyfile)"
    )
    security.add_argument("--keyfile", help="the PEM private key of --certfile")
    security.add_argument(
        "--keyfile-password-file",
        help="a file whose first line is the password of an encrypted key",
    )
    security.add_argument(
        "--basic-auth-file",
        help="require HTTP basic authentication, users and passwords from this file in the format "
        "of Kafka Connect's BasicAuthSecurityRestExtension (PropertyFileLoginModule): "
        "'user: password' (or user=password) lines; every path answers 401 without them",
    )
    rest.set_defaults(handler=_run_rest)

    connectors = command(
        "connectors",
        "list connectors (JSON)",
        "List the connectors in the config topic as a JSON array; with --expand, an object of "
        "each connector's status and/or info (config, tasks, type).",
    )
    connectors.add_argument("--expand", action="append", choices=["status", "info"], default=[])
    connectors.set_defaults(
        handler=_admin(lambda h, a: h.connectors_expanded(a.expand) if a.expand else h.connectors())
    )

    for name, help, description, action in (
        (
            "status",
            "show a connector's and its tasks' states (JSON)",
            "Show the connector's state and its tasks' states from the status topic.",
            lambda h, a: h.status(a.name),
        ),
        (
            "stop",
            "stop a connector: no tasks, no writes (idempotent)",
            "Write an empty task set and the STOPPED target state; running queries stop its "
            "tasks. Offsets can be altered or reset only while a connector is stopped. Prints "
            "the target state and the connector's status as `status` shows it.",
            lambda h, a: (h.stop(a.name), _target_answer(h, a.name, "STOPPED"))[1],
        ),
        (
            "pause",
            "pause a connector",
            "Write the PAUSED target state; the connector's tasks stop processing but keep "
            "their configs. Without a running query the status becomes PAUSED. Prints the "
            "target state and the connector's status as `status` shows it.",
            lambda h, a: (h.pause(a.name), _target_answer(h, a.name, "PAUSED"))[1],
        ),
        (
            "resume",
            "resume a paused or stopped connector",
            "Write the STARTED target state; the running query brings the tasks back. Without "
            "one the status becomes UNASSIGNED, its trace saying how to start a query. Prints "
            "the target state and the connector's status as `status` shows it.",
            lambda h, a: (h.resume(a.name), _target_answer(h, a.name, "STARTED"))[1],
        ),
        (
            "delete",
            "delete a connector (its offsets are kept)",
            "Delete the connector's config, target state and statuses (tombstones), as DELETE "
            "/connectors/NAME does. The name is taken exactly as given, so any connector in the "
            "config topic can be deleted, also one whose name no URL can hold (with '/', or "
            "spaces at its ends); put -- before a name starting with '-'. Offsets stay, as in "
            "Connect.",
            lambda h, a: (h.delete(a.name), {"name": a.name, "deleted": True})[1],
        ),
    ):
        parser = command(name, help, description)
        parser.add_argument("name", help="the connector's name")
        parser.set_defaults(handler=_admin(action))

    _add_create_command(command)
    offsets = commands.add_parser(
        "offsets",
        help="show, alter or reset a connector's offsets",
        description="Offsets of source connectors (offsets topics) and sink connectors (consumer "
        "group connect-<name>), in Kafka Connect's REST shape. alter and reset need the "
        "connector to be stopped first (eosconnect stop NAME).",
    )
    verbs = offsets.add_subparsers(dest="verb", required=True, metavar="VERB")
    get = verbs.add_parser("get", help="print the committed offsets (JSON)")
    alter = verbs.add_parser(
        "alter",
        help="change the offsets of the partitions given",
        description='Alter offsets; the body is {"offsets":[{"partition":{...},"offset":{...}}]} '
        '(sinks: {"kafka_topic":t,"kafka_partition":p} -> {"kafka_offset":n}); a null source '
        "offset resets that partition. Partitions not named keep their offsets.",
    )
    body = alter.add_mutually_exclusive_group(required=True)
    body.add_argument("--offsets", help="the JSON body")
    body.add_argument("--file", help="a file holding the JSON body ('-' for standard input)")
    reset = verbs.add_parser("reset", help="remove every offset of the connector")
    for parser, action in (
        (get, lambda h, a: h.offsets(a.name)),
        (alter, lambda h, a: h.alter_offsets(a.name, _read_offsets_body(a))),
        (reset, lambda h, a: h.reset_offsets(a.name)),
    ):
        parser.add_argument("name", help="the connector's name")
        _add_cluster_options(parser)
        parser.set_defaults(handler=_admin(action))


def _add_create_command(command: Callable[[str, str, str], argparse.ArgumentParser]) -> None:
    create = command(
        "create",
        "define a connector, as POST /connectors (a Spark query runs it)",
        "Write a connector's config (and, with --initial-state, its target state) to the config "
        "topic, as POST /connectors does, and print the same 201 body: the connector's info "
        "and its status. Nothing runs it until a Spark query with option name=NAME starts; "
        "until then its status says so.",
    )
    create.add_argument("name", help="the connector's name")
    body = create.add_mutually_exclusive_group(required=True)
    body.add_argument("--config", help="the config, a JSON object of options")
    body.add_argument("--file", help="a file holding the config ('-' for standard input)")
    create.add_argument(
        "--initial-state",
        choices=["RUNNING", "PAUSED", "STOPPED"],
        default=None,
        help="the target state to create it in (KIP-980; default: RUNNING)",
    )
    create.set_defaults(handler=_admin(_create))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every `eosconnect` subcommand."""
    parser = argparse.ArgumentParser(
        prog="eosconnect",
        description="Kafka Connect's exactly-once machinery for Spark: local broker and tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    kafka = commands.add_parser(
        "kafka",
        help="run a local Apache Kafka broker (KRaft), or a cluster of several, in the foreground",
        description=(
            "Run a single-node Kafka broker+controller with transactions enabled, or with "
            "--brokers N a cluster of N broker+controller nodes (replication factor 3 for the "
            "brokers' own topics and topics created with the default, min.insync.replicas 2). "
            "Prints bootstrap.servers=HOST:PORT[,...] once it accepts requests (after the super "
            "user's client settings when secured); SIGTERM/SIGINT stop it."
        ),
    )
    kafka.add_argument(
        "--brokers",
        type=int,
        default=1,
        help="number of nodes, each broker and controller (default: 1; more: PLAINTEXT only)",
    )
    kafka.add_argument("--port", type=int, default=None, help="listener port (default: free)")
    kafka.add_argument(
        "--data-dir",
        default=None,
        help="storage folder; reused if already formatted (default: a temporary folder)",
    )
    kafka.add_argument(
        "--security",
        choices=("none", "sasl", "sasl_ssl"),
        default="none",
        help=(
            "none: PLAINTEXT; sasl: SASL_PLAINTEXT; sasl_ssl: SASL_SSL with a certificate made at "
            "start-up. Secured: SCRAM-SHA-512 and PLAIN, ACLs enforced, super user `admin` "
            "(default: none)"
        ),
    )
    kafka.set_defaults(handler=_run_kafka)
    _add_admin_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `eosconnect` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except EosConnectError as error:
        print(f"eosconnect: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
