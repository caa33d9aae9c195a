package io.github.sparkeosconnect.testplugins;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.storage.Converter;

/**
 * A test converter: a value as its text ({@code String.valueOf}) in UTF-8, but the value whose
 * text its option {@code refuse} names is refused with a DataException
 * ("RefusingConverter refuses ...").
 */
public final class RefusingConverter implements Converter {

    private String refused;

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        Object refuse = configs.get("refuse");
        refused = refuse == null ? null : refuse.toString();
    }

    @Override
    public byte[] fromConnectData(String topic, Schema schema, Object value) {
        if (value == null) {
            return null;
        }
        String text = String.valueOf(value);
        if (text.equals(refused)) {
            throw new DataException("RefusingConverter refuses " + text + " (its option refuse)");
        }
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public SchemaAndValue toConnectData(String topic, byte[] value) {
        return value == null ? SchemaAndValue.NULL
                : new SchemaAndValue(Schema.STRING_SCHEMA, new String(value, StandardCharsets.UTF_8));
    }
}
