package io.github.sparkeosconnect.taskhost;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.connect.errors.RetriableException;

/**
 * A connector's {@code errors.*} options as a Connect worker applies them to the stages of a
 * source record (transforms, predicates, converters): an operation that throws
 * {@link RetriableException} is tried again for up to {@code errors.retry.timeout} ms (-1:
 * without end, 0: never), waiting 300 ms and doubling per try, a random wait below
 * {@code errors.retry.delay.max.ms} once past it, never beyond the deadline; then tolerance
 * ({@code errors.tolerance}) and logging ({@code errors.log.enable},
 * {@code errors.log.include.messages}) decide. The options arrive checked by the Python side.
 */
final class ErrorHandling {

    /** The first wait between two tries (Connect's {@code RETRIES_DELAY_MIN_MS}). */
    static final long MIN_DELAY_MS = 300;

    /** Waits between tries; a test's records the waits instead. */
    @FunctionalInterface
    interface Sleeper {
        /** Waits {@code millis} ms. */
        void sleep(long millis) throws InterruptedException;
    }

    /** Reads the clock in ms. */
    @FunctionalInterface
    interface Clock {
        /** Now, in ms. */
        long millis();
    }

    final boolean tolerateAll;
    final long retryTimeoutMs;
    final long retryMaxDelayMs;
    final boolean logErrors;
    final boolean logMessages;
    private final Clock clock;
    private final Sleeper sleeper;

    ErrorHandling(boolean tolerateAll, long retryTimeoutMs, long retryMaxDelayMs,
            boolean logErrors, boolean logMessages, Clock clock, Sleeper sleeper) {
        this.tolerateAll = tolerateAll;
        this.retryTimeoutMs = retryTimeoutMs;
        this.retryMaxDelayMs = retryMaxDelayMs;
        this.logErrors = logErrors;
        this.logMessages = logMessages;
        this.clock = clock;
        this.sleeper = sleeper;
    }

    /** The handling a connector's options ask for (Connect's defaults for those not given). */
    static ErrorHandling of(Map<String, String> config) {
        return of(config, System::currentTimeMillis, Thread::sleep);
    }

    /** As {@link #of(Map)}, with the clock and the waits given (tests). */
    static ErrorHandling of(Map<String, String> config, Clock clock, Sleeper sleeper) {
        return new ErrorHandling(
                "all".equalsIgnoreCase(config.getOrDefault("errors.tolerance", "none").trim()),
                Long.parseLong(config.getOrDefault("errors.retry.timeout", "0").trim()),
                Long.parseLong(config.getOrDefault("errors.retry.delay.max.ms", "60000").trim()),
                Boolean.parseBoolean(config.getOrDefault("errors.log.enable", "false").trim()),
                Boolean.parseBoolean(
                        config.getOrDefault("errors.log.include.messages", "false").trim()),
                clock, sleeper);
    }

    /** {@code operation}'s result, tried again while it throws {@link RetriableException} and
     * the retry timeout allows; its last exception otherwise. */
    <T> T withRetries(Callable<T> operation) throws Exception {
        long deadline = retryTimeoutMs < 0 ? Long.MAX_VALUE : clock.millis() + retryTimeoutMs;
        for (int attempt = 1;; attempt++) {
            try {
                return operation.call();
            } catch (RetriableException retriable) {
                long remaining = deadline - clock.millis();
                if (retryTimeoutMs == 0 || remaining <= 0) {
                    throw retriable;
                }
                sleeper.sleep(delayMs(attempt, remaining));
            }
        }
    }

    /** The line logged for a record skipped under {@code errors.tolerance=all} after
     * {@code failed} (the stage and the record, named), null when {@code errors.log.enable} is
     * false; the record itself only under {@code errors.log.include.messages=true}. */
    String skipLine(String failed, Object record, Exception error) {
        if (!logErrors) {
            return null;
        }
        return "errors.tolerance=all: the record is skipped: " + failed
                + (logMessages ? ", where source record is = " + record : "") + ": " + error;
    }

    /** The wait after failed try {@code attempt} (1, 2, ...), {@code remainingMs} before the
     * deadline. */
    long delayMs(int attempt, long remainingMs) {
        long delay = MIN_DELAY_MS << Math.min(attempt - 1, 40);
        if (delay > retryMaxDelayMs) {
            delay = (long) (ThreadLocalRandom.current().nextDouble() * retryMaxDelayMs);
        }
        return Math.max(0, Math.min(delay, remainingMs));
    }
}
