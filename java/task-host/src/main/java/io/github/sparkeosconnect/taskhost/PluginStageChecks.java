package io.github.sparkeosconnect.taskhost;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * The options of a connector's transforms and predicates whose classes a plugin on
 * {@code plugin.path} holds (Debezium's {@code ExtractNewRecordState}, say), checked with each
 * class's own {@link ConfigDef} as Connect's validation checks them. Stages of the task host's
 * own classes (Connect's transforms and predicates) are the Python side's to check.
 */
final class PluginStageChecks {

    private PluginStageChecks() {
    }

    /**
     * Each option of each plugin-held stage in {@code config}, as {@code transforms.<alias>.
     * <option>} (or {@code predicates.}), with its error messages (none when valid); a stage
     * whose class cannot be made reports under its {@code type}.
     */
    static Map<String, List<String>> check(Plugins plugins, Map<String, String> config,
            ClassLoader preferred) {
        Map<String, List<String>> reports = new LinkedHashMap<>();
        check(plugins, config, preferred, "predicates", Predicate.class, reports);
        check(plugins, config, preferred, "transforms", Transformation.class, reports);
        return reports;
    }

    private static void check(Plugins plugins, Map<String, String> config, ClassLoader preferred,
            String group, Class<?> base, Map<String, List<String>> reports) {
        for (String alias : RecordPipeline.aliases(config.get(group))) {
            String prefix = group + "." + alias + ".";
            String type = config.getOrDefault(prefix + "type", "").trim();
            if (type.isEmpty() || plugins.pluginHolding(type) == null) {
                continue;
            }
            try {
                ConfigDef definition = definition(plugins, type, base, preferred);
                if (definition == null) {
                    continue;
                }
                Map<String, String> options = RecordPipeline.optionsUnder(config, prefix);
                options.remove("type");
                if (group.equals("transforms")) {
                    options.remove("predicate");
                    options.remove("negate");
                }
                for (ConfigValue value : definition.validate(options)) {
                    reports.put(prefix + value.name(), new ArrayList<>(value.errorMessages()));
                }
            } catch (Exception | LinkageError failed) {
                reports.put(prefix + "type", List.of("Invalid value " + type + " for "
                        + "configuration " + prefix + "type: the " + base.getSimpleName()
                        + " could not be made (" + failed + ")"));
            }
        }
    }

    private static ConfigDef definition(Plugins plugins, String type, Class<?> base,
            ClassLoader preferred) throws Exception {
        Plugins.Found<?> found = plugins.load(type, base, preferred);
        return Plugins.withLoader(found.loader(), () -> {
            Object stage = found.type().getDeclaredConstructor().newInstance();
            try {
                return stage instanceof Transformation<?> transformation
                        ? transformation.config() : ((Predicate<?>) stage).config();
            } finally {
                ((AutoCloseable) stage).close();
            }
        });
    }
}
