// Test oracle: runs Kafka Connect's own converters on requests read from stdin, one JSON object a
// line, and answers one JSON object a line. Run with Java's single-file launcher:
//   java -Duser.timezone=UTC -cp '<connect jars>/*' ConverterOracle.java
//
// Request: {"op": "from" | "to" | "header_from" | "header_to", "converter": "<class name>",
//           "configs": {...}, "is_key": bool, "schema": <schema>, "value": <value>, "bytes": hex}
// Answer:  {"ok": true, "bytes": hex-or-null} for from/header_from,
//          {"ok": true, "schema": <schema>, "value": <value>} for to/header_to,
//          {"ok": false, "error": "<exception class>: <message>"} when the converter throws.
//
// <schema> is null or {"type": "INT8".., "optional", "name", "version", "doc",
//   "parameters": [[k, v]..], "default": <value>, "fields": [[name, <schema>]..], "key", "value"}.
// <value> is null or a tagged pair: ["i8"|"i16"|"i32"|"i64", n], ["f32", raw int bits],
//   ["f64", raw long bits], ["bool", b], ["str", s], ["bytes", hex], ["list", [<value>..]],
//   ["map", [[<value>, <value>]..]], ["struct", [[name, <value>]..]] (under a struct schema),
//   ["dec", "unscaled", scale], ["date", epoch millis] (java.util.Date).

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;

public class ConverterOracle {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("{\"ready\":true}");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            try {
                answer = handle(MAPPER.readTree(line));
                answer.put("ok", true);
            } catch (Throwable error) {
                answer = NODES.objectNode();
                answer.put("ok", false);
                answer.put("error", error.getClass().getName() + ": " + error.getMessage());
            }
            out.println(MAPPER.writeValueAsString(answer));
        }
    }

    private static ObjectNode handle(JsonNode request) throws Exception {
        String op = request.get("op").asText();
        Object instance = Class.forName(request.get("converter").asText())
            .getDeclaredConstructor().newInstance();
        Map<String, Object> configs = new HashMap<>();
        JsonNode given = request.get("configs");
        if (given != null) {
            given.fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().asText()));
        }
        String topic = request.has("topic") ? request.get("topic").asText() : "t";
        String header = request.has("header") ? request.get("header").asText() : "h";
        ObjectNode answer = NODES.objectNode();
        if (op.startsWith("header_")) {
            configs.put("converter.type", "header");
            HeaderConverter converter = (HeaderConverter) instance;
            converter.configure(configs);
            if (op.equals("header_from")) {
                Schema schema = schema(request.get("schema"));
                Object value = value(schema, request.get("value"));
                putBytes(answer, converter.fromConnectHeader(topic, header, schema, value));
            } else {
                describe(answer, converter.toConnectHeader(topic, header, bytes(request.get("bytes"))));
            }
            return answer;
        }
        Converter converter = (Converter) instance;
        converter.configure(configs, request.path("is_key").asBoolean(false));
        if (op.equals("from")) {
            Schema schema = schema(request.get("schema"));
            Object value = value(schema, request.get("value"));
            putBytes(answer, converter.fromConnectData(topic, schema, value));
        } else {
            describe(answer, converter.toConnectData(topic, bytes(request.get("bytes"))));
        }
        return answer;
    }

    private static byte[] bytes(JsonNode node) {
        return node == null || node.isNull() ? null : HEX.parseHex(node.asText());
    }

    private static void putBytes(ObjectNode answer, byte[] data) {
        if (data == null) {
            answer.putNull("bytes");
        } else {
            answer.put("bytes", HEX.formatHex(data));
        }
    }

    private static void describe(ObjectNode answer, SchemaAndValue result) {
        if (result == null) {
            answer.putNull("schema");
            answer.putNull("value");
            return;
        }
        answer.set("schema", schemaNode(result.schema()));
        answer.set("value", valueNode(result.value()));
    }

    // --- requests to Connect objects -------------------------------------------------------

    private static Schema schema(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        Schema.Type type = Schema.Type.valueOf(node.get("type").asText());
        SchemaBuilder builder;
        if (type == Schema.Type.ARRAY) {
            builder = SchemaBuilder.array(schema(node.get("value")));
        } else if (type == Schema.Type.MAP) {
            builder = SchemaBuilder.map(schema(node.get("key")), schema(node.get("value")));
        } else {
            builder = SchemaBuilder.type(type);
        }
        if (type == Schema.Type.STRUCT) {
            for (JsonNode field : node.get("fields")) {
                builder.field(field.get(0).asText(), schema(field.get(1)));
            }
        }
        if (node.path("optional").asBoolean(false)) {
            builder.optional();
        }
        if (node.hasNonNull("name")) {
            builder.name(node.get("name").asText());
        }
        if (node.hasNonNull("version")) {
            builder.version(node.get("version").asInt());
        }
        if (node.hasNonNull("doc")) {
            builder.doc(node.get("doc").asText());
        }
        if (node.hasNonNull("parameters")) {
            for (JsonNode pair : node.get("parameters")) {
                builder.parameter(pair.get(0).asText(), pair.get(1).asText());
            }
        }
        if (node.hasNonNull("default")) {
            builder.defaultValue(value(builder, node.get("default")));
        }
        return builder.build();
    }

    private static Object value(Schema schema, JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        String tag = node.get(0).asText();
        JsonNode body = node.get(1);
        switch (tag) {
            case "i8": return (byte) body.asInt();
            case "i16": return (short) body.asInt();
            case "i32": return body.asInt();
            case "i64": return body.asLong();
            case "f32": return Float.intBitsToFloat(body.asInt());
            case "f64": return Double.longBitsToDouble(body.asLong());
            case "bool": return body.asBoolean();
            case "str": return body.asText();
            case "bytes": return HEX.parseHex(body.asText());
            case "dec": return new BigDecimal(new BigInteger(body.asText()), node.get(2).asInt());
            case "date": return new java.util.Date(body.asLong());
            case "list": {
                List<Object> list = new ArrayList<>();
                Schema element = schema == null ? null : schema.valueSchema();
                for (JsonNode item : body) {
                    list.add(value(element, item));
                }
                return list;
            }
            case "map": {
                Map<Object, Object> map = new LinkedHashMap<>();
                Schema keys = schema == null ? null : schema.keySchema();
                Schema values = schema == null ? null : schema.valueSchema();
                for (JsonNode pair : body) {
                    map.put(value(keys, pair.get(0)), value(values, pair.get(1)));
                }
                return map;
            }
            case "struct": {
                Struct struct = new Struct(schema.schema());
                for (JsonNode pair : body) {
                    String name = pair.get(0).asText();
                    struct.put(name, value(schema.field(name).schema(), pair.get(1)));
                }
                return struct;
            }
            default: throw new IllegalArgumentException("unknown value tag " + tag);
        }
    }

    // --- Connect objects to answers --------------------------------------------------------

    private static JsonNode schemaNode(Schema schema) {
        if (schema == null) {
            return NODES.nullNode();
        }
        ObjectNode node = NODES.objectNode();
        node.put("type", schema.type().name());
        node.put("optional", schema.isOptional());
        node.put("name", schema.name());
        if (schema.version() == null) {
            node.putNull("version");
        } else {
            node.put("version", schema.version());
        }
        node.put("doc", schema.doc());
        if (schema.parameters() == null) {
            node.putNull("parameters");
        } else {
            ArrayNode parameters = node.putArray("parameters");
            schema.parameters().forEach((k, v) -> parameters.addArray().add(k).add(v));
        }
        node.set("default", valueNode(schema.defaultValue()));
        if (schema.type() == Schema.Type.STRUCT) {
            ArrayNode fields = node.putArray("fields");
            for (Field field : schema.fields()) {
                fields.addArray().add(field.name()).add(schemaNode(field.schema()));
            }
        }
        if (schema.type() == Schema.Type.MAP) {
            node.set("key", schemaNode(schema.keySchema()));
        }
        if (schema.type() == Schema.Type.MAP || schema.type() == Schema.Type.ARRAY) {
            node.set("value", schemaNode(schema.valueSchema()));
        }
        return node;
    }

    private static JsonNode valueNode(Object value) {
        if (value == null) {
            return NODES.nullNode();
        }
        ArrayNode node = NODES.arrayNode();
        if (value instanceof Byte) {
            node.add("i8").add((Byte) value);
        } else if (value instanceof Short) {
            node.add("i16").add((Short) value);
        } else if (value instanceof Integer) {
            node.add("i32").add((Integer) value);
        } else if (value instanceof Long) {
            node.add("i64").add((Long) value);
        } else if (value instanceof Float) {
            node.add("f32").add(Float.floatToRawIntBits((Float) value));
        } else if (value instanceof Double) {
            node.add("f64").add(Double.doubleToRawLongBits((Double) value));
        } else if (value instanceof Boolean) {
            node.add("bool").add((Boolean) value);
        } else if (value instanceof String) {
            node.add("str").add((String) value);
        } else if (value instanceof byte[]) {
            node.add("bytes").add(HEX.formatHex((byte[]) value));
        } else if (value instanceof ByteBuffer) {
            ByteBuffer buffer = ((ByteBuffer) value).duplicate();
            byte[] data = new byte[buffer.remaining()];
            buffer.get(data);
            node.add("bytes").add(HEX.formatHex(data));
        } else if (value instanceof BigDecimal) {
            BigDecimal decimal = (BigDecimal) value;
            node.add("dec").add(decimal.unscaledValue().toString()).add(decimal.scale());
        } else if (value instanceof java.util.Date) {
            node.add("date").add(((java.util.Date) value).getTime());
        } else if (value instanceof List) {
            ArrayNode items = NODES.arrayNode();
            for (Object item : (List<?>) value) {
                items.add(valueNode(item));
            }
            node.add("list").add(items);
        } else if (value instanceof Map) {
            ArrayNode pairs = NODES.arrayNode();
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                pairs.addArray().add(valueNode(entry.getKey())).add(valueNode(entry.getValue()));
            }
            node.add("map").add(pairs);
        } else if (value instanceof Struct) {
            Struct struct = (Struct) value;
            ArrayNode pairs = NODES.arrayNode();
            for (Field field : struct.schema().fields()) {
                pairs.addArray().add(field.name()).add(valueNode(struct.getWithoutDefault(field.name())));
            }
            node.add("struct").add(pairs);
        } else {
            throw new IllegalArgumentException("cannot describe " + value.getClass());
        }
        return node;
    }
}
