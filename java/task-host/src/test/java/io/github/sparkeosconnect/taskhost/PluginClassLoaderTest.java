package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.connect.file.FileStreamSourceTask;
import org.apache.kafka.connect.source.SourceTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginClassLoaderTest {

    @TempDir
    Path root;

    static Path jarOf(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** A plugin folder holding connect-file and its own copy of connect-api (as Debezium
     * ships one). */
    Plugins pluginWithItsOwnApi() throws Exception {
        Path plugin = Files.createDirectories(root.resolve("file-plugin"));
        Files.copy(jarOf(FileStreamSourceTask.class), plugin.resolve("connect-file.jar"));
        Files.copy(jarOf(SourceTask.class), plugin.resolve("connect-api-own-copy.jar"));
        return new Plugins(List.of(root), PluginClassLoaderTest.class.getClassLoader());
    }

    @Test
    void sharedClassesAreTheHostsAndTheRestThePlugins() {
        assertTrue(PluginClassLoader.isShared("org.apache.kafka.connect.source.SourceTask"));
        assertTrue(PluginClassLoader.isShared("org.apache.kafka.connect.json.JsonConverter"));
        assertTrue(PluginClassLoader.isShared("org.apache.kafka.connect.transforms.InsertField"));
        assertTrue(PluginClassLoader.isShared("org.apache.kafka.common.config.ConfigDef"));
        assertTrue(PluginClassLoader.isShared("org.apache.kafka.clients.producer.RecordMetadata"));
        assertTrue(PluginClassLoader.isShared("org.slf4j.Logger"));
        assertTrue(PluginClassLoader.isShared("java.util.Map"));
        assertFalse(PluginClassLoader.isShared("org.apache.kafka.connect.file.FileStreamSourceTask"));
        assertFalse(PluginClassLoader.isShared("org.apache.kafka.connect.runtime.Worker"));
        assertFalse(PluginClassLoader.isShared("io.debezium.connector.postgresql.PostgresConnector"));
        assertFalse(PluginClassLoader.isShared("com.fasterxml.jackson.databind.ObjectMapper"));
    }

    @Test
    void thePluginsOwnClassesLoadChildFirstAndTheApiFromTheHost() throws Exception {
        Plugins plugins = pluginWithItsOwnApi();
        Plugins.Found<SourceTask> found = plugins.load(FileStreamSourceTask.class.getName(),
                SourceTask.class, null);

        // the test class path has connect-file too: child-first takes the plugin's copy
        assertTrue(found.loader() instanceof PluginClassLoader);
        assertSame(found.loader(), found.type().getClassLoader());
        // the plugin's own connect-api does not win: SourceTask is the host's class
        assertSame(SourceTask.class, found.type().getSuperclass());
        assertSame(SourceTask.class, Class.forName(SourceTask.class.getName(), false,
                found.loader()));
    }

    @Test
    void theContextClassLoaderIsThePluginsDuringACall() throws Exception {
        Plugins plugins = pluginWithItsOwnApi();
        ClassLoader loader = plugins.pluginHolding(FileStreamSourceTask.class.getName());
        ClassLoader before = Thread.currentThread().getContextClassLoader();
        assertSame(loader, Plugins.withLoader(loader,
                () -> Thread.currentThread().getContextClassLoader()));
        assertSame(before, Thread.currentThread().getContextClassLoader());
    }

    @Test
    void aClassNoPluginHoldsIsNamedWithThePluginPath() throws Exception {
        Plugins plugins = pluginWithItsOwnApi();
        ClassNotFoundException error = assertThrows(ClassNotFoundException.class,
                () -> plugins.load("com.example.NoSuchConnector", SourceTask.class, null));
        assertTrue(error.getMessage().contains("com.example.NoSuchConnector"));
        assertTrue(error.getMessage().contains(root.toString()), error.getMessage());
        assertEquals(1, plugins.entries().size());
    }
}
