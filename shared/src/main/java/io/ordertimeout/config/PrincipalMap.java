package io.ordertimeout.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A mapping of IAM principal ARN to tenant ids (or {@code "*"}, every tenant), as JSON {@code
 * {"arn:aws:iam::123456789012:role/mall-a":["shop-a"],
 * "arn:aws:iam::123456789012:role/platform":["*"]}}: the one parser and matcher behind
 * OTC_TENANT_PRINCIPALS (who may call the order API for which tenants) and OTC_ADMIN_PRINCIPALS
 * (who may call the admin API for which tenants).
 *
 * <p>How a caller's ARN (API Gateway's requestContext.authorizer.iam.userArn) matches an entry: an
 * entry equal to the ARN matches; and a caller that is an assumed-role session, {@code
 * arn:<partition>:sts::<account>:assumed-role/<role>/<session>}, also matches the role's entry
 * {@code arn:<partition>:iam::<account>:role/<role>} (or {@code .../role/<path>/<role>}: a
 * session's ARN carries no path, so partition, account and the role's name decide). A caller
 * matching several entries gets the union of their tenants. Nothing else matches: no wildcards, no
 * prefixes, no other account.
 */
public final class PrincipalMap {
  /** Every tenant, as a value in the mapping. */
  public static final String ALL = "*";

  /** A tenant id, as PlaceOrderRequests checks it on a body. */
  static final Pattern TENANT_ID = Pattern.compile("[0-9A-Za-z_-]{1,32}");

  /** arn:partition:iam|sts::account:resource; the account is 12 digits. */
  private static final Pattern ARN =
      Pattern.compile("arn:(aws|aws-cn|aws-us-gov):(iam|sts)::(\\d{12}):(.+)");

  private final String variable;
  private final Map<String, Set<String>> entries;

  private PrincipalMap(String variable, Map<String, Set<String>> entries) {
    this.variable = variable;
    // insertion order kept: the init log lists the entries as the variable does
    this.entries = Collections.unmodifiableMap(new LinkedHashMap<>(entries));
  }

  /**
   * Parses the JSON of {@code variable} (named in every error); null or blank is null (unset: what
   * that means is the caller's).
   */
  public static PrincipalMap parse(String variable, String json) {
    if (json == null || json.isBlank()) {
      return null;
    }
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(json);
    } catch (java.io.IOException e) {
      throw invalid(variable, "is not valid JSON: " + e.getMessage());
    }
    if (root == null || !root.isObject() || root.isEmpty()) {
      throw invalid(variable, "must be a non-empty JSON object of principal ARN -> [tenant ids]");
    }
    Map<String, Set<String>> entries = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      requirePrincipal(variable, e.getKey());
      entries.put(e.getKey(), tenants(variable, e.getKey(), e.getValue()));
    }
    return new PrincipalMap(variable, entries);
  }

  /** One entry, {@code arn} -> {@code tenants}, checked as a parsed one is. */
  public static PrincipalMap of(String variable, String arn, Set<String> tenants) {
    requirePrincipal(variable, arn);
    return new PrincipalMap(variable, Map.of(arn, Set.copyOf(tenants)));
  }

  /** The entries as configured, ARN -> tenants. */
  public Map<String, Set<String>> entries() {
    return entries;
  }

  /**
   * The tenants {@code callerArn} is mapped to ({@link #ALL} among them for every tenant); empty
   * for an unmapped caller and for none (null).
   */
  public Set<String> tenantsOf(String callerArn) {
    if (callerArn == null) {
      return Set.of();
    }
    Set<String> tenants = new LinkedHashSet<>();
    String role = roleOfSession(callerArn);
    entries.forEach(
        (arn, allowed) -> {
          if (arn.equals(callerArn) || (role != null && role.equals(roleKey(arn)))) {
            tenants.addAll(allowed);
          }
        });
    return tenants;
  }

  private static void requirePrincipal(String variable, String arn) {
    Matcher m = ARN.matcher(arn == null ? "" : arn);
    if (!m.matches()
        || !(m.group(4).startsWith("role/")
            || m.group(4).startsWith("user/")
            || m.group(4).startsWith("assumed-role/"))) {
      throw invalid(
          variable,
          "key '"
              + arn
              + "' is not an IAM role, user or assumed-role ARN"
              + " (arn:aws:iam::<12-digit account>:role/<name>)");
    }
  }

  private static Set<String> tenants(String variable, String arn, JsonNode tenants) {
    if (!tenants.isArray() || tenants.isEmpty()) {
      throw invalid(variable, "'" + arn + "' must map to a non-empty array of tenant ids or \"*\"");
    }
    Set<String> set = new LinkedHashSet<>();
    for (JsonNode t : tenants) {
      if (!t.isTextual()
          || !(t.textValue().equals(ALL) || TENANT_ID.matcher(t.textValue()).matches())) {
        throw invalid(
            variable,
            "'" + arn + "' lists " + t + "; a tenant id is 1-32 of [0-9A-Za-z_-], or \"*\"");
      }
      set.add(t.textValue());
    }
    return Set.copyOf(set);
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

  private static IllegalArgumentException invalid(String variable, String why) {
    return new IllegalArgumentException("invalid configuration: " + variable + " " + why);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PrincipalMap other
        && variable.equals(other.variable)
        && entries.equals(other.entries);
  }

  @Override
  public int hashCode() {
    return entries.hashCode();
  }

  /** The entries, as the init log shows them (ARNs and tenant ids, nothing secret). */
  @Override
  public String toString() {
    return entries.toString();
  }
}
