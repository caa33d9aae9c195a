package io.github.sparkeosconnect.taskhost;

import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.Converter;

/**
 * What the task host runs for a key or value converter that the plugins and the host lack
 * but the Python side has (the classes START_TASK lists): it hands the record's Connect data
 * over instead of bytes, and the Python side converts it with its own converter of that class.
 *
 * <p>Bytes: an i32 little-endian schema number ({@link SchemaTable}; -1 without a schema),
 * then the value as Connect's JsonConverter writes it under that schema, without envelope
 * (decimals as base64, {@code replace.null.with.default=false}: nothing lost). A null schema
 * and value give null, as a tombstone.
 */
final class HandOverConverter implements Converter {

    private final SchemaTable schemas;
    private final JsonConverter json;

    /** A converter numbering its schemas in {@code schemas}, writing with its JsonConverter. */
    HandOverConverter(SchemaTable schemas) {
        this.schemas = schemas;
        this.json = schemas.json();
    }

    /** The JsonConverter the hand-over writes values and schema texts with. */
    static JsonConverter json() {
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "false", "replace.null.with.default", "false",
                "decimal.format", "BASE64", "schemas.cache.size", "1000"), false);
        return json;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        if (schema == null && value == null) {
            return null;
        }
        int id = schemas.idOf(schema);
        byte[] payload = json.fromConnectData(topic, schema, value);
        byte[] framed = new byte[4 + payload.length];
        framed[0] = (byte) id;
        framed[1] = (byte) (id >>> 8);
        framed[2] = (byte) (id >>> 16);
        framed[3] = (byte) (id >>> 24);
        System.arraycopy(payload, 0, framed, 4, payload.length);
        return framed;
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        throw new DataException("the task host hands Connect data over; it reads none back");
    }
}
