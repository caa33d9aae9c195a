package io.github.sparkeosconnect.taskhost;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;

/**
 * The class loader of one plugin: child-first, except for what every plugin must share with
 * the host (its JDK, the Connect API, Connect's JSON converter and built-in transforms,
 * kafka-clients and slf4j), which comes from the parent so that a plugin shipping its own copy
 * (Debezium ships connect-api 4.3.0) still talks to the host's classes.
 */
public final class PluginClassLoader extends URLClassLoader {

    static {
        ClassLoader.registerAsParallelCapable();
    }

    private static final List<String> SHARED_PREFIXES = List.of(
            "java.", "javax.", "jdk.", "sun.", "com.sun.",
            "org.slf4j.",
            "org.apache.kafka.common.",
            "org.apache.kafka.clients.");

    private static final List<String> SHARED_CONNECT_PACKAGES = List.of(
            "components", "connector", "data", "errors", "header", "health", "rest", "sink",
            "source", "storage", "transforms", "util", "json");

    private final String name;

    /** A loader over {@code urls} whose shared classes come from {@code parent}. */
    public PluginClassLoader(String name, URL[] urls, ClassLoader parent) {
        super(name, urls, Objects.requireNonNull(parent));
        this.name = name;
    }

    /** Whether {@code className} is one of the classes every plugin takes from the host. */
    public static boolean isShared(String className) {
        for (String prefix : SHARED_PREFIXES) {
            if (className.startsWith(prefix)) {
                return true;
            }
        }
        String connect = "org.apache.kafka.connect.";
        if (className.startsWith(connect)) {
            String rest = className.substring(connect.length());
            int dot = rest.indexOf('.');
            return dot > 0 && SHARED_CONNECT_PACKAGES.contains(rest.substring(0, dot));
        }
        return false;
    }

    /** Whether this plugin's own jars hold {@code className} (the parent is not asked). */
    public boolean holds(String className) {
        return findResource(className.replace('.', '/') + ".class") != null;
    }

    @Override
    protected Class<?> loadClass(String className, boolean resolve) throws ClassNotFoundException {
        if (isShared(className)) {
            return super.loadClass(className, resolve);
        }
        synchronized (getClassLoadingLock(className)) {
            Class<?> loaded = findLoadedClass(className);
            if (loaded == null) {
                try {
                    loaded = findClass(className);
                } catch (ClassNotFoundException notHere) {
                    loaded = getParent().loadClass(className);
                }
            }
            if (resolve) {
                resolveClass(loaded);
            }
            return loaded;
        }
    }

    @Override
    public URL getResource(String resource) {
        if (isShared(resource.replace('/', '.'))) {
            return super.getResource(resource);
        }
        URL own = findResource(resource);
        return own != null ? own : getParent().getResource(resource);
    }

    @Override
    public Enumeration<URL> getResources(String resource) throws IOException {
        List<URL> found = new ArrayList<>(Collections.list(findResources(resource)));
        found.addAll(Collections.list(getParent().getResources(resource)));
        return Collections.enumeration(found);
    }

    @Override
    public String toString() {
        return "PluginClassLoader(" + name + ")";
    }
}
