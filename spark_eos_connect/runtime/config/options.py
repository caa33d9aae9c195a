"""A data source's options, read once where the data source receives them
(`spark.datasource`) and handed to the source and sink sides as one typed value.

Reading them lower-cases the names (`option_keys.lowered`), sets the `kafka.` client settings
apart (prefix removed, values as strings), reads the config providers `config.providers*`
enables, and spells `transforms.*`/`predicates.*` names as their aliases are declared. Nothing
is resolved: `${provider:path:key}` references stay in the values until a task needs them.
The sides that take options accept raw maps too (tools, jobs and tests) and read them here;
as a mapping of the lower-cased options, the read value goes wherever a raw map went.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.config_references import ConfigProviders, is_provider_option
from spark_eos_connect.runtime.config.connect_options import restore_alias_case
from spark_eos_connect.runtime.config.framework_config import KAFKA_PREFIX
from spark_eos_connect.runtime.config.option_keys import lowered


@dataclass(frozen=True)
class DataSourceOptions(Mapping[str, Any]):
    """Options as a data source received them, read once (picklable: shipped to Spark's
    Python workers with the readers and writers holding it). As a mapping it is `given`, so
    that code written for raw option maps takes it as it is."""

    given: dict[str, Any] = field(default_factory=dict)
    """Every option, names lower-cased, values as given."""
    rest: dict[str, Any] = field(default_factory=dict)
    """The options but `kafka.*`, names lower-cased."""
    props: dict[str, Any] = field(default_factory=dict)
    """The options but `kafka.*` and `config.providers*`, aliases spelt as declared."""
    kafka: dict[str, str] = field(default_factory=dict)
    """The Kafka client settings, `kafka.` removed (references unresolved)."""
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """The enabled config providers (none when `providers_error` says why they are wrong)."""
    providers_error: ConfigError | None = None
    """Why `config.providers*` could not be read, raised by whoever needs the providers."""

    @classmethod
    def read(cls, options: Mapping[str, Any] | DataSourceOptions) -> DataSourceOptions:
        """`options` read (returned as they are when already read)."""
        if isinstance(options, DataSourceOptions):
            return options
        given = lowered(options)
        kafka = {
            k[len(KAFKA_PREFIX) :]: str(v) for k, v in given.items() if k.startswith(KAFKA_PREFIX)
        }
        rest = {k: v for k, v in given.items() if not k.startswith(KAFKA_PREFIX)}
        providers_error: ConfigError | None = None
        try:
            providers = ConfigProviders.from_options(rest)
        except ConfigError as error:
            providers, providers_error = ConfigProviders(()), error
        props = restore_alias_case({k: v for k, v in rest.items() if not is_provider_option(k)})
        return cls(given, rest, props, kafka, providers, providers_error)

    def checked_providers(self) -> ConfigProviders:
        """The providers; raises `ConfigError` when `config.providers*` is wrong."""
        if self.providers_error is not None:
            raise self.providers_error
        return self.providers

    def __getitem__(self, name: str) -> Any:
        """The value of option `name` (lower-case)."""
        return self.given[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.given)

    def __len__(self) -> int:
        return len(self.given)
