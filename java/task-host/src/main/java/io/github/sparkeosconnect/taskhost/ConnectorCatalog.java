package io.github.sparkeosconnect.taskhost;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.source.SourceConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connector classes of a {@code plugin.path}, found as a Connect worker's default
 * ({@code plugin.discovery=hybrid_warn}) finds them: the classes a plugin's own ServiceLoader
 * manifests name, or, for a plugin with no connector manifest, every concrete connector class
 * its jars hold (loaded without being initialized). Each is instantiated once, with its plugin's
 * loader as the context loader, for its {@code version()}; one that cannot be is left out, as
 * Connect leaves it out.
 */
public final class ConnectorCatalog {

    /** One connector plugin: its class, {@code source} or {@code sink}, its version. */
    public record Entry(String className, String type, String version) {
    }

    private static final Logger log = LoggerFactory.getLogger(ConnectorCatalog.class);
    private static final List<Class<? extends Connector>> KINDS =
            List.of(SourceConnector.class, SinkConnector.class);

    private ConnectorCatalog() {
    }

    /** Every connector of {@code plugins}: sinks, then sources, each by class name. */
    public static List<Entry> connectors(Plugins plugins) {
        List<Entry> found = new ArrayList<>();
        for (PluginClassLoader loader : plugins.loaders()) {
            for (String className : candidates(loader)) {
                Entry entry = describe(className, loader);
                if (entry != null && found.stream().noneMatch(
                        e -> e.className().equals(entry.className()))) {
                    found.add(entry);
                }
            }
        }
        found.sort(Comparator.comparing((Entry e) -> e.type().equals("source"))
                .thenComparing(Entry::className));
        return found;
    }

    private static Set<String> candidates(PluginClassLoader loader) {
        Set<String> named = new LinkedHashSet<>();
        for (Class<? extends Connector> kind : KINDS) {
            named.addAll(manifest(loader, kind.getName()));
        }
        if (!named.isEmpty()) {
            return named;
        }
        for (URL url : loader.getURLs()) {
            named.addAll(classesIn(url));
        }
        return named;
    }

    private static List<String> manifest(PluginClassLoader loader, String service) {
        List<String> names = new ArrayList<>();
        try {
            for (URL url : Collections.list(loader.findResources("META-INF/services/" + service))) {
                try (InputStream in = url.openStream();
                        BufferedReader reader = new BufferedReader(
                                new InputStreamReader(in, StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = reader.readLine()) != null) {
                        String name = line.replaceFirst("#.*", "").trim();
                        if (!name.isEmpty()) {
                            names.add(name);
                        }
                    }
                }
            }
        } catch (IOException unreadable) {
            log.warn("{}: reading its {} manifests failed: {}", loader, service, unreadable.toString());
        }
        return names;
    }

    private static List<String> classesIn(URL url) {
        List<String> names = new ArrayList<>();
        try {
            Path path = Path.of(URI.create(url.toString()));
            if (Files.isDirectory(path)) {
                try (Stream<Path> walked = Files.walk(path)) {
                    walked.map(p -> path.relativize(p).toString().replace('\\', '/'))
                            .forEach(entry -> addClass(entry, names));
                }
            } else {
                try (JarFile jar = new JarFile(path.toFile())) {
                    for (JarEntry entry : Collections.list(jar.entries())) {
                        addClass(entry.getName(), names);
                    }
                }
            }
        } catch (IOException | IllegalArgumentException unreadable) {
            log.warn("scanning {} for connectors failed: {}", url, unreadable.toString());
        }
        return names;
    }

    private static void addClass(String entry, List<String> names) {
        if (entry.endsWith(".class") && !entry.contains("$") && !entry.endsWith("module-info.class")
                && !entry.startsWith("META-INF/")) {
            names.add(entry.substring(0, entry.length() - ".class".length()).replace('/', '.'));
        }
    }

    private static Entry describe(String className, PluginClassLoader loader) {
        try {
            Class<?> type = Class.forName(className, false, loader);
            int modifiers = type.getModifiers();
            if (!Connector.class.isAssignableFrom(type) || Modifier.isAbstract(modifiers)
                    || !Modifier.isPublic(modifiers)) {
                return null;
            }
            String kind = SourceConnector.class.isAssignableFrom(type) ? "source"
                    : SinkConnector.class.isAssignableFrom(type) ? "sink" : null;
            if (kind == null) {
                return null;
            }
            Connector instance = Plugins.withLoader(loader,
                    () -> (Connector) type.getDeclaredConstructor().newInstance());
            String version = Plugins.withLoader(loader, instance::version);
            return new Entry(className, kind, String.valueOf(version));
        } catch (Exception | LinkageError unusable) {
            log.warn("{}: connector class {} cannot be used: {}", loader, className,
                    unusable.toString());
            return null;
        }
    }
}
