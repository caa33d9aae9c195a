package io.github.sparkeosconnect.taskhost;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM task host: runs Kafka Connect Java plugins found on a {@code plugin.path} for a
 * Python process, which drives it over the host's stdin and stdout. The arguments are the
 * {@code plugin.path} entries; stderr is the host's log; the host exits when stdin closes.
 *
 * <h2>Protocol</h2>
 * Every frame is an unsigned 32-bit little-endian length N, then N bytes: one kind byte and
 * the kind's fields. Fields: {@code i32}, {@code i64} little-endian; {@code str} and
 * {@code bytes} an i32 length (-1: null) then UTF-8 text or the bytes; {@code map} an i32
 * count then that many (str key, str value).
 *
 * <p>The Python side sends requests one at a time; each gets exactly one reply, in order, and
 * any request may be answered {@code ERROR(str exception class, str message, str stack
 * trace)} instead. While a request is open the host may send {@code QUERY(i32 n, n × str source
 * partition JSON)}, which the Python side answers with {@code ANSWER(i32 n, n × str offset
 * JSON, null for none)} before it reads on: the task's {@code OffsetStorageReader} asking for
 * committed offsets (a QUERY from the poll thread waits for the next request). A started
 * connector's own reader (its {@code SourceConnectorContext}'s) asks with {@code
 * CONNECTOR_QUERY(i32 handle, i32 n, n × str source partition JSON)}, answered the same way
 * from that connector's offsets, whichever request is open (its own threads may ask at any
 * time); one query is open at a time. JSON texts are Connect's schemaless JSON
 * ({@link OffsetJson}).
 *
 * <table>
 * <caption>Requests and their replies</caption>
 * <tr><th>kind</th><th>request fields</th><th>reply</th></tr>
 * <tr><td>1 START_TASK</td><td>str task class, map task config, map connector config
 * (converters, transforms, errors.tolerance, and {@code transaction.boundary} when it is
 * {@code connector}: then the task's context has a TransactionContext), i32 k, k × str
 * converter class the Python side converts itself (its stand-ins)</td><td>OK(i32 flags: 1 =
 * the task overrides commitRecord, 2 = keys and 4 = values handed over)</td></tr>
 * <tr><td>2 POLL</td><td>i32 max records, i64 wait ms, i32 1: only the rest of the
 * {@code poll()} the last BATCH stopped in (else 0)</td><td>BATCH</td></tr>
 * <tr><td>3 COMMITTED</td><td>i64 through seq, i32 m, m × (i64 seq, i32 Kafka partition, i64
 * Kafka offset)</td><td>OK(i32 0)</td></tr>
 * <tr><td>4 STOP_TASK</td><td>-</td><td>OK(i32 0)</td></tr>
 * <tr><td>10 VALIDATE</td><td>str connector class, map config</td><td>PROBLEMS(i32 n, n ×
 * (str option, i32 k, k × str message)): every option the connector defines, k = 0 when it
 * is valid, then those of the transforms and predicates whose classes a plugin holds</td></tr>
 * <tr><td>11 EXACTLY_ONCE_SUPPORT</td><td>str connector class, map config</td><td>TEXT(str:
 * SUPPORTED, UNSUPPORTED or null)</td></tr>
 * <tr><td>12 START_CONNECTOR</td><td>i32 handle, str connector class, map config</td>
 * <td>TEXT(str task class)</td></tr>
 * <tr><td>13 TASK_CONFIGS</td><td>i32 handle, i32 max tasks</td><td>CONFIGS(i32 n, n ×
 * map)</td></tr>
 * <tr><td>14 STOP_CONNECTOR</td><td>i32 handle</td><td>OK(i32 0)</td></tr>
 * <tr><td>15 CONNECTOR_EVENTS</td><td>i32 handle</td><td>OK(i32 flags: 1 = the connector
 * requested a task reconfiguration, str stack trace of an error it raised, or null), each
 * event reported once</td></tr>
 * <tr><td>16 CONNECTOR_PLUGINS</td><td>-</td><td>CONFIGS(i32 n, n × map {class, type:
 * source or sink, version}): the connectors of the plugin.path ({@link ConnectorCatalog})</td>
 * </tr>
 * <tr><td>17 CONFIG_INFOS</td><td>str connector class, map config</td><td>TEXT(str JSON: the
 * connector's own part of Connect's ConfigInfos, {@link ConnectorConfigInfos}); the class may
 * be a source or a sink connector</td></tr>
 * <tr><td>18 TRANSACTION_BOUNDARIES</td><td>str connector class, map config</td><td>TEXT(str:
 * the connector's canDefineTransactionBoundaries, SUPPORTED, UNSUPPORTED or null)</td></tr>
 * <tr><td>19 ALTER_OFFSETS</td><td>str connector class, map config, i32 n, n × (str source
 * partition JSON, str offset JSON, null for a partition being reset)</td><td>OK(i32 1 = the
 * connector's alterOffsets returned true, 0 = false); ERROR when it refuses them (its
 * exception)</td></tr>
 * </table>
 *
 * <p>Reply kinds: 100 OK, 101 ERROR, 102 BATCH, 103 PROBLEMS, 104 CONFIGS, 105 TEXT; 110 QUERY,
 * 112 CONNECTOR_QUERY and 111 ANSWER as above.
 *
 * <p>BATCH holds the records the task polled since the last POLL, at most the asked number
 * (a POLL waits for the first until its wait ends or the task's {@code poll()} returns nothing),
 * each with a sequence number (consecutive from {@code first seq}, across batches):
 * {@code i64 first seq, i32 taken (records taken from the task), i32 n (records to produce:
 * those a transform did not drop), i32 t, t × str topic, n × i32 topic index, i32 flags
 * (1: partitions, 2: timestamps, 4: headers, 8: some records dropped, 64: the batch stops
 * inside a {@code poll()}, whose other records the next POLL takes), [flag 8: n × i32
 * position among the taken], [1: n × i32 Kafka partition, -1 none], [2: n × i64 timestamp,
 * -1 none], n × i32 key length (-1 null), the keys' bytes, n × i32 value length, the values'
 * bytes, [4: per record i32 h, h × (str name, bytes value)], i32 p, p × (str source partition
 * JSON, str source offset JSON), [16: i32 s, s × (i32 schema number, str schema JSON)],
 * [32: i32 requests]}: the last offset of each source partition among the taken records, in
 * the order of those records, then the schemas numbered for this batch's handed-over keys and
 * values, then the task's transaction requests that end the batch (connector-defined
 * boundaries, {@link HostedTransactionContext}): bits 0-1 the one on its last taken record,
 * bits 2-3 the one for the {@code poll()} whose last record that is, each 1 = commit, 2 =
 * abort. A batch ends at the first request, so its records all belong to the transaction the
 * request ends, and the Python side applies the record's request, then the poll's.
 *
 * <p>Hand-over: a key or value converter the plugins and the host lack but START_TASK lists
 * is the Python side's to run. That column's bytes are then the record's Connect data ({@link
 * HandOverConverter}): an i32 schema number (-1: none), then the value as Connect's
 * JsonConverter writes it under that schema without envelope; each schema's JsonConverter
 * envelope schema comes once, flag 16, in the batch that first numbers it (numbers count from
 * 0 for each task started). COMMITTED tells the host that the records up to a
 * sequence number (the last of a batch) are committed in Kafka (the Kafka metadata of those
 * sent is given only when the task overrides commitRecord): the task gets {@code commitRecord}
 * for each (when it overrides it; the default does nothing), then {@code commit()}; until
 * then the host keeps only the batch's last offsets (and, for such a task, its records). The
 * records of a transaction a batch's request aborts (those since the last commit request) are
 * forgotten as that batch is handed out: no later COMMITTED commits them. A host runs one task at a time (START_TASK after STOP_TASK starts the next)
 * and any number of connectors, named by handles the Python side picks.
 */
public final class TaskHostMain {

    static final int START_TASK = 1;
    static final int POLL = 2;
    static final int COMMITTED = 3;
    static final int STOP_TASK = 4;
    static final int VALIDATE = 10;
    static final int EXACTLY_ONCE_SUPPORT = 11;
    static final int START_CONNECTOR = 12;
    static final int TASK_CONFIGS = 13;
    static final int STOP_CONNECTOR = 14;
    static final int CONNECTOR_EVENTS = 15;
    static final int CONNECTOR_PLUGINS = 16;
    static final int CONFIG_INFOS = 17;
    static final int TRANSACTION_BOUNDARIES = 18;
    static final int ALTER_OFFSETS = 19;
    static final int OK = 100;
    static final int ERROR = 101;
    static final int BATCH = 102;
    static final int PROBLEMS = 103;
    static final int CONFIGS = 104;
    static final int TEXT = 105;
    static final int QUERY = 110;
    static final int ANSWER = 111;
    static final int CONNECTOR_QUERY = 112;

    private static final Logger log = LoggerFactory.getLogger(TaskHostMain.class);
    private static final byte[] END = new byte[0];

    private final Plugins plugins;
    private final Exception pluginsError;
    private final InputStream in;
    private final OutputStream out;
    private final LinkedBlockingQueue<byte[]> requests = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<byte[]> answers = new LinkedBlockingQueue<>();
    private final OffsetJson json = new OffsetJson();
    private final Map<Integer, HostedConnector> connectors = new HashMap<>();
    private final HostedOffsetReader connectorOffsets = new HostedOffsetReader(json, this::query);
    private volatile boolean ended;
    private HostedSourceTask task;

    /** A host over {@code in}/{@code out} with the plugins of {@code pluginPath}; a plugin.path
     * that cannot be scanned fails every request with its error. */
    public TaskHostMain(List<Path> pluginPath, InputStream in, OutputStream out) {
        Plugins scanned = null;
        Exception error = null;
        try {
            scanned = new Plugins(pluginPath, TaskHostMain.class.getClassLoader());
        } catch (IOException scanFailed) {
            error = scanFailed;
        }
        this.plugins = scanned;
        this.pluginsError = error;
        this.in = in;
        this.out = out;
    }

    /** Runs the host on stdin/stdout; arguments: the plugin.path entries. */
    public static void main(String[] args) {
        OutputStream protocol = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out),
                1 << 16);
        System.setOut(System.err); // a plugin printing must not corrupt the protocol
        List<Path> entries = new ArrayList<>();
        for (String arg : args) {
            entries.add(Path.of(arg));
        }
        InputStream input = new BufferedInputStream(new FileInputStream(FileDescriptor.in), 1 << 16);
        new TaskHostMain(entries, input, protocol).run();
        System.exit(0);
    }

    /** Serves requests until the input ends, then stops what still runs. */
    public void run() {
        Thread reader = new Thread(this::readFrames, "task-host-reader");
        reader.setDaemon(true);
        reader.start();
        try {
            while (true) {
                byte[] frame = requests.take();
                if (frame == END) {
                    break;
                }
                Wire.In request = new Wire.In(frame);
                Wire.Out reply;
                try {
                    reply = serve(request);
                } catch (Throwable error) {
                    reply = error(error);
                }
                send(reply);
            }
        } catch (InterruptedException | IOException stopped) {
            log.info("task host stopping: {}", stopped.toString());
        } finally {
            shutDown();
        }
    }

    private void readFrames() {
        try {
            byte[] frame;
            while ((frame = Wire.readFrame(in)) != null) {
                if (frame.length > 0 && (frame[0] & 0xff) == ANSWER) {
                    answers.put(frame);
                } else {
                    requests.put(frame);
                }
            }
        } catch (IOException | InterruptedException error) {
            log.warn("reading requests failed: {}", error.toString());
        } finally {
            ended = true;
            requests.add(END);
        }
    }

    private synchronized void send(Wire.Out frame) throws IOException {
        frame.writeTo(out);
        out.flush();
    }

    private List<String> query(List<String> partitions) throws IOException {
        return ask(new Wire.Out(QUERY), partitions);
    }

    private List<String> connectorQuery(int handle, List<String> partitions) throws IOException {
        return ask(new Wire.Out(CONNECTOR_QUERY).putInt(handle), partitions);
    }

    /** Sends {@code frame} with {@code partitions} and waits for its ANSWER; one at a time, so
     * that each answer reaches the thread that asked. */
    private List<String> ask(Wire.Out frame, List<String> partitions) throws IOException {
        synchronized (answers) {
            frame.putInt(partitions.size());
            for (String partition : partitions) {
                frame.putString(partition);
            }
            send(frame);
            return awaitAnswer();
        }
    }

    private List<String> awaitAnswer() throws IOException {
        try {
            byte[] answer;
            while ((answer = answers.poll(1, TimeUnit.SECONDS)) == null) {
                if (ended) {
                    throw new IOException("the Python side went away before answering");
                }
            }
            Wire.In reply = new Wire.In(answer);
            int n = reply.getInt();
            List<String> offsets = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                offsets.add(reply.getString());
            }
            return offsets;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for committed offsets");
        }
    }

    private Wire.Out serve(Wire.In request) throws Exception {
        if (pluginsError != null) {
            throw pluginsError;
        }
        switch (request.kind) {
            case START_TASK -> {
                if (task != null) {
                    throw new IllegalStateException("a task is running; STOP_TASK it first");
                }
                String taskClass = request.getString();
                Map<String, String> taskConfig = request.getMap();
                Map<String, String> connectorConfig = request.getMap();
                Set<String> standIns = new HashSet<>();
                for (int k = request.getInt(); k > 0; k--) {
                    standIns.add(request.getString());
                }
                HostedSourceTask starting = new HostedSourceTask(plugins, taskClass, taskConfig,
                        connectorConfig, standIns, json, this::query);
                starting.start();
                task = starting;
                return new Wire.Out(OK).putInt(task.startFlags());
            }
            case POLL -> {
                return running().poll(request.getInt(), request.getLong(),
                        request.getInt() != 0);
            }
            case COMMITTED -> {
                long through = request.getLong();
                int m = request.getInt();
                Map<Long, long[]> metadata = new HashMap<>();
                for (int i = 0; i < m; i++) {
                    long seq = request.getLong();
                    metadata.put(seq, new long[] {request.getInt(), request.getLong()});
                }
                running().committed(through, metadata);
                return new Wire.Out(OK).putInt(0);
            }
            case STOP_TASK -> {
                HostedSourceTask stopping = task;
                task = null;
                if (stopping != null) {
                    stopping.stop();
                }
                return new Wire.Out(OK).putInt(0);
            }
            case VALIDATE -> {
                HostedConnector connector = HostedConnector.create(plugins, request.getString(),
                        connectorOffsets);
                Map<String, List<String>> problems = connector.validate(plugins,
                        request.getMap());
                Wire.Out reply = new Wire.Out(PROBLEMS).putInt(problems.size());
                for (Map.Entry<String, List<String>> entry : problems.entrySet()) {
                    reply.putString(entry.getKey()).putInt(entry.getValue().size());
                    for (String message : entry.getValue()) {
                        reply.putString(message);
                    }
                }
                return reply;
            }
            case EXACTLY_ONCE_SUPPORT -> {
                HostedConnector connector = HostedConnector.create(plugins, request.getString(),
                        connectorOffsets);
                return new Wire.Out(TEXT).putString(connector.exactlyOnceSupport(request.getMap()));
            }
            case TRANSACTION_BOUNDARIES -> {
                HostedConnector connector = HostedConnector.create(plugins, request.getString(),
                        connectorOffsets);
                return new Wire.Out(TEXT).putString(
                        connector.transactionBoundaries(request.getMap()));
            }
            case ALTER_OFFSETS -> {
                HostedConnector connector = HostedConnector.create(plugins, request.getString(),
                        connectorOffsets);
                Map<String, String> config = request.getMap();
                Map<Map<String, ?>, Map<String, ?>> offsets = new LinkedHashMap<>();
                for (int n = request.getInt(); n > 0; n--) {
                    Map<String, Object> partition = json.read(request.getString());
                    if (partition == null) {
                        throw new IllegalArgumentException("a source partition cannot be null");
                    }
                    offsets.put(partition, json.read(request.getString()));
                }
                boolean handled = connector.alterOffsets(config, offsets);
                return new Wire.Out(OK).putInt(handled ? 1 : 0);
            }
            case START_CONNECTOR -> {
                int handle = request.getInt();
                HostedOffsetReader offsets = new HostedOffsetReader(json,
                        partitions -> connectorQuery(handle, partitions));
                HostedConnector connector = HostedConnector.create(plugins, request.getString(),
                        offsets);
                connector.start(request.getMap());
                connectors.put(handle, connector);
                return new Wire.Out(TEXT).putString(connector.taskClass());
            }
            case TASK_CONFIGS -> {
                HostedConnector connector = connector(request.getInt());
                List<Map<String, String>> configs = connector.taskConfigs(request.getInt());
                Wire.Out reply = new Wire.Out(CONFIGS).putInt(configs.size());
                for (Map<String, String> config : configs) {
                    reply.putMap(config);
                }
                return reply;
            }
            case STOP_CONNECTOR -> {
                HostedConnector connector = connectors.remove(request.getInt());
                if (connector != null) {
                    connector.stop();
                }
                return new Wire.Out(OK).putInt(0);
            }
            case CONNECTOR_EVENTS -> {
                HostedConnector connector = connector(request.getInt());
                int flags = connector.takeReconfigurationRequest() ? 1 : 0;
                Exception raised = connector.takeRaisedError();
                String trace = null;
                if (raised != null) {
                    StringWriter written = new StringWriter();
                    raised.printStackTrace(new PrintWriter(written));
                    trace = written.toString();
                }
                return new Wire.Out(OK).putInt(flags).putString(trace);
            }
            case CONNECTOR_PLUGINS -> {
                List<ConnectorCatalog.Entry> found = ConnectorCatalog.connectors(plugins);
                Wire.Out reply = new Wire.Out(CONFIGS).putInt(found.size());
                for (ConnectorCatalog.Entry entry : found) {
                    reply.putMap(Map.of("class", entry.className(), "type", entry.type(),
                            "version", entry.version()));
                }
                return reply;
            }
            case CONFIG_INFOS -> {
                String className = request.getString();
                return new Wire.Out(TEXT).putString(
                        ConnectorConfigInfos.of(plugins, className, request.getMap()));
            }
            default -> throw new IllegalArgumentException("unknown request kind " + request.kind);
        }
    }

    private HostedSourceTask running() {
        if (task == null) {
            throw new IllegalStateException("no task is running");
        }
        return task;
    }

    private HostedConnector connector(int handle) {
        HostedConnector connector = connectors.get(handle);
        if (connector == null) {
            throw new IllegalStateException("no connector has handle " + handle);
        }
        return connector;
    }

    private static Wire.Out error(Throwable error) {
        StringWriter trace = new StringWriter();
        error.printStackTrace(new PrintWriter(trace));
        Throwable root = error;
        StringBuilder message = new StringBuilder(String.valueOf(error.getMessage()));
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
            message.append(": ").append(root);
        }
        return new Wire.Out(ERROR).putString(error.getClass().getName())
                .putString(message.toString()).putString(trace.toString());
    }

    private void shutDown() {
        if (task != null) {
            try {
                task.stop();
            } catch (Exception error) {
                log.warn("stopping the task failed: {}", error.toString());
            }
        }
        for (HostedConnector connector : connectors.values()) {
            try {
                connector.stop();
            } catch (Exception error) {
                log.warn("stopping a connector failed: {}", error.toString());
            }
        }
    }
}
