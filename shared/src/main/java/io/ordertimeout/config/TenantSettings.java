package io.ordertimeout.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.domain.TenantIds;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * OTC_TENANT_PRINCIPALS: which tenants each IAM principal calling the order API (AWS_IAM auth) may
 * act for, as JSON {@code {"arn:aws:iam::123456789012:role/mall-a":["shop-a"],
 * "arn:aws:iam::123456789012:role/platform":["*"]}}; {@code "*"} is every tenant.
 *
 * <p>How a caller's ARN (API Gateway's requestContext.authorizer.iam.userArn) matches an entry: an
 * entry equal to the ARN matches; and a caller that is an assumed-role session, {@code
 * arn:<partition>:sts::<account>:assumed-role/<role>/<session>}, also matches the role's entry
 * {@code arn:<partition>:iam::<account>:role/<role>} (or {@code .../role/<path>/<role>}: a
 * session's ARN carries no path, so partition, account and the role's name decide). A caller
 * matching several entries acts for the union of their tenants.
 *
 * <p>Unset (or blank): {@link #UNSET}, every caller acts for the tenant {@code default} only, what
 * the API did before tenants were scoped.
 */
public record TenantSettings(Map<String, Set<String>> principals) {
  /** Every tenant, as a value in the mapping. */
  public static final String ALL = "*";

  /** The tenant every caller acts for when the mapping is unset. */
  public static final String DEFAULT_TENANT = TenantIds.DEFAULT;

  public static final TenantSettings UNSET = new TenantSettings(null);

  /** A tenant id, as PlaceOrderRequests checks it on a body. */
  static final Pattern TENANT_ID = Pattern.compile("[0-9A-Za-z_-]{1,32}");

  /** arn:partition:iam|sts::account:resource; the account is 12 digits. */
  private static final Pattern ARN =
      Pattern.compile("arn:(aws|aws-cn|aws-us-gov):(iam|sts)::(\\d{12}):(.+)");

  public TenantSettings {
    principals = principals == null ? null : Map.copyOf(principals);
  }

  /** Parses OTC_TENANT_PRINCIPALS; null or blank is {@link #UNSET}. */
  public static TenantSettings parse(String json) {
    if (json == null || json.isBlank()) {
      return UNSET;
    }
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(json);
    } catch (java.io.IOException e) {
      throw invalid("is not valid JSON: " + e.getMessage());
    }
    if (root == null || !root.isObject() || root.isEmpty()) {
      throw invalid("must be a non-empty JSON object of principal ARN -> [tenant ids]");
    }
    Map<String, Set<String>> principals = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String arn = e.getKey();
      Matcher m = ARN.matcher(arn);
      if (!m.matches()
          || !(m.group(4).startsWith("role/")
              || m.group(4).startsWith("user/")
              || m.group(4).startsWith("assumed-role/"))) {
        throw invalid(
            "key '"
                + arn
                + "' is not an IAM role, user or assumed-role ARN"
                + " (arn:aws:iam::<12-digit account>:role/<name>)");
      }
      JsonNode tenants = e.getValue();
      if (!tenants.isArray() || tenants.isEmpty()) {
        throw invalid("'" + arn + "' must map to a non-empty array of tenant ids or \"*\"");
      }
      Set<String> set = new LinkedHashSet<>();
      for (JsonNode t : tenants) {
        if (!t.isTextual()
            || !(t.textValue().equals(ALL) || TENANT_ID.matcher(t.textValue()).matches())) {
          throw invalid(
              "'" + arn + "' lists " + t + "; a tenant id is 1-32 of [0-9A-Za-z_-], or \"*\"");
        }
        set.add(t.textValue());
      }
      principals.put(arn, Set.copyOf(set));
    }
    return new TenantSettings(principals);
  }

  public boolean isSet() {
    return principals != null;
  }

  /**
   * The tenants {@code callerArn} may act for ({@link #ALL} among them for every tenant); empty for
   * an unmapped caller. Unset: {@code default} for every caller, even one without an ARN.
   */
  public Set<String> tenantsOf(String callerArn) {
    if (principals == null) {
      return Set.of(DEFAULT_TENANT);
    }
    if (callerArn == null) {
      return Set.of();
    }
    Set<String> tenants = new LinkedHashSet<>();
    String role = roleOfSession(callerArn);
    principals.forEach(
        (arn, allowed) -> {
          if (arn.equals(callerArn) || (role != null && role.equals(roleKey(arn)))) {
            tenants.addAll(allowed);
          }
        });
    return tenants;
  }

  /** "partition:account:role" of an assumed-role session ARN, else null. */
  private static String roleOfSession(String arn) {
    Matcher m = ARN.matcher(arn);
    if (!m.matches() || !m.group(2).equals("sts") || !m.group(4).startsWith("assumed-role/")) {
      return null;
    }
    String[] parts = m.group(4).split("/");
    return parts.length >= 3 ? m.group(1) + ":" + m.group(3) + ":" + parts[1] : null;
  }

  /** "partition:account:role" of a role ARN entry (its name, the path dropped), else null. */
  private static String roleKey(String arn) {
    Matcher m = ARN.matcher(arn);
    if (!m.matches() || !m.group(2).equals("iam") || !m.group(4).startsWith("role/")) {
      return null;
    }
    String name = m.group(4).substring(m.group(4).lastIndexOf('/') + 1);
    return m.group(1) + ":" + m.group(3) + ":" + name;
  }

  private static IllegalArgumentException invalid(String why) {
    return new IllegalArgumentException("invalid configuration: OTC_TENANT_PRINCIPALS " + why);
  }

  @Override
  public String toString() {
    return "tenantPrincipals=" + (principals == null ? "unset (default tenant)" : principals);
  }
}
