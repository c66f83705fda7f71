package io.ordertimeout.local;

import com.fasterxml.jackson.core.type.TypeReference;
import io.ordertimeout.util.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one ScheduleV2 schedule of template.yaml: every {@code rate} (times the scale), invoke the
 * function with the schedule's Input and a context counting down from the function's Timeout.
 *
 * <p>A loop in Sidekiq's shape: {@code until done: invoke; wait}. An invocation that throws is
 * logged and the next one runs on time. Invocations of one schedule never overlap: the template
 * sets no retry and the sweep and consumer hold shard leases anyway, so a second concurrent
 * invocation would only wait on the first. {@link #terminate()} wakes the sleeper, and the running
 * invocation's remaining time drops to 0 so it returns within one pass.
 */
final class ScheduleRunner {
  private static final Logger log = LoggerFactory.getLogger(ScheduleRunner.class);

  private final LocalFunction function;
  private final SamTemplate.Schedule schedule;
  private final Duration interval;
  private final Map<String, Object> input;
  private final CountDownLatch done = new CountDownLatch(1);
  private final AtomicLong invocations = new AtomicLong();
  private final Thread thread;

  ScheduleRunner(LocalFunction function, SamTemplate.Schedule schedule, double scale) {
    this.function = function;
    this.schedule = schedule;
    this.interval = Duration.ofMillis(Math.max(100, (long) (schedule.rate().toMillis() * scale)));
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

  long invocations() {
    return invocations.get();
  }

  private void loop() {
    // a small jitter so the sweep and the consumer, both rate(1 minute), do not start in lockstep
    sleep(Duration.ofMillis(ThreadLocalRandom.current().nextLong(50, 250)));
    while (!stopping()) {
      long started = System.nanoTime();
      invokeOnce();
      long elapsed = Duration.ofNanos(System.nanoTime() - started).toMillis();
      sleep(Duration.ofMillis(Math.max(0, interval.toMillis() - elapsed)));
    }
  }

  private void invokeOnce() {
    LocalContext context =
        new LocalContext(function.name(), function.timeoutMillis(), this::stopping);
    try {
      Object result = function.invoke(new java.util.LinkedHashMap<>(input), context);
      invocations.incrementAndGet();
      log.debug("{} ({}) returned {}", function.name(), schedule.eventName(), result);
    } catch (RuntimeException e) {
      invocations.incrementAndGet();
      log.error(
          "{} ({}) invocation {} failed; the next runs in {} ms",
          function.name(),
          schedule.eventName(),
          context.getAwsRequestId(),
          interval.toMillis(),
          e);
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

  /** Stops the loop; waits up to {@code wait} for the running invocation to return. */
  void terminate(Duration wait) {
    done.countDown();
    try {
      thread.join(wait.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      log.warn("{} ({}) still running after {} ms", function.name(), schedule.eventName(), wait);
    }
  }

  static List<ScheduleRunner> forAll(List<LocalFunction> functions, double scale) {
    List<ScheduleRunner> runners = new ArrayList<>();
    for (LocalFunction f : functions) {
      for (SamTemplate.Schedule s : f.template().schedules()) {
        runners.add(new ScheduleRunner(f, s, scale));
      }
    }
    return runners;
  }
}
