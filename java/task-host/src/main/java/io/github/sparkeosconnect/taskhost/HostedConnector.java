package io.github.sparkeosconnect.taskhost;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceConnectorContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * One Java {@link SourceConnector} (the connector side: validate, start, task configs, stop,
 * alterOffsets), every call made with the plugin's class loader as the thread context class
 * loader.
 */
public final class HostedConnector {

    private final SourceConnector connector;
    private final ClassLoader loader;
    private final OffsetStorageReader offsets;
    private final Metrics metrics = new Metrics();
    private volatile boolean reconfigurationRequested;
    private volatile Exception raised;

    private HostedConnector(SourceConnector connector, ClassLoader loader,
            OffsetStorageReader offsets) {
        this.connector = connector;
        this.loader = loader;
        this.offsets = offsets;
    }

    /** A fresh instance of {@code className} from {@code plugins}; {@code offsets} is the
     * offset reader its context gives it. */
    public static HostedConnector create(Plugins plugins, String className,
            OffsetStorageReader offsets) throws Exception {
        Plugins.Found<SourceConnector> found = plugins.load(className, SourceConnector.class, null);
        SourceConnector instance = Plugins.withLoader(found.loader(),
                () -> found.type().getDeclaredConstructor().newInstance());
        return new HostedConnector(instance, found.loader(), offsets);
    }

    /** The connector's own validation: each option it defines, with its error messages
     * (none when it is valid), then the options of the transforms and predicates whose classes
     * the plugins hold ({@link PluginStageChecks}). */
    public Map<String, List<String>> validate(Plugins plugins, Map<String, String> config)
            throws Exception {
        Config checked = Plugins.withLoader(loader, () -> connector.validate(config));
        Map<String, List<String>> options = new LinkedHashMap<>();
        for (ConfigValue value : checked.configValues()) {
            options.put(value.name(), new ArrayList<>(value.errorMessages()));
        }
        options.putAll(PluginStageChecks.check(plugins, config, loader));
        return options;
    }

    /** {@code exactlyOnceSupport(config)}: SUPPORTED, UNSUPPORTED, or null when unknown. */
    public String exactlyOnceSupport(Map<String, String> config) throws Exception {
        ExactlyOnceSupport support = Plugins.withLoader(loader,
                () -> connector.exactlyOnceSupport(config));
        return support == null ? null : support.name();
    }

    /** {@code canDefineTransactionBoundaries(config)}: SUPPORTED, UNSUPPORTED, or null. */
    public String transactionBoundaries(Map<String, String> config) throws Exception {
        ConnectorTransactionBoundaries answer = Plugins.withLoader(loader,
                () -> connector.canDefineTransactionBoundaries(config));
        return answer == null ? null : answer.name();
    }

    /**
     * {@code alterOffsets(config, offsets)}, as a Connect worker calls it before it alters or
     * resets a connector's offsets: on an instance neither initialized nor started, the offsets'
     * values of Connect's JSON types, a null offset for a partition being reset. True when the
     * connector has handled them (offsets it keeps elsewhere are altered too); it throws to
     * refuse them.
     */
    public boolean alterOffsets(Map<String, String> config,
            Map<Map<String, ?>, Map<String, ?>> offsets) throws Exception {
        return Plugins.withLoader(loader, () -> connector.alterOffsets(config, offsets));
    }

    /** Initializes and starts the connector. */
    public void start(Map<String, String> config) throws Exception {
        PluginMetrics pluginMetrics = new PluginMetricsImpl(metrics,
                Map.of("connector", connector.getClass().getName()));
        SourceConnectorContext context = new SourceConnectorContext() {
            @Override
            public OffsetStorageReader offsetStorageReader() {
                return offsets;
            }

            @Override
            public void requestTaskReconfiguration() {
                reconfigurationRequested = true;
            }

            @Override
            public void raiseError(Exception error) {
                raised = error;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return pluginMetrics;
            }
        };
        Plugins.runWithLoader(loader, () -> {
            connector.initialize(context);
            connector.start(config);
        });
    }

    /** The task class's name. */
    public String taskClass() throws Exception {
        return Plugins.withLoader(loader, () -> connector.taskClass().getName());
    }

    /** Up to {@code maxTasks} task configs, as the connector returns them. */
    public List<Map<String, String>> taskConfigs(int maxTasks) throws Exception {
        return Plugins.withLoader(loader, () -> connector.taskConfigs(maxTasks));
    }

    /** Whether the connector asked for its tasks to be reconfigured (cleared on read). */
    public boolean takeReconfigurationRequest() {
        boolean requested = reconfigurationRequested;
        reconfigurationRequested = false;
        return requested;
    }

    /** The error the connector raised through its context since the last call, if any. */
    public Exception takeRaisedError() {
        Exception error = raised;
        raised = null;
        return error;
    }

    /** Stops the connector. */
    public void stop() throws Exception {
        try {
            Plugins.runWithLoader(loader, connector::stop);
        } finally {
            metrics.close();
        }
    }
}
