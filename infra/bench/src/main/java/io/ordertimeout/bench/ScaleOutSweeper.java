package io.ordertimeout.bench;

import io.ordertimeout.sweep.SweepJob;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.wiring.Components;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One sweeper process of {@link ScaleOutBench}: what the timeout-sweep function's init and handler
 * do ({@code Components.fromEnvironment().sweepJob()}, then {@code SweepJob.run}), driven over
 * stdin/stdout by the bench. It prints {@code SCALEOUT READY} once wired (pool and Redis
 * connected), sweeps from a {@code GO} line until a {@code STOP} line (or stdin's end), then prints
 * {@code SCALEOUT STATS} with the run's SweepStats and this process's CPU time over the run, and
 * exits.
 */
public final class ScaleOutSweeper {
  static final String PREFIX = "SCALEOUT ";

  private ScaleOutSweeper() {}

  public static void main(String[] args) {
    int status = 0;
    try {
      run(args.length == 2 && args[0].equals("--share") ? args[1] : null);
    } catch (RuntimeException | Error e) {
      e.printStackTrace();
      status = 2;
    }
    // Lettuce's and Hikari's threads would keep the JVM alive past the report
    System.exit(status);
  }

  private static void run(String share) {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (Components app = Components.fromEnvironment()) {
      SweepJob job = share == null ? app.sweepJob() : PartitionedSweep.job(app, share);
      say("READY");
      String go = readLine(in);
      if (!"GO".equals(go)) {
        throw new IllegalStateException("expected GO from the bench, got " + go);
      }
      AtomicBoolean stopping = new AtomicBoolean();
      Thread stopper =
          new Thread(
              () -> {
                // STOP, or the bench died (stdin closed): either ends the sweep
                readLine(in);
                stopping.set(true);
              },
              "scaleout-stop");
      stopper.setDaemon(true);
      stopper.start();
      long cpu = ProcStats.cpuNanos();
      // Lambda's remaining time: "plenty" until STOP, then 0, which ends the run after its current
      // pass or wait (at most the poll interval), as SweepSchedule stops an invocation
      SweepStats s = job.run(() -> stopping.get() ? 0 : Long.MAX_VALUE / 4);
      long cpuMs = (ProcStats.cpuNanos() - cpu) / 1_000_000;
      say(
          String.format(
              "STATS passes=%d claimed=%d closed=%d handedOff=%d failedBatches=%d shardsHeld=%d"
                  + " durationMs=%d cpuMs=%d",
              s.passes(),
              s.claimed(),
              s.closed(),
              s.handedOff(),
              s.failedBatches(),
              s.shardsHeld(),
              s.durationMillis(),
              cpuMs));
    }
  }

  private static String readLine(BufferedReader in) {
    try {
      return in.readLine();
    } catch (IOException e) {
      throw new UncheckedIOException("reading the bench's command failed", e);
    }
  }

  private static void say(String line) {
    System.out.println(PREFIX + line);
    System.out.flush();
  }
}
