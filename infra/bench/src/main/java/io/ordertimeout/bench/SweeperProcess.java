package io.ordertimeout.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A child JVM running {@link ScaleOutSweeper} with this JVM's classpath and the deployment's
 * environment ({@code OTC_*}), as a Lambda execution environment of the sweep function gets it.
 * Lines that are not the protocol's (the child's logs) go to {@code log}.
 */
final class SweeperProcess implements AutoCloseable {
  /** What the child reported at its end. */
  record Stats(
      long passes,
      long claimed,
      long closed,
      long handedOff,
      long failedBatches,
      int shardsHeld,
      long durationMillis,
      long cpuMillis) {
    static Stats parse(String line) {
      Map<String, Long> f = new HashMap<>();
      for (String field : line.split(" ")) {
        int eq = field.indexOf('=');
        if (eq > 0) {
          f.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
        }
      }
      return new Stats(
          f.get("passes"),
          f.get("claimed"),
          f.get("closed"),
          f.get("handedOff"),
          f.get("failedBatches"),
          f.get("shardsHeld").intValue(),
          f.get("durationMs"),
          f.get("cpuMs"));
    }
  }

  private final int index;
  private final Process process;
  private final PrintWriter stdin;
  private final CompletableFuture<Void> ready = new CompletableFuture<>();
  private final CompletableFuture<Stats> stats = new CompletableFuture<>();

  private SweeperProcess(int index, Process process, Path log) {
    this.index = index;
    this.process = process;
    this.stdin =
        new PrintWriter(
            new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
    Thread reader = new Thread(() -> read(log), "sweeper-" + index + "-out");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts sweeper {@code index} with {@code env} added to this process's environment; {@code
   * share} "i/K" limits its leases (PartitionedSweep), null runs the production sweep job.
   */
  static SweeperProcess start(int index, Map<String, String> env, String share, Path log)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // the sweep function's heap is a share of its 1,024 MB; 256 MB is plenty for one sweeper
    command.add("-Xmx256m");
    // under the test run's JaCoCo agent the children report coverage too (append to the same file)
    ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("-javaagent:") && a.contains("jacoco"))
        .forEach(command::add);
    command.add("-cp");
    command.add(classpath());
    command.add(ScaleOutSweeper.class.getName());
    if (share != null) {
      command.add("--share");
      command.add(share);
    }
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    return new SweeperProcess(index, pb.start(), log);
  }

  /**
   * This bench's classpath: under exec:java the bench runs in Maven's JVM, whose {@code
   * java.class.path} is Maven's own, and the project's jars are the URLs of the loader that loaded
   * this class; under surefire (and java -cp) it is {@code java.class.path}.
   */
  static String classpath() {
    List<String> entries = new ArrayList<>();
    for (ClassLoader l = SweeperProcess.class.getClassLoader(); l != null; l = l.getParent()) {
      if (l instanceof URLClassLoader urls) {
        for (URL url : urls.getURLs()) {
          try {
            entries.add(new File(url.toURI()).getPath());
          } catch (URISyntaxException | IllegalArgumentException e) {
            entries.add(url.getPath());
          }
        }
      }
    }
    String own = System.getProperty("java.class.path");
    if (entries.isEmpty() || !own.contains("plexus-classworlds")) {
      entries.add(own);
    }
    return String.join(File.pathSeparator, entries);
  }

  private void read(Path logFile) {
    try (BufferedReader out =
            new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Writer log = Files.newBufferedWriter(logFile, StandardCharsets.UTF_8)) {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.equals(ScaleOutSweeper.PREFIX + "READY")) {
          ready.complete(null);
        } else if (line.startsWith(ScaleOutSweeper.PREFIX + "STATS ")) {
          stats.complete(Stats.parse(line));
        } else {
          log.write(line);
          log.write('\n');
        }
      }
    } catch (IOException | RuntimeException e) {
      stats.completeExceptionally(e);
    }
    IllegalStateException ended =
        new IllegalStateException("sweeper " + index + " ended (exit " + exit() + ")");
    ready.completeExceptionally(ended);
    stats.completeExceptionally(ended);
  }

  private String exit() {
    try {
      return process.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(process.exitValue()) : "?";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "?";
    }
  }

  void awaitReady(long timeoutMillis) throws Exception {
    try {
      ready.get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "sweeper " + index + " not ready in " + timeoutMillis + " ms");
    }
  }

  void go() {
    stdin.println("GO");
  }

  void stop() {
    stdin.println("STOP");
  }

  Stats awaitStats(long timeoutMillis) throws Exception {
    return stats.get(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  long pid() {
    return process.pid();
  }

  @Override
  public void close() {
    stdin.close();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
