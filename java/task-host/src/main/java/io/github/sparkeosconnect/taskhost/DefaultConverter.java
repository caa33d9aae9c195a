package io.github.sparkeosconnect.taskhost;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;

/**
 * The converter a Java task's keys, values and headers get when its connector names none: the
 * default of this project's worker (Connect's worker has none), as for the Python tasks. Bytes
 * go as they are, strings as UTF-8, anything else as schemaless compact JSON.
 */
public final class DefaultConverter implements Converter, HeaderConverter {

    private final JsonConverter json = new JsonConverter();

    /** Ready to use; {@code configure} takes nothing. */
    public DefaultConverter() {
        json.configure(Map.of("schemas.enable", "false"), false);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        if (value == null || value instanceof byte[]) {
            return (byte[]) value;
        }
        if (value instanceof ByteBuffer buffer) {
            byte[] bytes = new byte[buffer.remaining()];
            buffer.duplicate().get(bytes);
            return bytes;
        }
        if (value instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        return json.fromConnectData(topic, schema, value);
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        return new SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, value);
    }

    @Override
    public byte[] fromConnectHeader(String topic, String headerKey, Schema schema, Object value) {
        return fromConnectData(topic, schema, value);
    }

    @Override
    public SchemaAndValue toConnectHeader(String topic, String headerKey, byte[] value) {
        return toConnectData(topic, value);
    }

    @Override
    public String version() {
        return "1";
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public void close() {
        json.close();
    }
}
