package io.github.sparkeosconnect.taskhost;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Finds the plugins of a {@code plugin.path}, as Kafka Connect's worker does: every sub-folder
 * of an entry is one plugin made of the jars found anywhere under it (a folder holding no jar
 * is itself a folder of classes); every jar directly in an entry is a plugin of its own; an
 * entry that is a jar is one plugin. Entries are taken in the order given, plugins in name
 * order within an entry. An entry that does not exist is an error naming it.
 */
public final class PluginScanner {

    /** One plugin: where it was found and the class path of its loader. */
    public record PluginLocation(Path source, List<URL> urls) {
    }

    private PluginScanner() {
    }

    /** The plugins of {@code entries}; an {@link IOException} names an entry that is missing. */
    public static List<PluginLocation> scan(List<Path> entries) throws IOException {
        List<PluginLocation> plugins = new ArrayList<>();
        for (Path entry : entries) {
            if (Files.isDirectory(entry)) {
                List<Path> children;
                try (Stream<Path> listed = Files.list(entry)) {
                    children = listed.sorted().toList();
                }
                for (Path child : children) {
                    if (Files.isDirectory(child)) {
                        plugins.add(new PluginLocation(child, folderUrls(child)));
                    } else if (isArchive(child)) {
                        plugins.add(new PluginLocation(child, List.of(url(child))));
                    }
                }
            } else if (Files.isRegularFile(entry) && isArchive(entry)) {
                plugins.add(new PluginLocation(entry, List.of(url(entry))));
            } else {
                throw new IOException("plugin.path entry " + entry
                        + " is neither a folder nor a jar (it does not exist or cannot be read)");
            }
        }
        return plugins;
    }

    private static List<URL> folderUrls(Path folder) throws IOException {
        List<Path> jars;
        try (Stream<Path> walked = Files.walk(folder)) {
            jars = walked.filter(p -> Files.isRegularFile(p) && isArchive(p)).sorted().toList();
        }
        if (jars.isEmpty()) {
            return List.of(url(folder));
        }
        List<URL> urls = new ArrayList<>(jars.size());
        for (Path jar : jars) {
            urls.add(url(jar));
        }
        return urls;
    }

    private static boolean isArchive(Path path) {
        String name = path.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        return name.endsWith(".jar") || name.endsWith(".zip");
    }

    private static URL url(Path path) throws MalformedURLException {
        return path.toAbsolutePath().toUri().toURL();
    }
}
