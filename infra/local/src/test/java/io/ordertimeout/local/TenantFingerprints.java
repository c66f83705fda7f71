package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.Range;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.StreamMessage;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every tenant's rows and Redis keys as text, so a step can assert that exactly the tenants it acts
 * for changed. A tenant's fingerprint is, per table, its rows (every column; tables keyed by order
 * without a tenant_id column are attributed through their order), and in Redis its timer sets (the
 * contract's {@code {t<s>}:timers[@T][:label]}, members with scores) and the stream entries whose
 * {@code tenantId} is T. The bucket {@code default} (which no step acts for) and the bucket {@code
 * ?} (rows and timer keys of no known tenant) are bystanders of every step.
 *
 * <p>Shared keys (shard leases, the shard count, notification nonces, consumer slots) belong to no
 * tenant and are not compared.
 */
final class TenantFingerprints {
  static final String UNATTRIBUTED = "?";

  /** Every table holding a tenant's data, after schema V8. */
  static final List<String> TABLES =
      List.of(
          "orders",
          "order_items",
          "stock",
          "stock_movements",
          "coupons",
          "order_snapshots",
          "outbox",
          "paid_after_close",
          "dead_letters",
          "compensation_flags",
          "admin_actions",
          "job_pauses");

  /** Cross-tenant checks made by every isolation test in this JVM (printed per class). */
  static final AtomicLong CHECKS = new AtomicLong();

  /** One moment's fingerprints: bucket -> lines, for the database and for Redis. */
  record Snapshot(Map<String, List<String>> db, Map<String, List<String>> redis) {
    List<String> db(String tenant) {
      return db.getOrDefault(tenant, List.of());
    }

    List<String> redis(String tenant) {
      return redis.getOrDefault(tenant, List.of());
    }
  }

  private final TestStack stack;
  private final Set<String> tenants;
  private final Pattern timerKey;

  TenantFingerprints(TestStack stack, List<String> tenants) {
    this.stack = stack;
    this.tenants = Set.copyOf(tenants);
    this.timerKey =
        Pattern.compile(
            Pattern.quote(stack.app().config().keyPrefix())
                + ":\\{t\\d+}:timers(?:@([^:]+))?(?::[a-z]+)?");
  }

  /** Every bucket a step must leave alone unless it acts for it. */
  List<String> buckets() {
    List<String> all = new ArrayList<>(new java.util.TreeSet<>(tenants));
    all.add(UNATTRIBUTED);
    return all;
  }

  Snapshot take() {
    Map<String, List<String>> db = new TreeMap<>();
    for (String table : TABLES) {
      rows(table).forEach(r -> db.computeIfAbsent(r[0], k -> new ArrayList<>()).add(r[1]));
    }
    db.values().forEach(l -> l.sort(null));
    return new Snapshot(db, redis());
  }

  /** [bucket, "table: row text"] for each row of {@code table}. */
  private List<String[]> rows(String table) {
    List<String> columns =
        stack.dump(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE()"
                + " AND table_name = '"
                + table
                + "' ORDER BY ordinal_position");
    boolean tenantColumn = columns.contains("tenant_id|");
    boolean orderColumn = columns.contains("order_id|");
    String sql;
    if (tenantColumn) {
      sql = "SELECT tenant_id, t.* FROM " + table + " t";
    } else if (orderColumn) {
      // before V8: attributed through the order (order ids were unique across tenants then)
      sql =
          "SELECT o.tenant_id, t.* FROM "
              + table
              + " t LEFT JOIN orders o ON o.order_id = t.order_id";
    } else {
      sql = "SELECT NULL, t.* FROM " + table + " t";
    }
    List<String[]> out = new ArrayList<>();
    for (String row : stack.dump(sql)) {
      String owner = row.substring(0, row.indexOf('|'));
      out.add(new String[] {bucket(owner), table + ": " + row.substring(row.indexOf('|') + 1)});
    }
    return out;
  }

  private String bucket(String tenant) {
    return tenant != null && tenants.contains(tenant) ? tenant : UNATTRIBUTED;
  }

  private Map<String, List<String>> redis() {
    var redis = stack.app().redis().sync();
    Map<String, List<String>> out = new TreeMap<>();
    List<String> keys = new ArrayList<>(redis.keys(stack.app().config().keyPrefix() + ":*"));
    keys.sort(null);
    for (String key : keys) {
      Matcher m = timerKey.matcher(key);
      if (m.matches()) {
        String owner = bucket(m.group(1) == null ? "default" : m.group(1));
        for (ScoredValue<String> v : redis.zrangeWithScores(key, 0, -1)) {
          out.computeIfAbsent(owner, k -> new ArrayList<>())
              .add(key + " " + v.getValue() + " " + (long) v.getScore());
        }
      } else if (key.equals(stack.app().stream().key())) {
        for (StreamMessage<String, String> e : redis.xrange(key, Range.create("-", "+"))) {
          String payload = String.valueOf(e.getBody().values().iterator().next());
          out.computeIfAbsent(bucket(tenantOf(payload)), k -> new ArrayList<>())
              .add("stream " + e.getId() + " " + payload);
        }
      }
    }
    return out;
  }

  private static String tenantOf(String payload) {
    try {
      JsonNode node = Json.MAPPER.readTree(payload);
      return node == null || !node.hasNonNull("tenantId") ? null : node.get("tenantId").asText();
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Asserts that every bucket outside {@code actors} is unchanged from {@code before} to {@code
   * after}, in MySQL and in Redis (two cross-tenant checks per bystander), and that each actor
   * changed somewhere.
   */
  static void assertOnly(
      String step, Snapshot before, Snapshot after, List<String> buckets, Set<String> actors) {
    for (String b : buckets) {
      if (actors.contains(b)) {
        assertThat(List.of(after.db(b), after.redis(b)))
            .as("%s: tenant %s (acting) changed nothing", step, b)
            .isNotEqualTo(List.of(before.db(b), before.redis(b)));
        continue;
      }
      assertThat(after.db(b)).as("%s: bystander %s's rows", step, b).isEqualTo(before.db(b));
      assertThat(after.redis(b)).as("%s: bystander %s's Redis", step, b).isEqualTo(before.redis(b));
      CHECKS.addAndGet(2);
    }
  }

  /** Asserts nothing changed for anyone (a refused request): two checks per bucket. */
  static void assertNone(String step, Snapshot before, Snapshot after, List<String> buckets) {
    assertOnly(step, before, after, buckets, Set.of());
  }
}
