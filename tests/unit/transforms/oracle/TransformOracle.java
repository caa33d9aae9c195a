// Test oracle: runs Kafka Connect's own transformations and predicates on records given as JSON.
//
// Run with Java's single-file launcher: java -cp '<connect jars>/*' TransformOracle.java
// Reads one JSON request per line on stdin, writes one JSON answer per line on stdout:
//   request: {"config": {connector config: transforms, transforms.<alias>.*, predicates, ...},
//             "record": {"topic", "partition", "timestamp", "offset" (a sink record when set),
//                        "key", "value": JsonConverter envelopes {"schema", "payload"} or null,
//                        "headers": [{"key", "value": envelope or null}]}}
//   answer:  {"filtered": true} | {"error": "<class>: <message>"} |
//            {"topic", "partition", "timestamp", "key", "value": the exact JsonConverter
//             (schemas.enable=true) output as a string or null, "headers": [{"key", "value"}]}
// The chain is built as Connect's ConnectorConfig.transformationStages builds it: the aliases in
// order, each transformation configured with its prefixed options minus predicate/negate, its
// predicate (if any) with the predicate's prefixed options, negate parsed as Boolean.parseBoolean.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

public class TransformOracle {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String TRANSFORMS = "org.apache.kafka.connect.transforms.";
    private static final String PREDICATES = TRANSFORMS + "predicates.";

    private final JsonConverter converter = new JsonConverter();
    private final JsonConverter headerConverter = new JsonConverter();

    TransformOracle() {
        converter.configure(Map.of("schemas.enable", "true"), false);
        headerConverter.configure(Map.of("schemas.enable", "true"), false);
    }

    public static void main(String[] args) throws Exception {
        TransformOracle oracle = new TransformOracle();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String answer;
            try {
                answer = oracle.handle(MAPPER.readTree(line));
            } catch (Throwable error) {
                ObjectNode failure = MAPPER.createObjectNode();
                failure.put("error", describe(error));
                answer = MAPPER.writeValueAsString(failure);
            }
            out.println(answer);
        }
    }

    private static String describe(Throwable error) {
        StringBuilder text = new StringBuilder(error.getClass().getName() + ": " + error.getMessage());
        for (Throwable cause = error.getCause(); cause != null; cause = cause.getCause()) {
            text.append(" <- ").append(cause.getClass().getName()).append(": ").append(cause.getMessage());
        }
        return text.toString();
    }

    private static String className(String name, String packageName) {
        return name.contains(".") ? name : packageName + name;
    }

    private static Map<String, Object> withPrefix(Map<String, String> config, String prefix) {
        Map<String, Object> result = new HashMap<>();
        for (Map.Entry<String, String> entry : config.entrySet()) {
            if (entry.getKey().startsWith(prefix)) {
                result.put(entry.getKey().substring(prefix.length()), entry.getValue());
            }
        }
        return result;
    }

    @SuppressWarnings("unchecked")
    private static <T> T instantiate(String name, String packageName) throws Exception {
        return (T) Class.forName(className(name.trim(), packageName)).getDeclaredConstructor().newInstance();
    }

    @SuppressWarnings("rawtypes")
    private record Stage(Transformation transformation, Predicate predicate, boolean negate) {
    }

    @SuppressWarnings("rawtypes")
    private static List<Stage> chain(Map<String, String> config) throws Exception {
        List<Stage> stages = new ArrayList<>();
        String aliases = config.getOrDefault("transforms", "").trim();
        if (aliases.isEmpty()) return stages;
        for (String alias : aliases.split("\\s*,\\s*")) {
            String prefix = "transforms." + alias + ".";
            Transformation transformation = instantiate(config.get(prefix + "type"), TRANSFORMS);
            Map<String, Object> options = withPrefix(config, prefix);
            Object predicateAlias = options.remove("predicate");
            Object negate = options.remove("negate");
            transformation.configure(options);
            Predicate predicate = null;
            if (predicateAlias != null) {
                String predicatePrefix = "predicates." + predicateAlias + ".";
                predicate = instantiate(config.get(predicatePrefix + "type"), PREDICATES);
                predicate.configure(withPrefix(config, predicatePrefix));
            }
            stages.add(new Stage(transformation, predicate, negate != null && Boolean.parseBoolean(negate.toString())));
        }
        return stages;
    }

    private SchemaAndValue read(String topic, JsonNode envelope) throws Exception {
        if (envelope == null || envelope.isNull()) return SchemaAndValue.NULL;
        return converter.toConnectData(topic, MAPPER.writeValueAsBytes(envelope));
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private String handle(JsonNode request) throws Exception {
        Map<String, String> config = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> fields = request.get("config").fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> entry = fields.next();
            config.put(entry.getKey(), entry.getValue().asText());
        }
        JsonNode record = request.get("record");
        String topic = record.get("topic").asText();
        Integer partition = record.hasNonNull("partition") ? record.get("partition").asInt() : null;
        Long timestamp = record.hasNonNull("timestamp") ? record.get("timestamp").asLong() : null;
        SchemaAndValue key = read(topic, record.get("key"));
        SchemaAndValue value = read(topic, record.get("value"));
        ConnectHeaders headers = new ConnectHeaders();
        if (record.has("headers")) {
            for (JsonNode header : record.get("headers")) {
                String name = header.get("key").asText();
                headers.add(name, headerConverter.toConnectHeader(topic, name,
                        header.get("value").isNull() ? null : MAPPER.writeValueAsBytes(header.get("value"))));
            }
        }
        ConnectRecord current;
        if (record.hasNonNull("offset")) {
            current = new SinkRecord(topic, partition == null ? 0 : partition, key.schema(), key.value(),
                    value.schema(), value.value(), record.get("offset").asLong(), timestamp,
                    TimestampType.CREATE_TIME, headers);
        } else {
            current = new SourceRecord(Map.of(), Map.of(), topic, partition, key.schema(), key.value(),
                    value.schema(), value.value(), timestamp, headers);
        }
        List<Stage> stages = chain(config);
        try {
            for (Stage stage : stages) {
                boolean applies = stage.predicate() == null || (stage.negate() ^ stage.predicate().test(current));
                if (applies) current = stage.transformation().apply(current);
                if (current == null) break;
            }
        } finally {
            for (Stage stage : stages) {
                stage.transformation().close();
                if (stage.predicate() != null) stage.predicate().close();
            }
        }
        ObjectNode answer = MAPPER.createObjectNode();
        if (current == null) {
            answer.put("filtered", true);
            return MAPPER.writeValueAsString(answer);
        }
        answer.put("topic", current.topic());
        if (current.kafkaPartition() == null) answer.putNull("partition");
        else answer.put("partition", current.kafkaPartition());
        if (current.timestamp() == null) answer.putNull("timestamp");
        else answer.put("timestamp", current.timestamp());
        answer.put("key", text(converter.fromConnectData(current.topic(), current.keySchema(), current.key())));
        answer.put("value", text(converter.fromConnectData(current.topic(), current.valueSchema(), current.value())));
        ArrayNode outHeaders = answer.putArray("headers");
        for (Header header : (Iterable<Header>) current.headers()) {
            ObjectNode item = outHeaders.addObject();
            item.put("key", header.key());
            item.put("value", text(headerConverter.fromConnectHeader(current.topic(), header.key(),
                    header.schema(), header.value())));
        }
        return MAPPER.writeValueAsString(answer);
    }
}
