package io.ordertimeout.redis;

/**
 * The clock that decides when a timer is due. In production it is Redis TIME, one clock for every
 * worker whatever its host's clock says (docs/concepts/design.md, clocks); tests wrap it to inject
 * skew.
 */
@FunctionalInterface
public interface TimeSource {
  long nowMillis();

  /** A source {@code offsetMillis} ahead of (or, negative, behind) this one. */
  default TimeSource skewed(long offsetMillis) {
    return () -> nowMillis() + offsetMillis;
  }
}
