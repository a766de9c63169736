import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Starts a real OpenSearch cluster of K nodes in this JVM on 127.0.0.1 (security off, HTTP only)
 * through codelibs' OpenSearchRunner, the modules on the classpath as classpath plugins.
 *
 * Arguments: HTTP_PORT TRANSPORT_PORTS(comma-separated, one per node) DATA_DIR CLUSTER_NAME
 * [CONFIG_DIR PLUGIN_CLASSES]. With CONFIG_DIR, its files and directories are copied into each
 * node's config directory before the node starts (its opensearch.yml is the node's), and the
 * plugins named (comma-separated classes on the classpath) run besides the modules: how
 * tests/engines/run --secure adds the security plugin with its certificates and configuration.
 * Node i (1-based) answers HTTP on HTTP_PORT + i - 1. Standard input takes control lines
 * "stop-node I" and "start-node I"; SIGTERM/SIGINT close every node (shutdown hook).
 * tests/engines/run is the command to use; it prints the ready line once the cluster answers.
 */
public final class Launcher {
    public static void main(final String[] args) throws Exception {
        final int httpPort = Integer.parseInt(args[0]);
        final String[] transport = args[1].split(",");
        final int nodes = transport.length;
        final OpenSearchRunner runner = new OpenSearchRunner();
        final List<String> seeds = new ArrayList<>();
        final List<String> names = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            seeds.add("127.0.0.1:" + transport[i]);
            names.add("Node " + (i + 1));
        }
        final Path extraConfig = args.length > 4 ? Paths.get(args[4]) : null;
        runner.onBuild((id, b) -> {
            if (extraConfig != null) {
                copyTree(extraConfig, Paths.get(args[2], "node_" + id, "config"));
            }
            b.put("network.host", "127.0.0.1");
            b.put("http.port", String.valueOf(httpPort + id - 1));
            b.put("transport.port", transport[id - 1]);
            b.putList("node.roles", "cluster_manager", "data", "ingest");
            b.put("cluster.routing.allocation.disk.threshold_enabled", "false");
            b.put("action.auto_create_index", "true");
            if (nodes == 1) {
                b.put("discovery.type", "single-node");
            } else {
                b.putList("discovery.seed_hosts", seeds);
                b.putList("cluster.initial_cluster_manager_nodes", names);
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final Exception e) {
                System.out.println("close failed: " + e);
            }
        }));
        final OpenSearchRunner.Configs configs =
                OpenSearchRunner.newConfigs().basePath(args[2]).numOfNode(nodes).clusterName(args[3]);
        if (args.length > 5) {
            configs.pluginTypes(args[5]);
        }
        runner.build(configs);
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            final String[] words = line.trim().split("\\s+");
            if (words.length != 2) {
                continue;
            }
            final int i = Integer.parseInt(words[1]) - 1;
            if ("stop-node".equals(words[0]) && runner.getNode(i) != null) {
                runner.getNode(i).close();
                System.out.println("stopped node " + (i + 1));
            } else if ("start-node".equals(words[0])) {
                System.out.println("started node " + (i + 1) + ": " + runner.startNode(i));
            }
        }
        while (!runner.isClosed()) {
            Thread.sleep(1000);
        }
    }

    private static void copyTree(final Path from, final Path to) {
        try (var paths = Files.walk(from)) {
            for (final Path p : (Iterable<Path>) paths::iterator) {
                final Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
