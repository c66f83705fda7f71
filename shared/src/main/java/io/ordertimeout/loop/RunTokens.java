package io.ordertimeout.loop;

import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Lease tokens of loop runs (sweeps, stream consumers) that order the runs by their start: {@code
 * <start, epoch ms, 13 digits>-<uuid>}, so a registry of live runs read in token order lists them
 * oldest first, and a run learns from it whether a run started after it is live (its successor: the
 * hand-over). The start is read from one clock for every run (Redis TIME). A token of another shape
 * (a plain UUID, from a run of a version before these tokens) counts as older than every token with
 * a start, so during a deploy no new run waits for an old one to hand over.
 */
public final class RunTokens {
  private static final Pattern TIMED = Pattern.compile("\\d{13}-.+");

  /** Oldest first: tokens without a start, then by start (and uuid). */
  public static final Comparator<String> BY_START =
      Comparator.comparing((String t) -> timed(t)).thenComparing(Comparator.naturalOrder());

  private RunTokens() {}

  /** A new token for a run started at {@code startMillis}. */
  public static String newToken(long startMillis) {
    return String.format("%013d-%s", startMillis, UUID.randomUUID());
  }

  /** How many of {@code live} started after {@code token}. */
  public static int newerThan(String token, List<String> live) {
    return (int) live.stream().filter(t -> BY_START.compare(t, token) > 0).count();
  }

  private static boolean timed(String token) {
    return TIMED.matcher(token).matches();
  }
}
