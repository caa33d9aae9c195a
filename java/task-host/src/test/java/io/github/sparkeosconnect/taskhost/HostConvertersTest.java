package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Connect's converters of its runtime jar run on the task host, as key, value and header
 * converters, with no plugin holding them and nothing handed over to the Python side. */
class HostConvertersTest {

    @TempDir
    Path root;

    @Test
    void theRuntimeConvertersAreTheHostsOwn() throws Exception {
        Map<String, String> config = Map.of(
                "key.converter", "org.apache.kafka.connect.converters.BooleanConverter",
                "value.converter", "org.apache.kafka.connect.converters.LongConverter",
                "header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        Plugins plugins = new Plugins(List.of(root), HostConvertersTest.class.getClassLoader());
        ConnectHeaders headers = new ConnectHeaders();
        headers.addBytes("trace", new byte[] {1, 2});
        SourceRecord record = new SourceRecord(Map.of("p", 1), Map.of("o", 2L), "numbers", null,
                Schema.BOOLEAN_SCHEMA, true, Schema.INT64_SCHEMA, 1L << 40, null, headers);

        try (RecordPipeline pipeline = RecordPipeline.create(plugins, config,
                HostConvertersTest.class.getClassLoader(), Set.of(
                        "org.apache.kafka.connect.converters.LongConverter"))) {
            assertEquals(0, pipeline.handOverFlags(), "on the host: not handed over");
            ProducerRecord<byte[], byte[]> sent = pipeline.apply(record);
            assertArrayEquals(new byte[] {1}, sent.key());
            assertEquals(1L << 40, ByteBuffer.wrap(sent.value()).getLong());
            assertArrayEquals(new byte[] {1, 2}, sent.headers().lastHeader("trace").value());
        }
    }
}
