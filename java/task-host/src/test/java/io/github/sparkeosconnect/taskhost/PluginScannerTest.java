package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginScannerTest {

    @TempDir
    Path root;

    @Test
    void subFoldersAndJarsAreEachOnePlugin() throws IOException {
        Path folder = Files.createDirectories(root.resolve("a-plugin/lib"));
        Files.writeString(folder.resolve("two.jar"), "");
        Files.writeString(root.resolve("a-plugin/one.jar"), "");
        Files.writeString(root.resolve("b-uber.jar"), "");
        Files.createDirectories(root.resolve("c-classes/com/example"));
        Files.writeString(root.resolve("notes.txt"), "not a plugin");

        List<PluginScanner.PluginLocation> plugins = PluginScanner.scan(List.of(root));

        assertEquals(List.of(root.resolve("a-plugin"), root.resolve("b-uber.jar"),
                root.resolve("c-classes")), plugins.stream().map(p -> p.source()).toList());
        assertEquals(List.of("two.jar", "one.jar"), plugins.get(0).urls().stream()
                .map(u -> Path.of(u.getPath()).getFileName().toString()).toList(),
                "every jar under the folder, in path order (lib/two.jar before one.jar)");
        assertEquals(1, plugins.get(1).urls().size());
        assertTrue(plugins.get(2).urls().get(0).getPath().endsWith("c-classes/"));
    }

    @Test
    void aJarEntryIsOnePlugin() throws IOException {
        Path jar = Files.writeString(root.resolve("uber.jar"), "");
        assertEquals(1, PluginScanner.scan(List.of(jar)).size());
    }

    @Test
    void aMissingEntryIsNamed() {
        Path missing = root.resolve("no-such-folder");
        IOException error = assertThrows(IOException.class,
                () -> PluginScanner.scan(List.of(missing)));
        assertTrue(error.getMessage().contains(missing.toString()), error.getMessage());
    }
}
