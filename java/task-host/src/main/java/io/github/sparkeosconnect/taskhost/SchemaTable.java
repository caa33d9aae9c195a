package io.github.sparkeosconnect.taskhost;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * The Connect schemas a task's {@link HandOverConverter}s have handed over, numbered from 0
 * in the order first seen (equal schemas share a number). Each schema's text, Connect's
 * JsonConverter envelope schema (names, versions, parameters, defaults), goes to the Python
 * side once: in the BATCH that first uses its number ({@link #takeNew()}).
 */
final class SchemaTable {

    /** A schema number and its JSON text. */
    record Entry(int id, String json) {
    }

    private static final int SAME_OBJECTS_KEPT = 1024;

    private final JsonConverter json;
    private final Map<Schema, Integer> ids = new HashMap<>();
    private final Map<Schema, Integer> sameObjects = new IdentityHashMap<>();
    private final List<Entry> fresh = new ArrayList<>();

    /** A table whose schema texts {@code json} writes. */
    SchemaTable(JsonConverter json) {
        this.json = json;
    }

    /** The JsonConverter the schema texts (and the handed-over values) are written with. */
    JsonConverter json() {
        return json;
    }

    /** The number of {@code schema} (null: -1), given one on first sight. */
    int idOf(Schema schema) {
        if (schema == null) {
            return -1;
        }
        Integer id = sameObjects.get(schema);
        if (id != null) {
            return id;
        }
        id = ids.get(schema);
        if (id == null) {
            id = ids.size();
            ids.put(schema, id);
            fresh.add(new Entry(id, json.asJsonSchema(schema).toString()));
        }
        if (sameObjects.size() >= SAME_OBJECTS_KEPT) {
            sameObjects.clear(); // a connector that builds a schema object per record
        }
        sameObjects.put(schema, id);
        return id;
    }

    /** The schemas numbered since the last call, in number order. */
    List<Entry> takeNew() {
        if (fresh.isEmpty()) {
            return List.of();
        }
        List<Entry> taken = List.copyOf(fresh);
        fresh.clear();
        return taken;
    }
}
