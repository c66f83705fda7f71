package io.ordertimeout.local;

import com.fasterxml.jackson.core.type.TypeReference;
import io.ordertimeout.util.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one ScheduleV2 schedule of template.yaml as EventBridge Scheduler does: once per {@code
 * rate} (times the scale), at a random offset within the period, each invocation on its own (as
 * Lambda runs it in an environment of its own) with the schedule's Input and a context counting
 * down from the function's Timeout.
 *
 * <p>Scheduler's documented precision is one minute: a schedule set for 1:00 invokes its target
 * between 1:00:00 and 1:00:59, so two runs of {@code rate(1 minute)} may start almost together or
 * up to ~119 s apart, and they overlap whenever a run lasts longer than the gap. This runner fires
 * period k at {@code start + k * interval + offset(k)}, the offsets drawn from a seeded {@link
 * Random} (the seed is printed by {@code ./local up}, {@code --schedule-seed} repeats a run, {@code
 * --schedule-jitter off} fires at the start of each period), and the first one at start, as though
 * the previous period's run were live. So the local stack meets the cadence production meets: a
 * sweep or consumer run must keep working until its successor has joined, and hand over to it.
 *
 * <p>An invocation that throws is logged and counted. {@link #terminate} wakes the loop, drops the
 * running invocations' remaining time to 0 so each returns within one pass, and waits for them.
 */
final class ScheduleRunner {
  private static final Logger log = LoggerFactory.getLogger(ScheduleRunner.class);

  /** How the runner picks each period's firing time. */
  record Jitter(boolean on, long seed) {
    /** A random seed, jitter on: what {@code ./local up} does by default. */
    static Jitter random() {
      return new Jitter(true, java.util.concurrent.ThreadLocalRandom.current().nextLong());
    }

    /** Fires at the start of each period (and after a 50-250 ms stagger at start). */
    static Jitter off() {
      return new Jitter(false, 0);
    }

    /** This schedule's own stream of offsets: the same seed gives each schedule other offsets. */
    Random randomFor(String functionName, String eventName) {
      return new Random(seed ^ ((long) (functionName + "/" + eventName).hashCode() << 17));
    }
  }

  private final LocalFunction function;
  private final SamTemplate.Schedule schedule;
  private final Duration interval;
  private final Jitter jitter;
  private final Random offsets;
  private final Map<String, Object> input;
  private final CountDownLatch done = new CountDownLatch(1);
  private final AtomicLong fired = new AtomicLong();
  private final AtomicLong invocations = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong overlapping = new AtomicLong();
  private final AtomicLong runMillis = new AtomicLong();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger maxRunning = new AtomicInteger();
  private final Set<Thread> invocationThreads = ConcurrentHashMap.newKeySet();
  private final Thread thread;

  ScheduleRunner(
      LocalFunction function, SamTemplate.Schedule schedule, double scale, Jitter jitter) {
    this.function = function;
    this.schedule = schedule;
    this.interval = Duration.ofMillis(Math.max(100, (long) (schedule.rate().toMillis() * scale)));
    this.jitter = jitter;
    this.offsets = jitter.randomFor(function.name(), schedule.eventName());
    this.input = Json.MAPPER.convertValue(Json.MAPPER.valueToTree(parse(schedule.input())), MAP);
    this.thread = new Thread(this::loop, "schedule-" + function.name());
    thread.setDaemon(true);
  }

  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private static Object parse(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("schedule Input is not JSON: " + json, e);
    }
  }

  void start() {
    thread.start();
  }

  Duration interval() {
    return interval;
  }

  SamTemplate.Schedule schedule() {
    return schedule;
  }

  String functionName() {
    return function.name();
  }

  Jitter jitter() {
    return jitter;
  }

  /** Invocations started. */
  long fired() {
    return fired.get();
  }

  /** Invocations that returned or threw. */
  long invocations() {
    return invocations.get();
  }

  /** Invocations that threw. */
  long failures() {
    return failures.get();
  }

  /** Invocations that started while another of this schedule was still running. */
  long overlapping() {
    return overlapping.get();
  }

  /** How long the invocations that returned or threw ran, in all. */
  long runMillis() {
    return runMillis.get();
  }

  /** The most invocations of this schedule running at once. */
  int maxRunning() {
    return maxRunning.get();
  }

  /**
   * When period {@code k} fires, in ms after the start: k * interval plus a random offset in [0,
   * interval) with jitter on, plus nothing without; period 0 fires after a 50-250 ms stagger, so
   * the schedules of one stack do not start in lockstep. Drawn in order, one call per period.
   */
  long nextFiring(long k) {
    long stagger = 50 + (long) (offsets.nextDouble() * 200);
    if (k == 0) {
      return stagger;
    }
    long period = interval.toMillis();
    return k * period + (jitter.on() ? (long) (offsets.nextDouble() * period) : stagger);
  }

  private void loop() {
    long start = System.nanoTime();
    for (long k = 0; !stopping(); k++) {
      long at = nextFiring(k);
      long now = (System.nanoTime() - start) / 1_000_000;
      sleep(Duration.ofMillis(Math.max(0, at - now)));
      if (stopping()) {
        break;
      }
      fire(k);
    }
  }

  private void fire(long period) {
    Thread t =
        new Thread(
            () -> {
              try {
                invokeOnce();
              } finally {
                running.decrementAndGet();
                invocationThreads.remove(Thread.currentThread());
              }
            },
            "schedule-" + function.name() + "-" + period);
    t.setDaemon(true);
    fired.incrementAndGet();
    int now = running.incrementAndGet();
    maxRunning.accumulateAndGet(now, Math::max);
    if (now > 1) {
      overlapping.incrementAndGet();
      log.debug(
          "{} ({}) period {} starts beside {} running",
          function.name(),
          schedule.eventName(),
          period,
          now - 1);
    }
    invocationThreads.add(t);
    t.start();
  }

  private void invokeOnce() {
    LocalContext context =
        new LocalContext(function.name(), function.timeoutMillis(), this::stopping);
    long started = System.nanoTime();
    try {
      Object result = function.invoke(new java.util.LinkedHashMap<>(input), context);
      log.debug("{} ({}) returned {}", function.name(), schedule.eventName(), result);
    } catch (RuntimeException e) {
      failures.incrementAndGet();
      log.error(
          "{} ({}) invocation {} failed; the next fires within {} ms",
          function.name(),
          schedule.eventName(),
          context.getAwsRequestId(),
          2 * interval.toMillis(),
          e);
    } finally {
      runMillis.addAndGet((System.nanoTime() - started) / 1_000_000);
      invocations.incrementAndGet();
    }
  }

  private boolean stopping() {
    return done.getCount() == 0;
  }

  private void sleep(Duration d) {
    try {
      done.await(d.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      done.countDown();
    }
  }

  /** Stops firing; waits up to {@code wait} in all for the running invocations to return. */
  void terminate(Duration wait) {
    done.countDown();
    long deadline = System.nanoTime() + wait.toNanos();
    try {
      thread.join(wait.toMillis());
      for (Thread t : List.copyOf(invocationThreads)) {
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left > 0) {
          t.join(left);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (running.get() > 0) {
      log.warn(
          "{} ({}): {} invocation(s) still running after {} ms",
          function.name(),
          schedule.eventName(),
          running.get(),
          wait.toMillis());
    }
  }

  static List<ScheduleRunner> forAll(List<LocalFunction> functions, double scale, Jitter jitter) {
    List<ScheduleRunner> runners = new ArrayList<>();
    for (LocalFunction f : functions) {
      for (SamTemplate.Schedule s : f.template().schedules()) {
        runners.add(new ScheduleRunner(f, s, scale, jitter));
      }
    }
    return runners;
  }
}
