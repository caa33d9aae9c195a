package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.transforms.Cast;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The options of transforms and predicates a plugin holds, checked with their own ConfigDef. */
class PluginStageChecksTest {

    @TempDir
    Path root;

    /** A plugin.path whose one plugin holds Connect's transforms and predicates. */
    Plugins pluginHoldingTheTransforms() throws Exception {
        Path plugin = Files.createDirectories(root.resolve("transforms-plugin"));
        Files.copy(PluginClassLoaderTest.jarOf(Cast.class), plugin.resolve("transforms.jar"));
        return new Plugins(List.of(root), PluginStageChecksTest.class.getClassLoader());
    }

    @Test
    void eachOptionOfAPluginHeldStageIsReportedWithItsOwnErrors() throws Exception {
        Map<String, List<String>> reports = PluginStageChecks.check(pluginHoldingTheTransforms(),
                Map.of("transforms", "cast, route", "predicates", "big",
                        "transforms.cast.type", Cast.Value.class.getName(),
                        "transforms.cast.predicate", "big",
                        "transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter",
                        "transforms.route.regex", "(.*)",
                        "transforms.route.replacement", "copy-$1",
                        "predicates.big.type",
                        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"),
                null);

        assertEquals(List.of(), reports.get("transforms.route.regex"));
        assertEquals(List.of(), reports.get("transforms.route.replacement"));
        assertEquals("Missing required configuration \"spec\" which has no default value.",
                reports.get("transforms.cast.spec").get(0), reports::toString);
        assertTrue(!reports.containsKey("transforms.cast.predicate"),
                "predicate and negate are the framework's, not the stage's");
        assertEquals("Missing required configuration \"pattern\" which has no default value.",
                reports.get("predicates.big.pattern").get(0), reports::toString);
    }

    @Test
    void stagesNoPluginHoldsAreLeftToTheOtherSide() throws Exception {
        Map<String, List<String>> reports = PluginStageChecks.check(
                new Plugins(List.of(root), PluginStageChecksTest.class.getClassLoader()),
                Map.of("transforms", "cast", "transforms.cast.type", Cast.Value.class.getName()),
                null);

        assertEquals(Map.of(), reports, "Cast from the host's class path: not a plugin's");
    }
}
