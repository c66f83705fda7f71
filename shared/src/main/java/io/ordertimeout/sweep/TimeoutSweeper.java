package io.ordertimeout.sweep;

import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.config.SweepSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.lifecycle.DueHandlers;
import io.ordertimeout.loop.PollingLoop;
import io.ordertimeout.loop.RunTokens;
import io.ordertimeout.loop.Sleeper;
import io.ordertimeout.loop.TimeBudget;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.redis.TimeSource;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import io.ordertimeout.stream.OrderEvents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timeout sweep loop of one invocation: {@code until done: hold shard leases; claim due timers;
 * close; sleep until the next deadline}, a {@link PollingLoop} over this work. Every error of a
 * pass is logged and counted and the next pass tries again.
 *
 * <p>One active sweeper per shard (a Redis lease, renewed every pass: {@link ShardLeaseSet}) keeps
 * overlapping invocations from claiming the same shard; it only saves work: claims are atomic and
 * closes are conditional updates. The next-deadline cache ({@link NextDeadlines}), the close-cost
 * model and the chunk runner are types of their own.
 *
 * <p>Over 300 lines: the loop, its pass over held shards and tenants, and the budget rule choosing
 * between closing inline and handing off, which read the same settings and counters; the claim
 * share, chunking, hand-off and cost model are FairClaim, ChunkRunner and ClaimedCloser.
 */
public final class TimeoutSweeper {
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweeper.class);

  /**
   * A second closing transaction pays off only when each has enough orders: below ~50 the commit
   * and round trips dominate and two transactions cost more than one.
   */
  static final int MIN_PARALLEL_CHUNK = 50;

  /**
   * What an invocation keeps after its closes in flight (SweepJob: the backlog gauge, a few Redis
   * calls; the handler: the metrics' flush and the answer): 1 s, or half the margin when that is
   * smaller (the other half is the closes' own; tests run without a margin).
   */
  static final long END_RESERVE_MILLIS = 1_000;

  /** Each other deadline kind's claim budget per shard and pass (config.DeadlineSettings). */
  public static final int DEFAULT_KIND_BATCH = 200;

  private final TimerIndex timers;
  private final ShardLeases leases;
  private final OrderCloser closer;
  private final TimeSource time;
  private final Metrics metrics;
  private final Settings settings;
  private final OrderEvents events;

  /** The tenants whose timers are claimed (TenantStore#all), read at the start of each run. */
  private final Supplier<List<String>> tenants;

  /** The other deadline kinds (receipt, completion, coupon expiry), each with its handler. */
  private final OtherKinds otherKinds;

  /** Closes or hands off claimed batches; learns their closing time for the hand-off decision. */
  private final ClaimedCloser claimedCloser;

  private final NextDeadlines nextDue;

  /** What each set's last claim left: the claims leave out the sets with nothing due. */
  private final SetNexts setNexts;

  /** The closers' acknowledgements, removed with the next claim of their shard. */
  private final PendingAcks acks;

  /** The settings' gather, ms. */
  private final long gather;

  /** Whether the last pass took its full limit from some shard, i.e. more may be due already. */
  private volatile boolean lastPassFull;

  private final PollingLoop loop = new PollingLoop();

  /**
   * Tunables of the loop; see OtcConfig for the defaults and their reasons. {@code parallelism}
   * shards are claimed and closed at once: a batch spends most of its time waiting on MySQL round
   * trips (bench S3: ~1,500 closes/s on one thread), so a second transaction on another shard uses
   * that wait. More than the DB pool size only queues on the pool. {@code weChatStep} is the most a
   * batch's WeChat step can take (zero without a payment gateway): a pass is started only when it
   * fits before the margin, and its batch is closed inline only when the measured closing time fits
   * too (else handed to the stream). {@code runs} runs are expected live at once and share the
   * shards; an older one hands over to them (ShardLeaseSet). {@code gather} is how long after the
   * start of a pass that claimed orders (but not a full batch) the next one starts at the earliest,
   * even when a deadline is due sooner: in steady traffic some shard always has a deadline a
   * millisecond or two away, and a sweep that woke at the earliest one passed again as soon as the
   * last pass ended (bench S1: 7,663 passes of 21 orders in its minute), each pass a claim per
   * shard and a closing transaction. Gathering makes passes fewer and transactions larger; it never
   * lets a deadline be missed, only claimed later, by at most the gather, and a full pass (a
   * backlog) goes on at once.
   */
  public record Settings(
      int batch,
      Duration claimLease,
      Duration poll,
      Duration margin,
      int parallelism,
      Duration weChatStep,
      int kindBatch,
      int runs,
      Duration gather) {
    public Settings {
      if (parallelism < 1) {
        throw new IllegalArgumentException("sweep parallelism must be >= 1, was " + parallelism);
      }
      if (runs < 1) {
        throw new IllegalArgumentException("sweep runs must be >= 1, was " + runs);
      }
      if (gather.isNegative()) {
        throw new IllegalArgumentException("sweep gather must be >= 0, was " + gather);
      }
    }

    /** With the default gather (SweepSettings.DEFAULT_GATHER). */
    public Settings(
        int batch,
        Duration claimLease,
        Duration poll,
        Duration margin,
        int parallelism,
        Duration weChatStep,
        int kindBatch,
        int runs) {
      this(
          batch,
          claimLease,
          poll,
          margin,
          parallelism,
          weChatStep,
          kindBatch,
          runs,
          SweepSettings.DEFAULT_GATHER);
    }

    /** One run at a time (the minute schedule's). */
    public Settings(
        int batch,
        Duration claimLease,
        Duration poll,
        Duration margin,
        int parallelism,
        Duration weChatStep,
        int kindBatch) {
      this(batch, claimLease, poll, margin, parallelism, weChatStep, kindBatch, 1);
    }

    /** With the default claim budget of each other deadline kind. */
    public Settings(
        int batch,
        Duration claimLease,
        Duration poll,
        Duration margin,
        int parallelism,
        Duration weChatStep) {
      this(batch, claimLease, poll, margin, parallelism, weChatStep, DEFAULT_KIND_BATCH);
    }

    /** Without a WeChat step (no payment gateway). */
    public Settings(
        int batch, Duration claimLease, Duration poll, Duration margin, int parallelism) {
      this(batch, claimLease, poll, margin, parallelism, Duration.ZERO);
    }

    /** One shard at a time. */
    public Settings(int batch, Duration claimLease, Duration poll, Duration margin) {
      this(batch, claimLease, poll, margin, 1);
    }
  }

  public TimeoutSweeper(
      TimerIndex timers,
      ShardLeases leases,
      OrderCloser closer,
      OrderEvents events,
      TimeSource time,
      Metrics metrics,
      Settings settings,
      Supplier<List<String>> tenants) {
    this(timers, leases, closer, events, time, metrics, settings, tenants, Map.of());
  }

  public TimeoutSweeper(
      TimerIndex timers,
      ShardLeases leases,
      OrderCloser closer,
      OrderEvents events,
      TimeSource time,
      Metrics metrics,
      Settings settings,
      Supplier<List<String>> tenants,
      Map<DeadlineKind, DueHandlers.Handler> dueHandlers) {
    this.tenants = tenants;
    this.otherKinds = new OtherKinds(dueHandlers, settings.kindBatch(), metrics);
    this.timers = timers;
    this.leases = leases;
    this.closer = closer;
    this.events = events;
    this.time = time;
    this.metrics = metrics;
    this.settings = settings;
    this.nextDue = new NextDeadlines(timers, settings.poll());
    this.setNexts = new SetNexts(settings.poll());
    this.gather = settings.gather().toMillis();
    this.acks = new PendingAcks(timers);
    this.claimedCloser = new ClaimedCloser(closer.withAcks(acks), events, metrics);
  }

  /**
   * Loops until {@code remainingMillis} (Lambda's remaining time) can no longer cover a pass and
   * the margin, or terminate().
   */
  public SweepStats run(LongSupplier remainingMillis) {
    long started = System.nanoTime();
    // The lease token is made when run() starts, not at construction: a sweeper built during Lambda
    // init would be frozen into the SnapStart snapshot, and every environment restored from it
    // would hold leases under the same token. It carries the start (Redis TIME), so the runs
    // know which of them started last: the older ones hand over to it.
    ShardLeaseSet held = new ShardLeaseSet(timers, leases, metrics, newToken(), settings.runs());
    TimeBudget budget = new TimeBudget(remainingMillis, settings.margin());
    // Read once per invocation: a tenant onboarded meanwhile is swept from the next one (a minute).
    List<String> tenants = List.copyOf(this.tenants.get());
    SweepCounters counters = new SweepCounters();
    ChunkRunner closers =
        settings.parallelism() == 1
            ? ChunkRunner.serial()
            : ChunkRunner.pipelined(settings.parallelism(), loop.sleeper());
    try {
      loop.run(
          () -> passFits(budget, held.token()),
          new PollingLoop.Work() {
            @Override
            public long pass() {
              long passStarted = System.nanoTime();
              held.refresh();
              if (held.handedOver()) {
                log.info(
                    "sweep hands over (token {}): a run started after it holds every shard",
                    held.token());
                return PollingLoop.STOP;
              }
              // One read of the timer clock a pass: the wait below counts from it on this host's
              // monotonic clock (a few milliseconds later) rather than asking Redis again.
              long now = time.nowMillis();
              long nowRead = System.nanoTime();
              int claimed =
                  TimeoutSweeper.this.pass(held.held(), tenants, counters, closers, budget, now);
              counters.passes.incrementAndGet();
              if (claimed > 0 && lastPassFull) {
                return 0;
              }
              // Nothing more is due now: another pass would only cost a claim per shard. After a
              // pass that claimed, the next one gathers for a while (Settings#gather) even when a
              // deadline is due sooner.
              long wait =
                  nextDue.waitMillis(
                      held.held(), tenants, now + (System.nanoTime() - nowRead) / 1_000_000);
              if (claimed > 0) {
                wait = Math.max(wait, gather - (System.nanoTime() - passStarted) / 1_000_000);
              }
              return budget.cap(wait);
            }

            @Override
            public long failed(RuntimeException e) {
              counters.failedBatches.incrementAndGet();
              metrics.count("sweep_errors", 1);
              log.warn(
                  "sweep pass failed (shards {}, token {}): {}",
                  held.held(),
                  held.token(),
                  e.toString());
              return Sleeper.jittered(settings.poll().toMillis() * 4);
            }
          });
    } finally {
      // The shards and the registry entry go first, then the closes in flight are waited for: a
      // run that held them while it waited left its shards unswept (and the other runs at their
      // smaller share) exactly when closes were slow. The wait is bounded by the invocation's
      // time, less what the end needs (the stats, the backlog gauge, the metrics' flush): a close
      // still running then is not lost, its timer comes back to a claimer after the claim lease,
      // and a run that waited longer would be killed at its timeout with that minute's metrics.
      held.releaseAll();
      closers.close(Math.max(0, remainingMillis.getAsLong() - endReserveMillis()));
      acks.flush(shard -> true);
    }
    return counters.stats(held.held().size(), (System.nanoTime() - started) / 1_000_000);
  }

  /** A lease token carrying this run's start on Redis' clock (the host's if Redis is down). */
  private String newToken() {
    long start;
    try {
      start = time.nowMillis();
    } catch (RuntimeException e) {
      start = System.currentTimeMillis();
    }
    return RunTokens.newToken(start);
  }

  private long endReserveMillis() {
    return Math.min(END_RESERVE_MILLIS, settings.margin().toMillis() / 2);
  }

  /** Ends the loop after the current pass and wakes a sleeping sweeper. */
  public void terminate() {
    loop.terminate();
  }

  /**
   * Claims the due timers of every held shard (at most {@code batch} each, shared between tenants
   * by FairClaim; at most {@code batch * parallelism} of each tenant, starting at a rotating shard
   * so none starves), then closes them together, the tenant with the fewest first: in one
   * transaction when few (steady traffic spreads a handful of due orders over 16 shards, and a
   * transaction per shard would cost 16 commits for them), else in up to {@code parallelism}
   * transactions of at most {@code batch} at once, on closer threads while the next pass claims
   * (ChunkRunner: pipelined); the other kinds after them (a burst of 3,200 coupons a pass took ~370
   * ms before them: MixedDeadlineBench). Returns how many were claimed.
   */
  private int pass(
      SortedSet<Integer> held,
      List<String> tenants,
      SweepCounters counters,
      ChunkRunner closers,
      TimeBudget budget,
      long now) {
    Map<TimerSet, List<String>> others = new LinkedHashMap<>();
    Set<Integer> visited = new HashSet<>();
    Map<String, List<String>> claimed = claimAll(held, tenants, counters, others, visited, now);
    // what no claim of this pass carried: the shards it did not claim, and any it no longer holds
    acks.flush(shard -> !visited.contains(shard));
    int total = claimed.values().stream().mapToInt(List::size).sum();
    if (total > 0) {
      // Chunks never mix tenants: a closing transaction is one tenant's, like its statements.
      List<Runnable> closes = new ArrayList<>();
      int series = 0;
      int largest = 0;
      // the fewest first: a tenant with a handful due is not closed after another's whole batch
      List<Map.Entry<String, List<String>>> smallFirst = new ArrayList<>(claimed.entrySet());
      smallFirst.sort(Comparator.comparingInt(e -> e.getValue().size()));
      for (Map.Entry<String, List<String>> tenant : smallFirst) {
        List<List<String>> chunks =
            ChunkRunner.split(
                tenant.getValue(), settings.batch(), settings.parallelism(), MIN_PARALLEL_CHUNK);
        series += closers.chunksInSeries(chunks.size());
        largest = Math.max(largest, chunks.get(0).size());
        chunks.forEach(
            chunk -> closes.add(() -> claimedCloser.close(tenant.getKey(), chunk, counters)));
      }
      if (budget.leftMillis()
          < settings.weChatStep().toMillis() + claimedCloser.estimateMillis(largest) * series) {
        // Not enough time left in this invocation: any number of consumers can take them now.
        claimed.forEach(
            (tenant, ids) ->
                claimedCloser.handOff(tenant, ids, OrderEvents.HandOffCause.OVER_BUDGET, counters));
      } else {
        closers.dispatch(closes);
      }
    }
    return total + otherKinds.apply(others);
  }

  /**
   * The payment timeouts claimed per tenant; the other kinds' claims go into {@code others}. Each
   * tenant may take up to the cap in a pass, and shards are visited until every tenant took its cap
   * or every shard was: with one cap for all tenants, a flash sale filled it from the first shard
   * or two, and another tenant's timers in the other shards waited up to one pass per shard
   * (TenantFairSweepTest; FairnessBench: B's p99 1,874 ms with one cap, 598 ms with a cap each).
   */
  private Map<String, List<String>> claimAll(
      SortedSet<Integer> held,
      List<String> tenants,
      SweepCounters counters,
      Map<TimerSet, List<String>> others,
      Set<Integer> visited,
      long now) {
    Map<String, List<String>> claimed = new LinkedHashMap<>();
    if (held.isEmpty() || tenants.isEmpty()) {
      return claimed;
    }
    int cap = settings.batch() * settings.parallelism();
    int count = 0;
    List<Integer> shards = new ArrayList<>(held);
    int first = (int) (counters.passes.get() % shards.size());
    boolean trusted = nextDue.trusted();
    lastPassFull = false;
    Map<String, Integer> perTenant = new HashMap<>();
    int i = 0;
    while (i < shards.size()) {
      List<String> open = tenants.stream().filter(t -> perTenant.getOrDefault(t, 0) < cap).toList();
      if (open.size() < tenants.size()) {
        lastPassFull = true;
      }
      if (open.isEmpty()) {
        break;
      }
      // Every due shard in one claim call where Redis is one node, one at a time on a cluster.
      List<Integer> due = new ArrayList<>();
      int group = timers.crossShardCalls() ? shards.size() : 1;
      while (i < shards.size() && due.size() < group) {
        int shard = shards.get((first + i) % shards.size());
        i++;
        if (trusted && nextDue.laterThan(shard, now)) {
          continue;
        }
        nextDue.forget(shard);
        due.add(shard);
      }
      if (due.isEmpty()) {
        break;
      }
      // Each shard's payment timeouts limited to its share of what is left of the cap, so that the
      // call keeps every tenant under it even if each shard filled its limit: in steady traffic a
      // shard has a few due and all 16 go in one call (4 calls at the full batch each before); a
      // backlog claims the same cap a pass, spread over the shards, and a shard that filled its
      // share makes the pass full (the next pass starts at once).
      int mostTaken = open.stream().mapToInt(t -> perTenant.getOrDefault(t, 0)).max().orElse(0);
      int perShard = Math.max(1, Math.min(settings.batch(), (cap - mostTaken) / due.size()));
      Map<Integer, Map<TimerSet, List<String>>> finished = new LinkedHashMap<>();
      due.forEach(shard -> finished.put(shard, acks.take(shard)));
      Map<Integer, FairClaim.Claimed> got;
      try {
        got =
            FairClaim.claim(
                timers,
                due,
                now,
                settings.claimLease().toMillis(),
                open,
                otherKinds.limits(perShard),
                finished,
                setNexts,
                counters.claimCalls);
        visited.addAll(due);
      } catch (RuntimeException e) {
        finished.values().forEach(acks::putBack);
        // As for leases: a shard whose master is unreachable is skipped, the others are swept.
        metrics.count("sweep_shard_errors", 1);
        log.warn("claiming shards {} failed; the other shards are swept: {}", due, e.toString());
        if (held.size() == 1) {
          throw e;
        }
        continue;
      }
      for (int shard : due) {
        FairClaim.Claimed one = got.get(shard);
        lastPassFull |= one.full();
        nextDue.claimed(shard, one.next());
        for (Map.Entry<TimerSet, List<String>> set : one.sets().entrySet()) {
          if (set.getKey().kind() == DeadlineKind.PAYMENT_TIMEOUT) {
            claimed
                .computeIfAbsent(set.getKey().tenantId(), t -> new ArrayList<>())
                .addAll(set.getValue());
            count += set.getValue().size();
            perTenant.merge(set.getKey().tenantId(), set.getValue().size(), Integer::sum);
          } else {
            others.computeIfAbsent(set.getKey(), k -> new ArrayList<>()).addAll(set.getValue());
          }
        }
      }
    }
    claimed.values().removeIf(List::isEmpty);
    counters.claimed.addAndGet(count);
    return claimed;
  }

  /**
   * Whether a pass may start: the time left before the margin must exceed the WeChat step at its
   * bound, counted whole because a batch's prepaid orders are known only once it is loaded and a
   * step cannot be handed over half-way. A claimed batch whose measured closing time does not fit
   * in what remains after the step is handed to the stream ({@link #pass}); the closing
   * transactions' worst case beyond their average is what the margin is for (OtcConfig).
   */
  private boolean passFits(TimeBudget budget, String token) {
    long left = budget.leftMillis();
    if (left > settings.weChatStep().toMillis()) {
      return true;
    }
    log.info(
        "sweep stops (token {}): {} ms left before the {} ms margin, a pass's WeChat step needs"
            + " {} ms",
        token,
        left,
        settings.margin().toMillis(),
        settings.weChatStep().toMillis());
    return false;
  }
}
