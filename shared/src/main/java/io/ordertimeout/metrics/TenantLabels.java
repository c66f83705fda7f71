package io.ordertimeout.metrics;

import java.util.HashSet;
import java.util.Set;

/**
 * The values the {@code Tenant} dimension of a metric may take in one execution environment (one
 * {@link Metrics} registry): the first {@link #MAX_TENANTS} tenants it sees keep their own id,
 * every later one is published as {@link #OTHER}. So an environment publishes at most 21 tenant
 * series per metric whatever the number of tenants: each CloudWatch series (metric name x dimension
 * values) is a custom metric billed monthly, and a dimension taking every onboarded tenant's id
 * would grow the bill and the dashboards with the tenant count. A tenant first seen after the 20th
 * is counted under {@link #OTHER} until its environments are replaced (a deployment; Lambda
 * recycles environments within hours); the undimensioned aggregate, which template.yaml's alarms
 * read, always counts every tenant.
 */
public final class TenantLabels {
  /** Tenants with a series of their own per environment: 20 covers a mall platform's big ones. */
  public static final int MAX_TENANTS = 20;

  /**
   * The label of every tenant after the first {@link #MAX_TENANTS}. Parentheses are outside a
   * tenant id's alphabet (domain.TenantIds: {@code [a-z0-9_-]}), so no tenant can be mistaken for
   * it.
   */
  public static final String OTHER = "(other)";

  private final int max;

  /** Guarded by this: a label is decided once, under one lock, and never changes. */
  private final Set<String> own = new HashSet<>();

  public TenantLabels() {
    this(MAX_TENANTS);
  }

  TenantLabels(int max) {
    this.max = max;
  }

  /** The tenant's own id while fewer than the cap have one, else {@link #OTHER}; never changes. */
  public synchronized String label(String tenantId) {
    if (own.contains(tenantId) || own.size() < max) {
      own.add(tenantId);
      return tenantId;
    }
    return OTHER;
  }
}
