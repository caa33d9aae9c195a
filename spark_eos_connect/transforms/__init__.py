"""Kafka Connect's Single Message Transforms and predicates, for the source and sink runtimes.

Public API:

- `ConnectRecord`, `Header`: the immutable record a chain works on (`new_record(...)` copies).
- `parse_transform_chain(props) -> TransformChain`: read `transforms`/`predicates` from a
  connector config and configure the chain (`InvalidConfigError` listing every problem).
  `TransformChain.apply(record)` returns the record or None (filtered); `apply_all(records)`;
  `close()`. A failing stage raises `TransformationError` (alias, class, cause).
- `transform_config_problems(props)` (by key) / `validate_transform_config(props)` (messages):
  every problem without building anything; `transform_config_warnings(props)`: options nothing
  reads.
- `Float32`: the float type of schemaless values Cast made float32 (Java `Float`s): a JSON
  writer prints them as `Float.toString` does.
- `Transformation`, `Predicate`: the bases a user's own SMT or predicate may extend.
- `builtin_plugins("transformation" | "predicate")`: the built-ins with their Connect class
  names, aliases, overviews and `ConfigDef`s (for the docs); `CHAIN_CONFIG`: the chain's own
  options; `BUILTIN_TRANSFORMS`/`BUILTIN_PREDICATES`: class name to class.
- `spark_eos_connect.transforms.arrow.split_topic_stages(chain)`: the chain's topic-only head
  (RegexRouter, Filter, gated by TopicNameMatches or not) to run over an Arrow batch's `topic`
  column before records are built, and the rest of the chain.
"""

from __future__ import annotations

from spark_eos_connect.transforms._jnumbers import Float32
from spark_eos_connect.transforms.base import KeyOrValueTransformation, Predicate, Transformation
from spark_eos_connect.transforms.chain import (
    CHAIN_CONFIG,
    TransformationError,
    TransformChain,
    TransformStage,
    parse_transform_chain,
    transform_config_problems,
    transform_config_warnings,
    validate_transform_config,
)
from spark_eos_connect.transforms.record import ConnectRecord, Header
from spark_eos_connect.transforms.registry import (
    BUILTIN_PREDICATES,
    BUILTIN_TRANSFORMS,
    PluginInfo,
    builtin_plugins,
    resolve_plugin_class,
)

__all__ = [
    "BUILTIN_PREDICATES",
    "BUILTIN_TRANSFORMS",
    "CHAIN_CONFIG",
    "ConnectRecord",
    "Float32",
    "Header",
    "KeyOrValueTransformation",
    "PluginInfo",
    "Predicate",
    "TransformChain",
    "TransformStage",
    "Transformation",
    "TransformationError",
    "builtin_plugins",
    "parse_transform_chain",
    "resolve_plugin_class",
    "transform_config_problems",
    "transform_config_warnings",
    "validate_transform_config",
]
