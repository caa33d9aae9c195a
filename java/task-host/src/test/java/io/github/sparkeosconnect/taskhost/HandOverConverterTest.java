package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.junit.jupiter.api.Test;

/** The hand-over's bytes and schema texts: what the Python side reads back. */
class HandOverConverterTest {

    static Schema row() {
        return SchemaBuilder.struct().name("db.public.items.Value").version(2)
                .field("id", Schema.INT32_SCHEMA)
                .field("price", Decimal.builder(2).optional().build())
                .field("state", SchemaBuilder.string().name("io.debezium.data.Enum")
                        .parameter("allowed", "new,old").defaultValue("new").build())
                .build();
    }

    static int number(byte[] framed) {
        return ByteBuffer.wrap(framed, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    static String payload(byte[] framed) {
        return new String(Arrays.copyOfRange(framed, 4, framed.length), StandardCharsets.UTF_8);
    }

    @Test
    void valuesGoWithTheirSchemasNumberAndEachSchemaTextOnce() {
        SchemaTable table = new SchemaTable(HandOverConverter.json());
        HandOverConverter converter = new HandOverConverter(table);
        Struct value = new Struct(row()).put("id", 7).put("price", new BigDecimal("1.25"))
                .put("state", "old");

        byte[] framed = converter.fromConnectData("t", row(), value);
        assertEquals(0, number(framed));
        assertEquals("{\"id\":7,\"price\":\"fQ==\",\"state\":\"old\"}", payload(framed),
                "the decimal as its unscaled bytes in base64");
        List<SchemaTable.Entry> schemas = table.takeNew();
        assertEquals(1, schemas.size());
        String text = schemas.get(0).json();
        for (String part : List.of("\"name\":\"db.public.items.Value\"", "\"version\":2",
                "\"name\":\"org.apache.kafka.connect.data.Decimal\"", "\"scale\":\"2\"",
                "\"allowed\":\"new,old\"", "\"default\":\"new\"")) {
            assertEquals(true, text.contains(part), () -> part + " not in " + text);
        }

        // an equal schema built anew shares the number; its text is not sent again
        assertEquals(0, number(converter.fromConnectData("t", row(), value)));
        assertEquals(List.of(), table.takeNew());
        byte[] other = converter.fromConnectData("t", Schema.OPTIONAL_STRING_SCHEMA, "x");
        assertEquals(1, number(other));
        assertEquals(1, table.takeNew().size());
    }

    @Test
    void nullsStayWhatTheyWere() {
        SchemaTable table = new SchemaTable(HandOverConverter.json());
        HandOverConverter converter = new HandOverConverter(table);
        assertNull(converter.fromConnectData("t", null, null), "a tombstone stays null");
        byte[] nullWithSchema = converter.fromConnectData("t", Schema.OPTIONAL_INT64_SCHEMA, null);
        assertEquals(0, number(nullWithSchema));
        assertEquals("null", payload(nullWithSchema));
        byte[] schemaless = converter.fromConnectData("t", null, "text");
        assertEquals(-1, number(schemaless));
        assertEquals("\"text\"", payload(schemaless));
    }
}
