package io.github.sparkeosconnect.taskhost;

import java.io.IOException;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The plugins of one {@code plugin.path}, each in its own {@link PluginClassLoader}; finds the
 * plugin that holds a class and runs plugin code with the thread context class loader set to
 * that plugin's loader.
 */
public final class Plugins {

    /** A class and the loader of the plugin it came from (the host's loader if none). */
    public record Found<T>(Class<? extends T> type, ClassLoader loader) {
    }

    private final List<Path> entries;
    private final List<PluginClassLoader> loaders = new ArrayList<>();
    private final ClassLoader host;

    /** Scans {@code entries} (a {@code plugin.path}); a missing entry fails here. */
    public Plugins(List<Path> entries, ClassLoader host) throws IOException {
        this.entries = List.copyOf(entries);
        this.host = host;
        for (PluginScanner.PluginLocation plugin : PluginScanner.scan(entries)) {
            loaders.add(new PluginClassLoader(plugin.source().toString(),
                    plugin.urls().toArray(new URL[0]), host));
        }
    }

    /** The {@code plugin.path} entries, as given. */
    public List<Path> entries() {
        return entries;
    }

    /** The plugins' loaders, in scanning order. */
    public List<PluginClassLoader> loaders() {
        return List.copyOf(loaders);
    }

    /** The loader of the first plugin whose own jars hold {@code className}, or null. */
    public PluginClassLoader pluginHolding(String className) {
        for (PluginClassLoader loader : loaders) {
            if (loader.holds(className)) {
                return loader;
            }
        }
        return null;
    }

    /** Whether {@link #load} finds {@code className} (in a plugin or on the host). */
    public boolean canLoad(String className, ClassLoader preferred) {
        ClassLoader loader = preferred instanceof PluginClassLoader p && p.holds(className)
                ? preferred : pluginHolding(className);
        try {
            Class.forName(className, false, loader == null ? host : loader);
            return true;
        } catch (ClassNotFoundException | LinkageError notFound) {
            return false;
        }
    }

    /**
     * The class {@code className} of kind {@code base}: from the plugin that holds it, else
     * from the host ({@code preferred} first when given: the plugin a converter or transform
     * is configured for). Not found: an exception naming the class and the plugin.path.
     */
    public <T> Found<T> load(String className, Class<T> base, ClassLoader preferred)
            throws ClassNotFoundException {
        ClassLoader loader = preferred instanceof PluginClassLoader p && p.holds(className)
                ? preferred : pluginHolding(className);
        if (loader == null) {
            loader = host;
        }
        Class<?> type;
        try {
            type = Class.forName(className, false, loader);
        } catch (ClassNotFoundException notFound) {
            throw new ClassNotFoundException("class " + className + " was not found in plugin.path "
                    + entries + " (" + loaders.size() + " plugins) nor on the task host's class path");
        }
        if (!base.isAssignableFrom(type)) {
            throw new ClassNotFoundException("class " + className + " (from " + loader
                    + ") is not a " + base.getName());
        }
        return new Found<>(type.asSubclass(base), loader);
    }

    /** Runs {@code call} with the thread context class loader set to {@code loader}. */
    public static <V> V withLoader(ClassLoader loader, Callable<V> call) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader saved = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return call.call();
        } finally {
            thread.setContextClassLoader(saved);
        }
    }

    /** {@link #withLoader(ClassLoader, Callable)} for code that returns nothing. */
    public static void runWithLoader(ClassLoader loader, ThrowingRunnable run) throws Exception {
        withLoader(loader, () -> {
            run.run();
            return null;
        });
    }

    /** A {@link Runnable} that may throw. */
    @FunctionalInterface
    public interface ThrowingRunnable {
        /** Runs. */
        void run() throws Exception;
    }
}
