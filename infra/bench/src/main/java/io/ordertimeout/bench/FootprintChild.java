package io.ordertimeout.bench;

import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.sun.management.GarbageCollectionNotificationInfo;
import io.ordertimeout.functions.consumer.StreamConsumerHandler;
import io.ordertimeout.functions.sweep.TimeoutSweepHandler;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * The child JVM of {@link FootprintBench}: one Lambda execution environment of the timeout-sweep or
 * the stream-consumer function. It builds the real handler with its no-argument constructor (so
 * {@code Components.fromEnvironment()} wires it from the environment the parent gives, as on
 * Lambda), then invokes it back to back with the function's Timeout as the remaining time, as one
 * environment serves consecutive scheduled runs, until the parent writes a line (or closes stdin):
 * the remaining time then reads 0 and the run ends at its next check. It prints one {@code
 * footprint-ready} line after init and one {@code footprint-result} line at the end.
 *
 * <p>Run only by FootprintBench: {@code java <Lambda-like flags> -cp <bench classpath>
 * io.ordertimeout.bench.FootprintChild sweep|consumer <timeout ms>}.
 */
public final class FootprintChild {
  static final String READY = "footprint-ready";
  static final String RESULT = "footprint-result";

  private static volatile boolean stop;
  private static final AtomicLong MAX_HEAP_AFTER_GC = new AtomicLong();

  private FootprintChild() {}

  public static void main(String[] args) throws Exception {
    String function = args[0];
    long timeoutMillis = Long.parseLong(args[1]);
    listenToGc();
    RequestHandler<Map<String, Object>, String> handler =
        function.equals("sweep") ? new TimeoutSweepHandler() : new StreamConsumerHandler();
    long[] gcAtReady = gc();
    long cpuAtReady = ProcStats.cpuNanos();
    long rssAtReadyKb = ProcStats.rssKb();
    long startedMs = System.currentTimeMillis();
    System.out.println(READY + " rssKb=" + rssAtReadyKb);
    System.out.flush();
    Thread watcher = new Thread(FootprintChild::awaitStopLine, "footprint-stop");
    watcher.setDaemon(true);
    watcher.start();
    int invocations = 0;
    String summary = "";
    Map<String, Object> event = Map.of("source", "order-timeout.scheduler", "schedule", function);
    while (!stop) {
      long deadline = System.currentTimeMillis() + timeoutMillis;
      summary = handler.handleRequest(event, context(function, deadline));
      invocations++;
    }
    long wallMs = System.currentTimeMillis() - startedMs;
    long cpuMs = (ProcStats.cpuNanos() - cpuAtReady) / 1_000_000;
    long[] gcAtEnd = gc();
    long peakRssKb = ProcStats.peakRssKb();
    System.gc();
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    System.out.printf(
        "%s rssAtReadyKb=%d peakRssKb=%d maxHeapAfterGcKb=%d liveHeapAtEndKb=%d heapMaxKb=%d"
            + " gcCount=%d gcMillis=%d cpuMs=%d wallMs=%d invocations=%d summary=%s%n",
        RESULT,
        rssAtReadyKb,
        peakRssKb,
        MAX_HEAP_AFTER_GC.get() / 1024,
        heap.getUsed() / 1024,
        heap.getMax() / 1024,
        gcAtEnd[0] - gcAtReady[0],
        gcAtEnd[1] - gcAtReady[1],
        cpuMs,
        wallMs,
        invocations,
        summary.replace('\n', ' '));
    System.out.flush();
    System.exit(0);
  }

  private static void awaitStopLine() {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      in.readLine();
    } catch (java.io.IOException e) {
      // a broken pipe means the parent is gone: stop as well
    }
    stop = true;
  }

  /**
   * Heap in use after each collection (every pool), its maximum kept: the live set the heap must
   * hold at least, plus what old-generation garbage a young collection leaves.
   */
  private static void listenToGc() {
    java.util.Set<String> heapPools = new java.util.HashSet<>();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        heapPools.add(pool.getName());
      }
    }
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof NotificationEmitter emitter) {
        emitter.addNotificationListener(
            (notification, handback) -> {
              if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
                  notification.getType())) {
                return;
              }
              var info =
                  GarbageCollectionNotificationInfo.from(
                      (CompositeData) notification.getUserData());
              long used = 0;
              // non-heap pools (metaspace, code cache) are in the map too: count heap pools only
              for (var pool : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
                if (heapPools.contains(pool.getKey())) {
                  used += pool.getValue().getUsed();
                }
              }
              MAX_HEAP_AFTER_GC.accumulateAndGet(used, Math::max);
            },
            null,
            null);
      }
    }
  }

  private static long[] gc() {
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, gc.getCollectionCount());
      millis += Math.max(0, gc.getCollectionTime());
    }
    return new long[] {count, millis};
  }

  /** The Lambda context of one invocation: only the remaining time and the ids are read. */
  /**
   * A Lambda context of one invocation of {@code function}, its time running out at the deadline.
   */
  static Context context(String function, long deadlineMillis) {
    String requestId = UUID.randomUUID().toString();
    return new Context() {
      @Override
      public String getAwsRequestId() {
        return requestId;
      }

      @Override
      public String getLogGroupName() {
        return "/aws/lambda/" + function;
      }

      @Override
      public String getLogStreamName() {
        return "footprint";
      }

      @Override
      public String getFunctionName() {
        return function;
      }

      @Override
      public String getFunctionVersion() {
        return "$LATEST";
      }

      @Override
      public String getInvokedFunctionArn() {
        return "arn:aws:lambda:local:000000000000:function:" + function;
      }

      @Override
      public CognitoIdentity getIdentity() {
        return null;
      }

      @Override
      public ClientContext getClientContext() {
        return null;
      }

      @Override
      public int getRemainingTimeInMillis() {
        return stop ? 0 : (int) Math.max(0, deadlineMillis - System.currentTimeMillis());
      }

      @Override
      public int getMemoryLimitInMB() {
        return (int) (Runtime.getRuntime().maxMemory() / (1024 * 1024));
      }

      @Override
      public LambdaLogger getLogger() {
        return null;
      }
    };
  }
}
