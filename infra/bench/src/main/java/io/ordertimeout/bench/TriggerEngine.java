package io.ordertimeout.bench;

/** A timer engine under {@link TriggerBench}: seeds the plan's timers, then drains them. */
interface TriggerEngine extends AutoCloseable {
  String name();

  /** How it is configured, for the report. */
  String description();

  /** Stores every timer of the plan, due at {@link TriggerPlan#dueAt}. */
  void seed(TriggerPlan plan) throws Exception;

  /**
   * Delivers every timer with {@code plan.workers()} workers, starting no earlier than {@code
   * plan.dueAt0()}, until all are delivered or {@code plan.maxDrainMs()} has passed.
   */
  TriggerResult drain(TriggerPlan plan) throws Exception;

  /** Redis keys of this engine left after the drain (0: nothing left behind). */
  long keysLeft();

  @Override
  void close();
}
