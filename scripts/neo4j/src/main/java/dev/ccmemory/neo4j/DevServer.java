package dev.ccmemory.neo4j;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * A throw-away Neo4j 5.26 Community server for ccmemory's tests: embedded database, Bolt on
 * 127.0.0.1:PORT, authentication on with a known password. Started and stopped by
 * scripts/neo4j-dev; SIGTERM shuts the database down cleanly through the shutdown hook.
 *
 * <p>Usage: DevServer HOME_DIR PORT PASSWORD READY_FILE
 */
public final class DevServer {
    private DevServer() {}

    private static void log(String what) {
        long ms = java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
        System.out.println("[neo4j-dev +" + ms + "ms] " + what);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: DevServer HOME_DIR PORT PASSWORD READY_FILE");
            System.exit(2);
        }
        Path home = Path.of(args[0]);
        int port = Integer.parseInt(args[1]);
        String password = args[2];
        Path ready = Path.of(args[3]);
        // page cache in MB (scripts/neo4j-dev passes CCMEMORY_NEO4J_DEV_PAGECACHE through the environment)
        String cacheEnv = System.getenv("CCMEMORY_NEO4J_DEV_PAGECACHE");
        long pageCacheMb = cacheEnv == null || cacheEnv.isBlank() ? 128L : Long.parseLong(cacheEnv.trim());

        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(10))
                // A throw-away server: no phoning home, and no multi-second grace periods on stop.
                .setConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ZERO)
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1))
                .build();
        log("database started");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log("shutting down");
            service.shutdown();
            log("shut down");
            stopped.countDown();
        }, "ccmemory-neo4j-shutdown"));

        // The built-in user starts with password "neo4j" and a forced change; give it the test
        // password so drivers can log in straight away.
        GraphDatabaseService system = service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        system.executeTransactionally(
                "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                Map.of("password", password));

        log("password set");
        String version = org.neo4j.kernel.internal.Version.getNeo4jVersion();
        Path tmp = ready.resolveSibling(ready.getFileName() + ".tmp");
        Files.writeString(tmp, "port=" + port + "\nversion=" + version + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        System.out.println("ccmemory neo4j-dev " + version + " ready on bolt://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }
}
