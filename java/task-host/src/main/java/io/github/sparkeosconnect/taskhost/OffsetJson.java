package io.github.sparkeosconnect.taskhost;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * Source partitions and offsets as JSON text, read and written as a Connect worker's offset
 * store does: Connect's {@link JsonConverter} without schemas, so that a number read back is a
 * {@code Long} (or a {@code Double}), never an {@code Integer}.
 */
public final class OffsetJson {

    private final JsonConverter converter = new JsonConverter();

    /** A converter configured as Connect's internal offset converter. */
    public OffsetJson() {
        converter.configure(Map.of("schemas.enable", "false"), false);
    }

    /** Compact JSON of {@code map}; null for null. */
    public String write(Map<String, ?> map) {
        if (map == null) {
            return null;
        }
        return new String(converter.fromConnectData("", null, map), StandardCharsets.UTF_8);
    }

    /** The map {@code json} holds, with Connect's JSON types; null for null. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> read(String json) {
        if (json == null) {
            return null;
        }
        Object value = converter.toConnectData("", json.getBytes(StandardCharsets.UTF_8)).value();
        return (Map<String, Object>) value;
    }
}
