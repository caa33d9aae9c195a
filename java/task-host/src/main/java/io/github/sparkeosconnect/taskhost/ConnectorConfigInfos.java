package io.github.sparkeosconnect.taskhost;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Connector;

/**
 * A connector's own part of Connect's {@code ConfigInfos} for a config: its {@code config()}
 * definitions and groups, and what its {@code validate} says of each option, shaped as a Connect
 * worker's REST API shapes them (values and defaults as {@code ConfigDef.convertToString} writes
 * them for the option's type; a PASSWORD option's value and default always show
 * {@code [hidden]}). The framework's
 * options (name, tasks.max, converters...) are not here: the Python side adds them.
 */
public final class ConnectorConfigInfos {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HIDDEN = "[hidden]";

    private ConnectorConfigInfos() {
    }

    /**
     * The JSON text {@code {"name", "groups", "configs": [{"definition", "value"}],
     * "undefined": [value]}} for {@code className} from {@code plugins} validating
     * {@code config}: {@code configs} in definition order (value null for an option
     * {@code validate} did not report), {@code undefined} the values reported for options the
     * connector does not define.
     */
    public static String of(Plugins plugins, String className, Map<String, String> config)
            throws Exception {
        Plugins.Found<Connector> found = plugins.load(className, Connector.class, null);
        return Plugins.withLoader(found.loader(), () -> {
            Connector connector = found.type().getDeclaredConstructor().newInstance();
            ConfigDef definitions = connector.config();
            Config checked = connector.validate(config);
            return JSON.writeValueAsString(infos(className, definitions, checked));
        });
    }

    private static Map<String, Object> infos(String className, ConfigDef definitions,
            Config checked) {
        Map<String, ConfigDef.ConfigKey> keys = definitions.configKeys();
        Map<String, ConfigValue> values = new HashMap<>();
        List<Object> undefined = new ArrayList<>();
        for (ConfigValue value : checked.configValues()) {
            values.put(value.name(), value);
            if (!keys.containsKey(value.name())) {
                undefined.add(value(value, null));
            }
        }
        List<Object> configs = new ArrayList<>();
        for (ConfigDef.ConfigKey key : keys.values()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("definition", definition(key));
            ConfigValue value = values.get(key.name);
            entry.put("value", value == null ? null : value(value, key.type));
            configs.add(entry);
        }
        Map<String, Object> infos = new LinkedHashMap<>();
        infos.put("name", className);
        infos.put("groups", new ArrayList<>(definitions.groups()));
        infos.put("configs", configs);
        infos.put("undefined", undefined);
        return infos;
    }

    private static Map<String, Object> definition(ConfigDef.ConfigKey key) {
        boolean required = ConfigDef.NO_DEFAULT_VALUE.equals(key.defaultValue);
        Map<String, Object> shown = new LinkedHashMap<>();
        shown.put("name", key.name);
        shown.put("type", key.type.name());
        shown.put("required", required);
        shown.put("default_value", required ? null : shown(key.defaultValue, key.type));
        shown.put("importance", key.importance.name());
        shown.put("documentation", key.documentation);
        shown.put("group", key.group);
        shown.put("width", key.width.name());
        shown.put("display_name", key.displayName);
        shown.put("dependents", key.dependents);
        shown.put("order_in_group", key.orderInGroup);
        return shown;
    }

    /** {@code convertToString}, except that a PASSWORD option's value is never shown, even
     * when a connector's validate leaves it a plain string. */
    private static String shown(Object value, ConfigDef.Type type) {
        if (type == ConfigDef.Type.PASSWORD && value != null) {
            return HIDDEN;
        }
        return ConfigDef.convertToString(value, type);
    }

    private static Map<String, Object> value(ConfigValue value, ConfigDef.Type type) {
        ConfigDef.Type listed = type == ConfigDef.Type.LIST ? ConfigDef.Type.STRING : type;
        List<String> recommended = new ArrayList<>();
        for (Object item : value.recommendedValues()) {
            recommended.add(ConfigDef.convertToString(item, listed));
        }
        Map<String, Object> shown = new LinkedHashMap<>();
        shown.put("name", value.name());
        shown.put("value", shown(value.value(), type));
        shown.put("recommended_values", recommended);
        shown.put("errors", value.errorMessages());
        shown.put("visible", value.visible());
        return shown;
    }
}
