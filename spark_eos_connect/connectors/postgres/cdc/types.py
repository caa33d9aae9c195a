"""PostgreSQL's catalog description of column types: what a type's oid alone does not say.

A column's type may be an enum (its labels), a domain (its base type), an array (its element
type) or an extension's type (`hstore`, `citext`, `ltree`, ... whose oids differ per database);
`load_types` reads them from `pg_type` once per set of oids, resolving domains and array
elements recursively, so that `schemas` can map each to Debezium's Connect schema.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["PgType", "load_types"]


@dataclass(frozen=True, slots=True)
class PgType:
    """One type as `pg_type` describes it."""

    oid: int
    name: str
    """The type's own name (`pg_type.typname`), e.g. `int4`, `_int4`, `hstore`, `mood`."""
    kind: str
    """`pg_type.typtype`: `b` base, `e` enum, `d` domain, `c` composite, `r` range,
    `m` multirange, `p` pseudo."""
    category: str = ""
    """`pg_type.typcategory` (`A` array, `S` string, `N` numeric, ...)."""
    element: PgType | None = None
    """An array's element type."""
    base: PgType | None = None
    """A domain's base type (itself resolved: a domain over a domain ends at a non-domain)."""
    base_modifier: int = -1
    """A domain's `typtypmod`: the modifier of its base type (`numeric(10,2)`, `varchar(8)`)."""
    labels: tuple[str, ...] = ()
    """An enum's labels in their sort order."""

    def resolved(self) -> PgType:
        """The type a value of this one is stored as: a domain's base type, else itself."""
        return self.base if self.kind == "d" and self.base is not None else self


_TYPES_SQL: Final = """
SELECT t.oid::int, t.typname::text, t.typtype::text, t.typcategory::text,
       NULLIF(t.typelem, 0)::int, NULLIF(t.typbasetype, 0)::int, t.typtypmod,
       CASE WHEN t.typtype = 'e' THEN
            (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
               FROM pg_enum e WHERE e.enumtypid = t.oid)
       END
  FROM pg_type t
 WHERE t.oid = ANY(%s)
"""


def load_types(connection: Any, oids: Iterable[int]) -> dict[int, PgType]:
    """The types `oids` name, with their array elements and domain bases, by oid."""
    rows: dict[int, tuple[Any, ...]] = {}
    wanted = set(oids)
    while wanted:
        found = connection.execute(_TYPES_SQL, (sorted(wanted),)).fetchall()
        for row in found:
            rows[row[0]] = row
        wanted = {
            other
            for row in found
            for other in (row[4], row[5])
            if other is not None and other not in rows
        }
    built: dict[int, PgType] = {}

    def build(oid: int) -> PgType:
        if oid in built:
            return built[oid]
        _, name, kind, category, element, base, modifier, labels = rows[oid]
        is_array = category == "A" and element is not None
        parent = build(base) if base is not None and base in rows else None
        if modifier == -1 and parent is not None and parent.kind == "d":
            modifier = parent.base_modifier  # a domain over a domain keeps the inner modifier
        made = PgType(
            oid,
            name,
            kind,
            category,
            element=build(element) if is_array and element in rows else None,
            base=parent.resolved() if parent is not None else None,
            base_modifier=modifier,
            labels=tuple(labels or ()),
        )
        built[oid] = made
        return made

    return {oid: build(oid) for oid in rows}
