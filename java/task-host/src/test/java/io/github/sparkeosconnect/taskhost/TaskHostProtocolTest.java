package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.connect.file.FileStreamSourceTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The protocol end to end, with Connect's real FileStreamSourceTask from a plugin folder. */
class TaskHostProtocolTest {

    static final String TASK = FileStreamSourceTask.class.getName();

    @TempDir
    Path root;
    Path pluginPath;
    PipedOutputStream toHost;
    PipedInputStream fromHost;
    Thread host;
    final List<String> queried = new ArrayList<>();
    String committedOffset;

    /** One decoded BATCH: what the Python side reads of it. */
    record Batch(long firstSeq, int taken, List<String> topics, List<String> values,
            List<String[]> offsets, List<byte[]> rawValues, Map<Integer, String> schemas,
            int requests, boolean midPoll) {
    }

    @BeforeEach
    void startHost() throws Exception {
        pluginPath = Files.createDirectories(root.resolve("plugins"));
        Path plugin = Files.createDirectories(pluginPath.resolve("connect-file"));
        Files.copy(PluginClassLoaderTest.jarOf(FileStreamSourceTask.class),
                plugin.resolve("connect-file.jar"));
        toHost = new PipedOutputStream();
        PipedInputStream hostIn = new PipedInputStream(toHost, 1 << 20);
        fromHost = new PipedInputStream(1 << 20);
        PipedOutputStream hostOut = new PipedOutputStream(fromHost);
        TaskHostMain main = new TaskHostMain(List.of(pluginPath), hostIn, hostOut);
        host = new Thread(main::run, "host-under-test");
        host.start();
    }

    @AfterEach
    void endHost() throws Exception {
        toHost.close();
        host.join(10_000);
        assertTrue(!host.isAlive(), "the host ends when its input ends");
    }

    /** Answers every QUERY with {@link #committedOffset}. */
    Wire.In call(Wire.Out request) throws IOException {
        return call(request, partitions -> {
            List<String> offsets = new ArrayList<>();
            partitions.forEach(p -> offsets.add(committedOffset));
            return offsets;
        });
    }

    Wire.In call(Wire.Out request, Function<List<String>, List<String>> answer)
            throws IOException {
        request.writeTo(toHost);
        toHost.flush();
        while (true) {
            Wire.In reply = new Wire.In(Wire.readFrame(fromHost));
            if (reply.kind != TaskHostMain.QUERY && reply.kind != TaskHostMain.CONNECTOR_QUERY) {
                return reply;
            }
            Function<List<String>, List<String>> answering = answer;
            if (reply.kind == TaskHostMain.CONNECTOR_QUERY) {
                int handle = reply.getInt();
                answering = partitions -> partitions.stream()
                        .map(p -> "{\"position\":" + handle * 100 + "}").toList();
            }
            int n = reply.getInt();
            List<String> partitions = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                partitions.add(reply.getString());
            }
            queried.addAll(partitions);
            Wire.Out answered = new Wire.Out(TaskHostMain.ANSWER);
            List<String> offsets = answering.apply(partitions);
            answered.putInt(offsets.size());
            offsets.forEach(answered::putString);
            answered.writeTo(toHost);
            toHost.flush();
        }
    }

    Wire.In startTask(Path file, String committedOffset) throws IOException {
        Wire.Out start = new Wire.Out(TaskHostMain.START_TASK).putString(TASK)
                .putMap(Map.of("file", file.toString(), "topic", "lines"))
                .putMap(Map.of()).putInt(0);
        this.committedOffset = committedOffset;
        return call(start);
    }

    Batch poll(int max) throws IOException {
        return poll(max, false);
    }

    Batch poll(int max, boolean restOfPoll) throws IOException {
        Wire.In reply = call(new Wire.Out(TaskHostMain.POLL).putInt(max).putLong(2_000)
                .putInt(restOfPoll ? 1 : 0));
        assertEquals(TaskHostMain.BATCH, reply.kind, () -> "not a batch: " + errorText(reply));
        long first = reply.getLong();
        int taken = reply.getInt();
        int n = reply.getInt();
        List<String> names = new ArrayList<>();
        for (int i = reply.getInt(); i > 0; i--) {
            names.add(reply.getString());
        }
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            topics.add(names.get(reply.getInt()));
        }
        int flags = reply.getInt();
        if ((flags & 8) != 0) {
            for (int i = 0; i < n; i++) {
                reply.getInt();
            }
        }
        if ((flags & 1) != 0) {
            for (int i = 0; i < n; i++) {
                reply.getInt();
            }
        }
        if ((flags & 2) != 0) {
            for (int i = 0; i < n; i++) {
                reply.getLong();
            }
        }
        int[] keyLengths = new int[n];
        for (int i = 0; i < n; i++) {
            keyLengths[i] = reply.getInt();
            assertEquals(-1, keyLengths[i], "the tasks' records have no key");
        }
        int[] valueLengths = new int[n];
        for (int i = 0; i < n; i++) {
            valueLengths[i] = reply.getInt();
        }
        List<String> values = new ArrayList<>();
        List<byte[]> rawValues = new ArrayList<>();
        for (int length : valueLengths) {
            rawValues.add(reply.getRaw(length));
            values.add(new String(rawValues.get(rawValues.size() - 1), StandardCharsets.UTF_8));
        }
        assertEquals(0, flags & 4, "no headers");
        List<String[]> offsets = new ArrayList<>();
        for (int p = reply.getInt(); p > 0; p--) {
            offsets.add(new String[] {reply.getString(), reply.getString()});
        }
        Map<Integer, String> schemas = new java.util.TreeMap<>();
        if ((flags & 16) != 0) {
            for (int s = reply.getInt(); s > 0; s--) {
                schemas.put(reply.getInt(), reply.getString());
            }
        }
        int requests = (flags & 32) != 0 ? reply.getInt() : 0;
        return new Batch(first, taken, topics, values, offsets, rawValues, schemas, requests,
                (flags & 64) != 0);
    }

    static String errorText(Wire.In reply) {
        return reply.kind == TaskHostMain.ERROR
                ? reply.getString() + ": " + reply.getString() : "kind " + reply.kind;
    }

    List<String> pollAll(int expected, int max, List<Batch> batches) throws IOException {
        List<String> values = new ArrayList<>();
        for (int polls = 0; values.size() < expected; polls++) {
            assertTrue(polls < 10, "only " + values + " after 10 polls");
            Batch batch = poll(max);
            assertTrue(batch.values().size() <= max, "a batch never holds more than asked");
            values.addAll(batch.values());
            batches.add(batch);
        }
        return values;
    }

    @Test
    void linesComeOutInBatchesAndResumeFromTheCommittedOffset() throws Exception {
        Path file = root.resolve("lines.txt");
        Files.writeString(file, "zero\none\ntwo\nthree\nfour\n");

        Wire.In started = startTask(file, null);
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        assertEquals(0, started.getInt(), "FileStreamSourceTask keeps commitRecord's default");

        List<Batch> batches = new ArrayList<>();
        assertEquals(List.of("zero", "one", "two", "three", "four"), pollAll(5, 3, batches));
        // asked by the task's first poll(), on the poll thread, while a POLL was open
        assertEquals(List.of("{\"filename\":\"" + file + "\"}"), queried);
        Batch last = batches.get(batches.size() - 1);
        assertEquals(List.of("lines"), last.topics().subList(0, 1));
        assertEquals(1, last.offsets().size(), "one source partition: its last offset only");
        assertEquals("{\"position\":" + Files.size(file) + "}", last.offsets().get(0)[1]);
        long seq = 0;
        for (Batch batch : batches) {
            assertEquals(seq, batch.firstSeq());
            seq += batch.taken();
        }

        // at the end of the file the task's poll() returns nothing: that ends a POLL's wait
        long asked = System.nanoTime();
        Wire.In idle = call(new Wire.Out(TaskHostMain.POLL).putInt(10).putLong(30_000).putInt(0));
        long idleMs = (System.nanoTime() - asked) / 1_000_000;
        assertEquals(TaskHostMain.BATCH, idle.kind);
        idle.getLong();
        assertEquals(0, idle.getInt(), "nothing new in the file");
        assertTrue(idleMs < 10_000, "an empty poll() ended the wait: " + idleMs + " ms");

        Wire.In committed = call(new Wire.Out(TaskHostMain.COMMITTED).putLong(seq - 1).putInt(0));
        assertEquals(TaskHostMain.OK, committed.kind, () -> errorText(committed));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);

        // a fresh task resumes from the committed offset: an Integer position would fail it
        Files.writeString(file, "five\n", java.nio.file.StandardOpenOption.APPEND);
        Wire.In restarted = startTask(file, "{\"position\":" + "zero\none\ntwo\n".length() + "}");
        assertEquals(TaskHostMain.OK, restarted.kind, () -> errorText(restarted));
        assertEquals(List.of("three", "four", "five"), pollAll(3, 10, new ArrayList<>()));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aClassNotFoundIsAnErrorNamingItAndThePluginPath() throws Exception {
        Wire.In reply = call(new Wire.Out(TaskHostMain.START_TASK).putString("com.example.Nope")
                .putMap(Map.of()).putMap(Map.of()).putInt(0));
        assertEquals(TaskHostMain.ERROR, reply.kind);
        assertEquals(ClassNotFoundException.class.getName(), reply.getString());
        String message = reply.getString();
        assertTrue(message.contains("com.example.Nope") && message.contains(pluginPath.toString()),
                message);
    }

    static final String AVRO = "io.confluent.connect.avro.AvroConverter";

    @Test
    void aConverterNeitherFoundNorStoodInForIsAnErrorNamingTheOptionClassAndPluginPath()
            throws Exception {
        Wire.In reply = call(new Wire.Out(TaskHostMain.START_TASK).putString(TASK)
                .putMap(Map.of("file", root.resolve("x.txt").toString(), "topic", "lines"))
                .putMap(Map.of("value.converter", "com.example.NoConverter"))
                .putInt(1).putString(AVRO));
        assertEquals(TaskHostMain.ERROR, reply.kind);
        reply.getString();
        String message = reply.getString();
        for (String named : List.of("value.converter=com.example.NoConverter",
                pluginPath.toString(), AVRO)) {
            assertTrue(message.contains(named), () -> named + " not in: " + message);
        }
    }

    @Test
    void aStoodInConverterHandsTheConnectDataOverWithEachSchemaOnce() throws Exception {
        Path file = root.resolve("lines.txt");
        Files.writeString(file, "zero\none\n");
        Wire.In started = call(new Wire.Out(TaskHostMain.START_TASK).putString(TASK)
                .putMap(Map.of("file", file.toString(), "topic", "lines"))
                .putMap(Map.of("value.converter", AVRO,
                        "value.converter.schema.registry.url", "http://registry:8081"))
                .putInt(1).putString(AVRO));
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        assertEquals(4, started.getInt(), "values handed over, keys not");

        Batch first = poll(1);
        assertEquals(Map.of(0, "{\"type\":\"string\",\"optional\":false}"), first.schemas());
        assertEquals("\u0000\u0000\u0000\u0000\"zero\"", first.values().get(0),
                "schema number 0, then the value as Connect's JsonConverter writes it");
        Batch second = poll(1);
        assertEquals(Map.of(), second.schemas(), "a schema goes over once");
        assertEquals("\u0000\u0000\u0000\u0000\"one\"", second.values().get(0));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void theConnectorSideSplitsTasks() throws Exception {
        String connector = "org.apache.kafka.connect.file.FileStreamSourceConnector";
        Map<String, String> config = Map.of("file", root.resolve("x.txt").toString(),
                "topic", "lines");
        Wire.In problems = call(new Wire.Out(TaskHostMain.VALIDATE).putString(connector)
                .putMap(Map.of("file", "x")));
        assertEquals(TaskHostMain.PROBLEMS, problems.kind, () -> errorText(problems));
        Map<String, Integer> messages = new java.util.TreeMap<>();
        for (int n = problems.getInt(); n > 0; n--) {
            String option = problems.getString();
            int k = problems.getInt();
            for (int i = 0; i < k; i++) {
                problems.getString();
            }
            messages.put(option, k);
        }
        assertEquals(Map.of("batch.size", 0, "file", 0, "topic", 1), messages,
                "every option the connector defines; only topic (missing) has a problem");

        Wire.In support = call(new Wire.Out(TaskHostMain.EXACTLY_ONCE_SUPPORT)
                .putString(connector).putMap(config));
        assertEquals("SUPPORTED", support.getString());

        Wire.In started = call(new Wire.Out(TaskHostMain.START_CONNECTOR).putInt(7)
                .putString(connector).putMap(config));
        assertEquals(TaskHostMain.TEXT, started.kind, () -> errorText(started));
        assertEquals(TASK, started.getString());
        Wire.In configs = call(new Wire.Out(TaskHostMain.TASK_CONFIGS).putInt(7).putInt(3));
        assertEquals(1, configs.getInt(), "FileStreamSourceConnector has one task");
        Map<String, String> taskConfig = configs.getMap();
        assertEquals("lines", taskConfig.get("topic"));
        assertNull(taskConfig.get("task.class"), "the Python side adds task.class, as Connect");
        assertEquals(TaskHostMain.OK,
                call(new Wire.Out(TaskHostMain.STOP_CONNECTOR).putInt(7)).kind);
    }

    Wire.In startScripted(Class<?> task, Map<String, String> connectorConfig)
            throws IOException {
        return call(new Wire.Out(TaskHostMain.START_TASK).putString(task.getName())
                .putMap(Map.of()).putMap(connectorConfig).putInt(0));
    }

    @Test
    void aBatchStoppingInsideAPollSaysSoAndTheRestOfThatPollComesAlone() throws Exception {
        ScriptedTasks.TwoPolls.bothPolled = new CountDownLatch(1);
        Wire.In started = startScripted(ScriptedTasks.TwoPolls.class, Map.of());
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        Batch first = poll(2);
        assertEquals(List.of("a0", "a1"), first.values());
        assertTrue(first.midPoll(), "a2 of the same poll waits in the host");
        assertTrue(ScriptedTasks.TwoPolls.bothPolled.await(10, TimeUnit.SECONDS));
        Batch rest = poll(10, true);
        assertEquals(List.of("a2"), rest.values(), "the rest of that poll, not the next one's");
        assertFalse(rest.midPoll());
        Batch next = poll(10);
        assertEquals(List.of("b0", "b1"), next.values());
        assertFalse(next.midPoll());
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aRetriableExceptionInPollIsRetried() throws Exception {
        Wire.In started = startScripted(ScriptedTasks.Flaky.class, Map.of());
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        assertEquals(List.of("after a retry"), pollAll(1, 10, new ArrayList<>()));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aFailingPollIsAnErrorWithTheTasksTrace() throws Exception {
        startScripted(ScriptedTasks.Failing.class, Map.of());
        Wire.In reply = call(new Wire.Out(TaskHostMain.POLL).putInt(10).putLong(5_000).putInt(0));
        assertEquals(TaskHostMain.ERROR, reply.kind);
        reply.getString();
        String message = reply.getString();
        String trace = reply.getString();
        assertTrue(message.contains("the source is gone"), message);
        assertTrue(trace.contains("ScriptedTasks$Failing.poll"), trace);
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aTaskThrowingInStartIsAnErrorWithItsTraceAndTheNextTaskStarts() throws Exception {
        Wire.In reply = startScripted(ScriptedTasks.FailingStart.class, Map.of());
        assertEquals(TaskHostMain.ERROR, reply.kind);
        assertEquals(IllegalStateException.class.getName(), reply.getString());
        assertEquals("cannot start", reply.getString());
        String trace = reply.getString();
        assertTrue(trace.contains("ScriptedTasks$FailingStart.start"), trace);
        Wire.In next = startScripted(ScriptedTasks.Flaky.class, Map.of());
        assertEquals(TaskHostMain.OK, next.kind, () -> "no task runs: " + errorText(next));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aStartedConnectorsOwnOffsetReaderIsAnsweredForThatConnector() throws Exception {
        for (int handle : new int[] {3, 4}) {
            Wire.In started = call(new Wire.Out(TaskHostMain.START_CONNECTOR).putInt(handle)
                    .putString(OffsetReadingConnector.class.getName())
                    .putMap(Map.of("file", "f" + handle)));
            assertEquals(TaskHostMain.TEXT, started.kind, () -> errorText(started));
        }
        for (int handle : new int[] {4, 3}) {
            Wire.In configs = call(new Wire.Out(TaskHostMain.TASK_CONFIGS).putInt(handle)
                    .putInt(1));
            assertEquals(TaskHostMain.CONFIGS, configs.kind, () -> errorText(configs));
            assertEquals(1, configs.getInt());
            Map<String, String> config = configs.getMap();
            assertEquals("{position=" + handle * 100 + "}", config.get("seen"),
                    "asked with the connector's handle");
            assertEquals("Long", config.get("type"), "Connect's JSON types");
        }
        assertEquals(List.of("{\"file\":\"f4\"}", "{\"file\":\"f3\"}"), queried);
    }

    static final String CAST = "org.apache.kafka.connect.transforms.Cast$Value";

    /** The lines of {@code file} cast to int32, then converted by {@code converter}. */
    Wire.In startNumbers(Path file, String lines, String tolerance, String converter)
            throws IOException {
        Files.writeString(file, lines);
        return call(new Wire.Out(TaskHostMain.START_TASK).putString(TASK)
                .putMap(Map.of("file", file.toString(), "topic", "lines"))
                .putMap(Map.of("transforms", "toNumber", "transforms.toNumber.type", CAST,
                        "transforms.toNumber.spec", "int32", "value.converter", converter,
                        "errors.tolerance", tolerance))
                .putInt(0));
    }

    @Test
    void underToleranceAllARecordATransformOrConverterFailsOnIsSkippedItsOffsetTaken()
            throws Exception {
        Path file = root.resolve("numbers.txt");
        Wire.In started = startNumbers(file, "1\nx\n3\n4\n", "all",
                ScriptedTasks.RefusingThree.class.getName());
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        List<Batch> batches = new ArrayList<>();
        int taken = 0;
        List<String> values = new ArrayList<>();
        while (taken < 4) {
            assertTrue(batches.size() < 10, "only " + taken + " records after 10 polls");
            Batch batch = poll(10);
            batches.add(batch);
            taken += batch.taken();
            values.addAll(batch.values());
        }
        assertEquals(List.of("1", "4"), values, "x fails the cast, 3 the converter");
        Batch last = batches.get(batches.size() - 1);
        assertEquals("{\"position\":" + Files.size(file) + "}", last.offsets().get(0)[1],
                "the skipped records' offsets are taken too");
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void underToleranceNoneTheStageClassAndRecordAreNamed() throws Exception {
        Path file = root.resolve("numbers.txt");
        String[][] cases = {
            {"1\nx\n3\n", "org.apache.kafka.connect.storage.StringConverter",
                "stage TRANSFORMATION with class " + CAST + " (transforms.toNumber) failed on "
                        + "the record of topic lines, source partition {filename=" + file
                        + "}, source offset {position=4} (errors.tolerance=none): "
                        + "org.apache.kafka.connect.errors.DataException: Value (x) was out of "
                        + "range"},
            {"1\n2\n3\n", ScriptedTasks.RefusingThree.class.getName(),
                "stage VALUE_CONVERTER with class " + ScriptedTasks.RefusingThree.class.getName()
                        + " failed on the record of topic lines, source partition {filename="
                        + file + "}, source offset {position=6} (errors.tolerance=none): "
                        + "org.apache.kafka.connect.errors.DataException: 3 is refused"},
        };
        for (String[] failing : cases) {
            Wire.In started = startNumbers(file, failing[0], "none", failing[1]);
            assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
            Wire.In reply = call(new Wire.Out(TaskHostMain.POLL).putInt(1).putLong(5_000)
                    .putInt(0));
            for (int polls = 0; reply.kind == TaskHostMain.BATCH; polls++) {
                assertTrue(polls < 10, "no error after 10 polls");
                reply = call(new Wire.Out(TaskHostMain.POLL).putInt(1).putLong(5_000).putInt(0));
            }
            assertEquals(TaskHostMain.ERROR, reply.kind);
            assertEquals("org.apache.kafka.connect.errors.ConnectException", reply.getString());
            String message = reply.getString();
            assertTrue(message.startsWith("Tolerance exceeded in error handler: " + failing[2]),
                    message);
            assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
        }
    }

    @Test
    void stopIsNotStuckBehindABlockingPoll() throws Exception {
        startScripted(ScriptedTasks.Blocking.class, Map.of());
        Batch empty = poll(10);
        assertEquals(0, empty.taken(), "the blocked poll gives an empty batch after the wait");
        long started = System.nanoTime();
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
        long tookMs = (System.nanoTime() - started) / 1_000_000;
        assertTrue(tookMs < 4_000, "stop took " + tookMs + " ms");
    }

    @Test
    void transformsAndConvertersRunAsConfigured() throws Exception {
        Path file = root.resolve("lines.txt");
        Files.writeString(file, "zero\none\n");
        Wire.In started = call(new Wire.Out(TaskHostMain.START_TASK).putString(TASK)
                .putMap(Map.of("file", file.toString(), "topic", "lines"))
                .putMap(Map.of(
                        "transforms", "hoist, rename",
                        "transforms.hoist.type", "org.apache.kafka.connect.transforms.HoistField$Value",
                        "transforms.hoist.field", "line",
                        "transforms.rename.type", "org.apache.kafka.connect.transforms.RegexRouter",
                        "transforms.rename.regex", "lines",
                        "transforms.rename.replacement", "renamed",
                        "value.converter", "org.apache.kafka.connect.json.JsonConverter",
                        "value.converter.schemas.enable", "false")).putInt(0));
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        List<Batch> batches = new ArrayList<>();
        assertEquals(List.of("{\"line\":\"zero\"}", "{\"line\":\"one\"}"),
                pollAll(2, 10, batches));
        assertEquals(List.of("renamed"), batches.get(0).topics().subList(0, 1));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void connectorDefinedTransactionsEndBatchesAndCarryTheRequests() throws Exception {
        ScriptedTasks.Transactional.COMMITTED.clear();
        Wire.In started = startScripted(ScriptedTasks.Transactional.class,
                Map.of("transaction.boundary", "connector"));
        assertEquals(TaskHostMain.OK, started.kind, () -> errorText(started));
        assertEquals(1, started.getInt(), "the task overrides commitRecord");

        Batch first = poll(10);
        assertEquals(List.of("r0", "r1"), first.values(), "a batch ends at a request");
        assertEquals(1, first.requests(), "commit on its last record");
        assertEquals("{\"position\":1}", first.offsets().get(0)[1]);
        call(new Wire.Out(TaskHostMain.COMMITTED).putLong(1).putInt(0));
        Batch second = poll(10);
        assertEquals(List.of("r2", "r3"), second.values());
        assertEquals(2, second.requests(), "abort on its last record");
        Batch third = poll(1);
        assertEquals(List.of("r4"), third.values(), "the POLL's limit");
        assertEquals(0, third.requests());
        assertTrue(third.midPoll(), "r5 of the same poll waits in the host");
        Batch fourth = poll(10);
        assertEquals(List.of("r5"), fourth.values());
        assertFalse(fourth.midPoll());
        assertEquals(1 | 1 << 2, fourth.requests(), "commit on the record, then after the poll");
        call(new Wire.Out(TaskHostMain.COMMITTED).putLong(5).putInt(0));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
        assertEquals(List.of(0L, 1L, 4L, 5L), ScriptedTasks.Transactional.COMMITTED,
                "the aborted transaction's records get no commitRecord");
    }

    @Test
    void eachBatchRequestStaysWithItsPollThoughThePollThreadReadsAhead() throws Exception {
        startScripted(ScriptedTasks.BatchRequests.class, Map.of("transaction.boundary", "connector"));
        Thread.sleep(300); // the poll thread has polled all five by now
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Batch batch = poll(10);
            seen.add(batch.values() + ":" + (batch.requests() >> 2));
        }
        assertEquals(List.of("[p1]:1", "[p2]:2", "[p3]:1", "[]:1", "[p5]:0"), seen,
                "commit, abort, commit; the empty poll's commit at once, in a batch of its own");
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void withoutConnectorBoundariesATaskHasNoTransactionContext() throws Exception {
        startScripted(ScriptedTasks.Transactional.class, Map.of("transaction.boundary", "poll"));
        Batch batch = poll(10);
        assertEquals(List.of("no context"), batch.values());
        assertEquals(0, batch.requests());
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aCommitAndAnAbortOfOneRecordFailThePoll() throws Exception {
        startScripted(ScriptedTasks.Conflicted.class, Map.of("transaction.boundary", "connector"));
        Wire.In reply = call(new Wire.Out(TaskHostMain.POLL).putInt(10).putLong(5_000).putInt(0));
        assertEquals(TaskHostMain.ERROR, reply.kind);
        assertEquals(IllegalStateException.class.getName(), reply.getString());
        assertTrue(reply.getString().contains("both commit and abort"));
        assertEquals(TaskHostMain.OK, call(new Wire.Out(TaskHostMain.STOP_TASK)).kind);
    }

    @Test
    void aConnectorSaysWhetherItCanDefineTransactionBoundaries() throws Exception {
        Wire.In file = call(new Wire.Out(TaskHostMain.TRANSACTION_BOUNDARIES)
                .putString("org.apache.kafka.connect.file.FileStreamSourceConnector")
                .putMap(Map.of()));
        assertEquals(TaskHostMain.TEXT, file.kind, () -> errorText(file));
        assertEquals("UNSUPPORTED", file.getString(), "Connect's default");
        Wire.In signalling = call(new Wire.Out(TaskHostMain.TRANSACTION_BOUNDARIES)
                .putString(SignallingConnector.class.getName()).putMap(Map.of()));
        assertEquals("SUPPORTED", signalling.getString());
    }

    @Test
    void aConnectorsRequestsAndErrorsAreReportedOnce() throws Exception {
        Wire.In started = call(new Wire.Out(TaskHostMain.START_CONNECTOR).putInt(3)
                .putString(SignallingConnector.class.getName()).putMap(Map.of()));
        assertEquals(TaskHostMain.TEXT, started.kind, () -> errorText(started));
        Wire.In events = call(new Wire.Out(TaskHostMain.CONNECTOR_EVENTS).putInt(3));
        assertEquals(1, events.getInt(), "a task reconfiguration was requested");
        String trace = events.getString();
        assertTrue(trace.contains("the source went away"), trace);
        Wire.In again = call(new Wire.Out(TaskHostMain.CONNECTOR_EVENTS).putInt(3));
        assertEquals(0, again.getInt());
        assertNull(again.getString());
        assertEquals(TaskHostMain.OK,
                call(new Wire.Out(TaskHostMain.STOP_CONNECTOR).putInt(3)).kind);
    }

    static final String FILE_CONNECTOR = "org.apache.kafka.connect.file.FileStreamSourceConnector";

    /** ALTER_OFFSETS of {@code connector} with {@code pairs}: partition JSON, offset JSON. */
    Wire.In alterOffsets(String connector, String... pairs) throws IOException {
        Wire.Out request = new Wire.Out(TaskHostMain.ALTER_OFFSETS).putString(connector)
                .putMap(Map.of("topic", "t", "file", "/data/in.txt")).putInt(pairs.length / 2);
        for (String text : pairs) {
            request.putString(text);
        }
        return call(request);
    }

    @Test
    void alterOffsetsGivesTheConnectorConnectsJsonTypesAndItsAnswer() throws Exception {
        // FileStreamSourceConnector accepts only a Long position: an int read back as a Long
        Wire.In accepted = alterOffsets(FILE_CONNECTOR,
                "{\"filename\":\"/data/in.txt\"}", "{\"position\":5}",
                "{\"filename\":\"/data/old.txt\"}", null);
        assertEquals(TaskHostMain.OK, accepted.kind, () -> errorText(accepted));
        assertEquals(1, accepted.getInt(), "the file connector handles its offsets");
        Wire.In byDefault = alterOffsets(SignallingConnector.class.getName(),
                "{\"p\":1}", "{\"o\":2}");
        assertEquals(TaskHostMain.OK, byDefault.kind, () -> errorText(byDefault));
        assertEquals(0, byDefault.getInt(), "Connect's default alterOffsets returns false");
    }

    @Test
    void alterOffsetsRefusedByTheConnectorIsAnErrorWithItsMessage() throws Exception {
        String[][] refused = {
            {"{\"filename\":\"/data/in.txt\"}", "{\"position\":-1}", "non-negative"},
            {"{\"filename\":\"/data/in.txt\"}", "{\"position\":\"5\"}", "Long value"},
            {"{\"file\":\"/data/in.txt\"}", "{\"position\":5}", "'filename'"},
        };
        for (String[] bad : refused) {
            Wire.In reply = alterOffsets(FILE_CONNECTOR, bad[0], bad[1]);
            assertEquals(TaskHostMain.ERROR, reply.kind, bad[1]);
            assertEquals("org.apache.kafka.connect.errors.ConnectException", reply.getString());
            String message = reply.getString();
            assertTrue(message.contains(bad[2]), message);
        }
    }
}
