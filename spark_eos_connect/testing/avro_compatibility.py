"""Avro schema resolution for the Schema Registry test double's compatibility checks.

`can_read(reader, writer)` answers whether data written with `writer` can be read with `reader`
under Avro's resolution rules: same primitive (or a promotion: int to long/float/double, long to
float/double, float to double, string and bytes), records by full name with every reader field
either in the writer (recursively readable) or given a default, enums whose writer symbols the
reader has, arrays and maps by their items and values, fixed of the same name and size, unions
branch by branch. Aliases are not followed. Part of a test double, not a registry.
"""

from __future__ import annotations

from typing import Any

__all__ = ["can_read", "incompatibilities"]

_PROMOTIONS = {
    "int": {"int", "long", "float", "double"},
    "long": {"long", "float", "double"},
    "float": {"float", "double"},
    "double": {"double"},
    "string": {"string", "bytes"},
    "bytes": {"bytes", "string"},
    "boolean": {"boolean"},
    "null": {"null"},
}


class _Names:
    """The named types of one schema, to resolve references by name."""

    def __init__(self, schema: Any) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        self._collect(schema, "")

    def _collect(self, schema: Any, namespace: str) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self._collect(branch, namespace)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "enum", "fixed"):
                full = _full_name(schema, namespace)
                self.types[full] = schema
                namespace = full.rpartition(".")[0]
                for field in schema.get("fields", ()):
                    self._collect(field["type"], namespace)
            elif kind == "array":
                self._collect(schema["items"], namespace)
            elif kind == "map":
                self._collect(schema["values"], namespace)
            elif isinstance(kind, dict | list):
                self._collect(kind, namespace)

    def resolve(self, schema: Any, namespace: str) -> Any:
        if isinstance(schema, str) and schema not in _PROMOTIONS:
            full = schema if "." in schema or not namespace else f"{namespace}.{schema}"
            return self.types.get(full) or self.types.get(schema) or schema
        if isinstance(schema, dict) and isinstance(schema.get("type"), dict | list):
            return schema["type"]
        return schema


def _full_name(schema: dict[str, Any], namespace: str) -> str:
    name = str(schema["name"])
    if "." in name:
        return name
    space = schema.get("namespace", namespace)
    return f"{space}.{name}" if space else name


def _kind(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        return str(schema["type"])
    return str(schema)


class _Checker:
    def __init__(self, reader: Any, writer: Any) -> None:
        self.reader_names, self.writer_names = _Names(reader), _Names(writer)
        self.problems: list[str] = []
        self._seen: set[tuple[str, str]] = set()

    def check(self, reader: Any, writer: Any, path: str, rns: str = "", wns: str = "") -> bool:
        reader = self.reader_names.resolve(reader, rns)
        writer = self.writer_names.resolve(writer, wns)
        rk, wk = _kind(reader), _kind(writer)
        if wk == "union":
            return all(self.check(reader, branch, path, rns, wns) for branch in writer)
        if rk == "union":
            if any(self._quiet(branch, writer, rns, wns) for branch in reader):
                return True
            return self._fail(path, f"no branch of the reader's union reads the writer's {wk}")
        if rk in _PROMOTIONS or wk in _PROMOTIONS:
            if rk in _PROMOTIONS.get(wk, set()):
                return True
            return self._fail(path, f"reader type {rk} cannot read writer type {wk}")
        if rk != wk:
            return self._fail(path, f"reader type {rk} cannot read writer type {wk}")
        if rk == "array":
            return self.check(reader["items"], writer["items"], f"{path}[]", rns, wns)
        if rk == "map":
            return self.check(reader["values"], writer["values"], f"{path}{{}}", rns, wns)
        rname, wname = _full_name(reader, rns), _full_name(writer, wns)
        if rname.rpartition(".")[2] != wname.rpartition(".")[2]:
            return self._fail(path, f"reader's {rk} {rname} does not match writer's {wname}")
        if rk == "fixed":
            if reader["size"] != writer["size"]:
                return self._fail(path, f"fixed {rname} changed size")
            return True
        if rk == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and "default" not in reader:
                return self._fail(path, f"enum {rname} lacks writer symbols {missing}")
            return True
        return self._record(reader, writer, path, rname, wname)

    def _record(self, reader: Any, writer: Any, path: str, rname: str, wname: str) -> bool:
        if (rname, wname) in self._seen:
            return True
        self._seen.add((rname, wname))
        rns, wns = rname.rpartition(".")[0], wname.rpartition(".")[0]
        written = {f["name"]: f for f in writer.get("fields", ())}
        ok = True
        for field in reader.get("fields", ()):
            where = f"{path}.{field['name']}" if path else field["name"]
            source = written.get(field["name"])
            if source is None:
                if "default" not in field:
                    ok = self._fail(where, "reader field has no default and the writer lacks it")
                continue
            ok = self.check(field["type"], source["type"], where, rns, wns) and ok
        return ok

    def _quiet(self, reader: Any, writer: Any, rns: str, wns: str) -> bool:
        mark = len(self.problems)
        ok = self.check(reader, writer, "", rns, wns)
        del self.problems[mark:]
        return ok

    def _fail(self, path: str, problem: str) -> bool:
        self.problems.append(f"{path or 'schema'}: {problem}")
        return False


def incompatibilities(reader: Any, writer: Any) -> list[str]:
    """Why `reader` cannot read data written with `writer` (empty when it can)."""
    checker = _Checker(reader, writer)
    checker.check(reader, writer, "")
    return checker.problems


def can_read(reader: Any, writer: Any) -> bool:
    """True when data written with `writer` can be read with `reader`."""
    return not incompatibilities(reader, writer)
