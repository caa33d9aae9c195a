package io.github.sparkeosconnect.taskhost;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a Connect worker does to a source record before its producer sends it: the connector's
 * {@code transforms} chain (with {@code predicates}), then the header, key and value
 * converters. Configured from the connector's options as Connect reads them; a stage that fails
 * (after the retries {@code errors.retry.timeout} allows) drops the record under
 * {@code errors.tolerance=all} (a source connector has no dead letter queue; logged under
 * {@code errors.log.enable=true}), fails the task otherwise, either way naming the stage, its
 * class and the record.
 *
 * <p>A key or value converter class is looked for in the plugins (the connector's own first),
 * then on the task host; one found in neither but among the classes the Python side converts
 * itself (its stand-ins, given at START_TASK) becomes a {@link HandOverConverter}, and the
 * Python side converts that column. Any other is an error naming the option, the class and
 * the plugin.path.
 */
public final class RecordPipeline implements Closeable {

    private static final Logger log = LoggerFactory.getLogger(RecordPipeline.class);
    /** The stages of {@link #apply} after the transformations (numbered from 0). */
    private static final int HEADER_CONVERTER = Integer.MAX_VALUE - 2;
    private static final int KEY_CONVERTER = Integer.MAX_VALUE - 1;
    private static final int VALUE_CONVERTER = Integer.MAX_VALUE;

    private record Stage(String alias, Transformation<SourceRecord> transformation,
            Predicate<SourceRecord> predicate, boolean negate, ClassLoader loader) {
    }

    private final List<Stage> stages;
    private final List<Predicate<SourceRecord>> predicates;
    private final Converter keyConverter;
    private final Converter valueConverter;
    private final HeaderConverter headerConverter;
    private final ErrorHandling errors;
    private final ClassLoader taskLoader;
    private final SchemaTable handedOver;

    private RecordPipeline(List<Stage> stages, List<Predicate<SourceRecord>> predicates,
            Converter keyConverter, Converter valueConverter, HeaderConverter headerConverter,
            ErrorHandling errors, ClassLoader taskLoader, SchemaTable handedOver) {
        this.handedOver = handedOver;
        this.stages = stages;
        this.predicates = predicates;
        this.keyConverter = keyConverter;
        this.valueConverter = valueConverter;
        this.headerConverter = headerConverter;
        this.errors = errors;
        this.taskLoader = taskLoader;
    }

    /** The pipeline {@code config} (the connector's options) describes, classes found in
     * {@code plugins} ({@code loader}'s plugin first); no class is handed over to Python. */
    public static RecordPipeline create(Plugins plugins, Map<String, String> config,
            ClassLoader loader) throws Exception {
        return create(plugins, config, loader, Set.of());
    }

    /** As {@link #create(Plugins, Map, ClassLoader)}; a key or value converter of a class in
     * {@code standIns} that neither the plugins nor the host hold is handed over. */
    public static RecordPipeline create(Plugins plugins, Map<String, String> config,
            ClassLoader loader, Set<String> standIns) throws Exception {
        return create(plugins, config, loader, standIns, ErrorHandling.of(config));
    }

    /** As {@link #create(Plugins, Map, ClassLoader, Set)}, failures handled by {@code errors}
     * (its clock and waits a test's). */
    static RecordPipeline create(Plugins plugins, Map<String, String> config,
            ClassLoader loader, Set<String> standIns, ErrorHandling errors) throws Exception {
        SchemaTable handedOver = new SchemaTable(HandOverConverter.json());
        Converter key = converter(plugins, config, "key.converter", true, loader,
                standIns, handedOver);
        Converter value = converter(plugins, config, "value.converter", false, loader,
                standIns, handedOver);
        HeaderConverter header = headerConverter(plugins, config, loader);
        Map<String, Predicate<SourceRecord>> predicates = new HashMap<>();
        for (String alias : aliases(config.get("predicates"))) {
            String prefix = "predicates." + alias + ".";
            @SuppressWarnings("unchecked")
            Predicate<SourceRecord> predicate = (Predicate<SourceRecord>) instance(plugins,
                    required(config, prefix + "type"), Predicate.class, loader);
            Plugins.runWithLoader(loader, () -> predicate.configure(withPrefix(config, prefix)));
            predicates.put(alias, predicate);
        }
        List<Stage> stages = new ArrayList<>();
        for (String alias : aliases(config.get("transforms"))) {
            String prefix = "transforms." + alias + ".";
            Plugins.Found<Transformation> found = plugins.load(required(config, prefix + "type"),
                    Transformation.class, loader);
            @SuppressWarnings("unchecked")
            Transformation<SourceRecord> transformation = Plugins.withLoader(found.loader(),
                    () -> found.type().getDeclaredConstructor().newInstance());
            Map<String, Object> options = withPrefix(config, prefix);
            Object predicateAlias = options.remove("predicate");
            boolean negate = Boolean.parseBoolean(String.valueOf(options.remove("negate")));
            Plugins.runWithLoader(found.loader(), () -> transformation.configure(options));
            Predicate<SourceRecord> predicate = null;
            if (predicateAlias != null) {
                predicate = predicates.get(String.valueOf(predicateAlias));
                if (predicate == null) {
                    throw new IllegalArgumentException(prefix + "predicate names " + predicateAlias
                            + ", which is not in predicates");
                }
            }
            stages.add(new Stage(alias, transformation, predicate, negate, found.loader()));
        }
        return new RecordPipeline(stages, new ArrayList<>(predicates.values()), key, value, header,
                errors, loader, handedOver);
    }

    /** Which converted columns are handed over to the Python side: 2 the keys, 4 the values
     * (START_TASK's reply flags). */
    public int handOverFlags() {
        return (keyConverter instanceof HandOverConverter ? 2 : 0)
                | (valueConverter instanceof HandOverConverter ? 4 : 0);
    }

    /** The schemas the handed-over columns numbered since the last call. */
    List<SchemaTable.Entry> newSchemas() {
        return handedOver.takeNew();
    }

    /**
     * What the producer sends for {@code record}; null when a stage dropped it, or failed on it
     * under {@code errors.tolerance=all} (logged naming the stage, the class and the record's
     * topic, source partition and offset when {@code errors.log.enable=true}, with the record
     * itself when {@code errors.log.include.messages=true}). Otherwise a stage's failure is a
     * ConnectException naming the same, its cause the stage's own exception. A stage that
     * throws {@code RetriableException} is tried again as {@code errors.retry.timeout} allows
     * ({@link ErrorHandling}).
     */
    public ProducerRecord<byte[], byte[]> apply(SourceRecord record) throws Exception {
        int at = 0; // the stage running: a transformation's index, then a converter's
        try {
            SourceRecord current = record;
            for (; at < stages.size(); at++) {
                Stage stage = stages.get(at);
                SourceRecord input = current;
                current = attempt(() -> transformed(stage, input));
                if (current == null) {
                    return null;
                }
            }
            SourceRecord converted = current;
            String topic = converted.topic();
            at = HEADER_CONVERTER;
            RecordHeaders headers = attempt(() -> headers(converted));
            at = KEY_CONVERTER;
            byte[] key = attempt(() -> keyConverter.fromConnectData(topic, headers,
                    converted.keySchema(), converted.key()));
            at = VALUE_CONVERTER;
            byte[] value = attempt(() -> valueConverter.fromConnectData(topic, headers,
                    converted.valueSchema(), converted.value()));
            Long timestamp = converted.timestamp();
            if (timestamp != null && timestamp < 0) {
                timestamp = null;
            }
            return new ProducerRecord<>(topic, converted.kafkaPartition(), timestamp, key, value,
                    headers);
        } catch (Exception error) {
            String failed = failedStage(at) + " failed on the record of topic " + record.topic()
                    + ", source partition " + record.sourcePartition() + ", source offset "
                    + record.sourceOffset();
            if (!errors.tolerateAll) {
                throw new ConnectException("Tolerance exceeded in error handler: " + failed
                        + " (errors.tolerance=none)", error);
            }
            String line = errors.skipLine(failed, record, error);
            if (line != null) {
                log.error(line);
            }
            return null;
        }
    }

    private <T> T attempt(Callable<T> operation) throws Exception {
        return errors.retryTimeoutMs == 0 ? operation.call() : errors.withRetries(operation);
    }

    private SourceRecord transformed(Stage stage, SourceRecord input) throws Exception {
        if (stage.predicate() != null && !(stage.negate() ^ stage.predicate().test(input))) {
            return input;
        }
        return stage.loader() == taskLoader ? stage.transformation().apply(input)
                : Plugins.withLoader(stage.loader(), () -> stage.transformation().apply(input));
    }

    private RecordHeaders headers(SourceRecord record) {
        RecordHeaders headers = new RecordHeaders();
        for (Header header : record.headers()) {
            headers.add(header.key(), headerConverter.fromConnectHeader(record.topic(),
                    header.key(), header.schema(), header.value()));
        }
        return headers;
    }

    /** Stage {@code at} of {@link #apply} as Connect's error context names it. */
    private String failedStage(int at) {
        if (at < stages.size()) {
            Stage stage = stages.get(at);
            return "stage TRANSFORMATION with class " + stage.transformation().getClass().getName()
                    + " (transforms." + stage.alias() + ")";
        }
        return switch (at) {
            case HEADER_CONVERTER -> "stage HEADER_CONVERTER with class "
                    + headerConverter.getClass().getName();
            case KEY_CONVERTER -> "stage KEY_CONVERTER with class "
                    + keyConverter.getClass().getName();
            default -> "stage VALUE_CONVERTER with class " + valueConverter.getClass().getName();
        };
    }

    @Override
    public void close() {
        for (Stage stage : stages) {
            closeQuietly(stage.transformation()::close, stage.alias());
        }
        for (Predicate<SourceRecord> predicate : predicates) {
            closeQuietly(predicate::close, "predicate");
        }
        closeQuietly(keyConverter::close, "key.converter");
        closeQuietly(valueConverter::close, "value.converter");
        closeQuietly(headerConverter::close, "header.converter");
        closeQuietly(handedOver.json()::close, "the hand-over's JsonConverter");
    }

    private interface Closer {
        void close() throws Exception;
    }

    private static void closeQuietly(Closer closer, String what) {
        try {
            closer.close();
        } catch (Exception error) {
            log.warn("closing {} failed: {}", what, error.toString());
        }
    }

    private static Converter converter(Plugins plugins, Map<String, String> config, String option,
            boolean isKey, ClassLoader loader, Set<String> standIns, SchemaTable handedOver)
            throws Exception {
        String name = config.get(option);
        if (name == null || name.isBlank()) {
            return new DefaultConverter();
        }
        String className = name.trim();
        if (standIns.contains(className) && !plugins.canLoad(className, loader)) {
            return new HandOverConverter(handedOver);
        }
        Converter converter;
        try {
            converter = (Converter) instance(plugins, className, Converter.class, loader);
        } catch (ClassNotFoundException notFound) {
            String why = plugins.canLoad(className, loader) ? "" : ", and this project has no"
                    + " converter of that class (it stands in for " + new TreeSet<>(standIns) + ")";
            throw new ClassNotFoundException(option + "=" + className + ": "
                    + notFound.getMessage() + why);
        }
        Map<String, Object> options = withPrefix(config, option + ".");
        options.put("converter.type", isKey ? "key" : "value");
        Plugins.runWithLoader(loader, () -> converter.configure(options, isKey));
        return converter;
    }

    private static HeaderConverter headerConverter(Plugins plugins, Map<String, String> config,
            ClassLoader loader) throws Exception {
        String name = config.get("header.converter");
        if (name == null || name.isBlank()) {
            return new DefaultConverter();
        }
        HeaderConverter converter;
        try {
            converter = (HeaderConverter) instance(plugins, name.trim(), HeaderConverter.class,
                    loader);
        } catch (ClassNotFoundException notFound) {
            throw new ClassNotFoundException("header.converter=" + name.trim() + ": "
                    + notFound.getMessage() + " (header converters have no stand-ins)");
        }
        Map<String, Object> options = withPrefix(config, "header.converter.");
        options.put("converter.type", "header");
        Plugins.runWithLoader(loader, () -> converter.configure(options));
        return converter;
    }

    private static Object instance(Plugins plugins, String className, Class<?> base,
            ClassLoader loader) throws Exception {
        Plugins.Found<?> found = plugins.load(className, base, loader);
        return Plugins.withLoader(found.loader(),
                () -> found.type().getDeclaredConstructor().newInstance());
    }

    private static String required(Map<String, String> config, String option) {
        String value = config.get(option);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("missing option " + option);
        }
        return value.trim();
    }

    /** The aliases a {@code transforms} or {@code predicates} list names, in order. */
    static List<String> aliases(String list) {
        List<String> aliases = new ArrayList<>();
        if (list != null) {
            for (String alias : list.split(",")) {
                if (!alias.isBlank()) {
                    aliases.add(alias.trim());
                }
            }
        }
        return aliases;
    }

    private static Map<String, Object> withPrefix(Map<String, String> config, String prefix) {
        return new HashMap<>(optionsUnder(config, prefix));
    }

    /** The options of {@code config} whose names start with {@code prefix}, named without it. */
    static Map<String, String> optionsUnder(Map<String, String> config, String prefix) {
        Map<String, String> options = new HashMap<>();
        for (Map.Entry<String, String> entry : config.entrySet()) {
            if (entry.getKey().startsWith(prefix)) {
                options.put(entry.getKey().substring(prefix.length()), entry.getValue());
            }
        }
        return options;
    }
}
