package io.ordertimeout.ops;

import io.ordertimeout.ops.Preflight.Check;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.Filter;
import software.amazon.awssdk.services.ec2.model.IpPermission;
import software.amazon.awssdk.services.ec2.model.NatGateway;
import software.amazon.awssdk.services.ec2.model.NatGatewayState;
import software.amazon.awssdk.services.ec2.model.Route;
import software.amazon.awssdk.services.ec2.model.RouteTable;
import software.amazon.awssdk.services.ec2.model.RouteTableAssociation;
import software.amazon.awssdk.services.ec2.model.SecurityGroup;
import software.amazon.awssdk.services.ec2.model.Subnet;
import software.amazon.awssdk.services.ec2.model.VpcEndpoint;

/**
 * The network init needs: the functions' subnets reach WeChat Pay's API (the internet: a NAT
 * gateway, since a Lambda ENI has no public IP), Secrets Manager and EventBridge (the NAT, or an
 * interface endpoint of the service in the VPC with private DNS), and Redis (6379) and MySQL (3306)
 * admit the functions' security group.
 */
final class PreflightNetwork {
  static final int REDIS_PORT = 6379;
  static final int MYSQL_PORT = 3306;
  static final int HTTPS_PORT = 443;

  /** The AWS APIs init and the loops call from inside the VPC, by endpoint service suffix. */
  static final Map<String, String> AWS_SERVICES =
      Map.of("secretsmanager", "Secrets Manager", "events", "EventBridge");

  private final Ec2Client ec2;
  private final String region;

  PreflightNetwork(Ec2Client ec2, String region) {
    this.ec2 = ec2;
    this.region = region;
  }

  List<Check> checks(Map<String, String> params) {
    List<Check> out = new ArrayList<>();
    List<String> subnetIds =
        Arrays.stream(params.getOrDefault("SubnetIds", "").split(","))
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .toList();
    String sgId = params.get("SecurityGroupId");
    List<Subnet> subnets;
    try {
      subnets =
          subnetIds.isEmpty()
              ? List.of()
              : ec2.describeSubnets(r -> r.subnetIds(subnetIds)).subnets();
    } catch (SdkException e) {
      out.add(
          Check.fail(
              "subnets (SubnetIds)", "cannot describe " + subnetIds + ": " + e.getMessage()));
      return out;
    }
    out.add(subnetSpread(subnetIds, subnets));
    if (subnets.isEmpty()) {
      return out;
    }
    String vpc = subnets.get(0).vpcId();
    List<RouteTable> tables = ec2.describeRouteTables(r -> r.filters(vpcFilter(vpc))).routeTables();
    List<String> natSubnets = new ArrayList<>();
    for (Subnet s : subnets) {
      Check route = routeOut(s, tables);
      out.add(route);
      if (route.ok()) {
        natSubnets.add(s.subnetId());
      }
    }
    List<VpcEndpoint> endpoints =
        ec2.describeVpcEndpoints(r -> r.filters(vpcFilter(vpc))).vpcEndpoints();
    AWS_SERVICES.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            e -> out.add(awsService(e.getKey(), e.getValue(), subnets, natSubnets, endpoints)));
    out.addAll(securityGroups(sgId, vpc, subnets));
    return out;
  }

  private static Filter vpcFilter(String vpc) {
    return Filter.builder().name("vpc-id").values(vpc).build();
  }

  private static Check subnetSpread(List<String> wanted, List<Subnet> found) {
    String name = "subnets (SubnetIds)";
    if (wanted.isEmpty()) {
      return Check.fail(name, "SubnetIds is not given");
    }
    Set<String> missing = new LinkedHashSet<>(wanted);
    found.forEach(s -> missing.remove(s.subnetId()));
    if (!missing.isEmpty()) {
      return Check.fail(name, "not found: " + missing);
    }
    Set<String> vpcs = found.stream().map(Subnet::vpcId).collect(Collectors.toSet());
    if (vpcs.size() > 1) {
      return Check.fail(name, "in more than one VPC: " + vpcs);
    }
    Set<String> zones =
        found.stream()
            .map(Subnet::availabilityZone)
            .collect(Collectors.toCollection(java.util.TreeSet::new));
    if (zones.size() < 2) {
      return Check.fail(
          name,
          "all in " + zones + ": the functions need subnets in two or more AZs to survive one");
    }
    return Check.pass(
        name, found.size() + " subnets in " + vpcs.iterator().next() + " over " + zones);
  }

  /**
   * The subnet's route table (its own association, else the VPC's main) sends 0.0.0.0/0 to a NAT.
   */
  private Check routeOut(Subnet subnet, List<RouteTable> tables) {
    String name = "route out of " + subnet.subnetId() + " (" + subnet.availabilityZone() + ")";
    Optional<RouteTable> table = tableOf(subnet.subnetId(), tables);
    if (table.isEmpty()) {
      return Check.fail(name, "no route table (neither associated nor a main one)");
    }
    Optional<Route> defaultRoute =
        table.get().routes().stream()
            .filter(r -> "0.0.0.0/0".equals(r.destinationCidrBlock()))
            .findFirst();
    if (defaultRoute.isEmpty() || defaultRoute.get().natGatewayId() == null) {
      String via =
          defaultRoute.map(r -> "0.0.0.0/0 goes to " + r.gatewayId()).orElse("no 0.0.0.0/0 route");
      return Check.fail(
          name,
          via
              + " in "
              + table.get().routeTableId()
              + ": WeChat Pay's API is on the internet and a Lambda network interface has no public"
              + " IP, so the subnet needs 0.0.0.0/0 to a NAT gateway");
    }
    String natId = defaultRoute.get().natGatewayId();
    List<NatGateway> nats = ec2.describeNatGateways(r -> r.natGatewayIds(natId)).natGateways();
    if (nats.isEmpty() || nats.get(0).state() != NatGatewayState.AVAILABLE) {
      return Check.fail(
          name,
          "0.0.0.0/0 goes to "
              + natId
              + ", which is "
              + (nats.isEmpty() ? "missing" : nats.get(0).stateAsString()));
    }
    return Check.pass(
        name, "0.0.0.0/0 to " + natId + " (available)" + natZoneNote(subnet, nats.get(0)));
  }

  /** HA: a NAT in another AZ works, but that AZ's outage cuts this subnet off. */
  private String natZoneNote(Subnet subnet, NatGateway nat) {
    List<Subnet> natSubnet = ec2.describeSubnets(r -> r.subnetIds(nat.subnetId())).subnets();
    if (natSubnet.isEmpty()
        || natSubnet.get(0).availabilityZone().equals(subnet.availabilityZone())) {
      return "";
    }
    return "; the NAT is in "
        + natSubnet.get(0).availabilityZone()
        + ", so an outage there cuts this subnet off (one NAT per AZ for HA)";
  }

  private static Optional<RouteTable> tableOf(String subnetId, List<RouteTable> tables) {
    for (RouteTable t : tables) {
      for (RouteTableAssociation a : t.associations()) {
        if (subnetId.equals(a.subnetId())) {
          return Optional.of(t);
        }
      }
    }
    return tables.stream()
        .filter(t -> t.associations().stream().anyMatch(a -> Boolean.TRUE.equals(a.main())))
        .findFirst();
  }

  private Check awsService(
      String suffix,
      String label,
      List<Subnet> subnets,
      List<String> natSubnets,
      List<VpcEndpoint> endpoints) {
    String name = label + " reachable";
    String service = "com.amazonaws." + region + "." + suffix;
    Optional<VpcEndpoint> endpoint =
        endpoints.stream()
            .filter(e -> service.equals(e.serviceName()))
            .filter(e -> "available".equalsIgnoreCase(e.stateAsString()))
            .filter(e -> Boolean.TRUE.equals(e.privateDnsEnabled()))
            .findFirst();
    if (endpoint.isPresent()) {
      return Check.pass(
          name,
          "interface endpoint "
              + endpoint.get().vpcEndpointId()
              + " ("
              + service
              + ", private DNS)");
    }
    if (natSubnets.size() == subnets.size()) {
      return Check.pass(name, "through the NAT gateways (no " + service + " endpoint)");
    }
    return Check.fail(
        name,
        "neither a NAT route from every subnet nor an available "
            + service
            + " interface endpoint with private DNS");
  }

  private List<Check> securityGroups(String sgId, String vpc, List<Subnet> subnets) {
    String name = "security group (SecurityGroupId)";
    if (sgId == null || sgId.isBlank()) {
      return List.of(Check.fail(name, "SecurityGroupId is not given"));
    }
    List<SecurityGroup> all =
        ec2.describeSecurityGroups(r -> r.filters(vpcFilter(vpc))).securityGroups();
    Optional<SecurityGroup> own = all.stream().filter(g -> sgId.equals(g.groupId())).findFirst();
    if (own.isEmpty()) {
      return List.of(Check.fail(name, sgId + " not found in " + vpc + ", the subnets' VPC"));
    }
    List<Check> out = new ArrayList<>();
    List<String> closed = new ArrayList<>();
    for (int port : new int[] {REDIS_PORT, MYSQL_PORT, HTTPS_PORT}) {
      if (own.get().ipPermissionsEgress().stream().noneMatch(p -> allowsOut(p, port))) {
        closed.add(Integer.toString(port));
      }
    }
    out.add(
        closed.isEmpty()
            ? Check.pass(name, sgId + " lets the functions out on 6379, 3306 and 443")
            : Check.fail(name, sgId + " has no egress rule for tcp " + String.join(", ", closed)));
    out.add(admitted("Redis admits the functions (6379)", REDIS_PORT, sgId, all, subnets));
    out.add(admitted("MySQL admits the functions (3306)", MYSQL_PORT, sgId, all, subnets));
    return out;
  }

  private static boolean allowsOut(IpPermission p, int port) {
    return coversPort(p, port) && (!p.ipRanges().isEmpty() || !p.userIdGroupPairs().isEmpty());
  }

  /** Some group of the VPC lets the functions' group (or every subnet's CIDR) in on the port. */
  private static Check admitted(
      String name, int port, String sgId, List<SecurityGroup> all, List<Subnet> subnets) {
    List<String> admitting = new ArrayList<>();
    for (SecurityGroup g : all) {
      for (IpPermission p : g.ipPermissions()) {
        if (coversPort(p, port) && (fromGroup(p, sgId) || fromEverySubnet(p, subnets))) {
          admitting.add(g.groupId());
          break;
        }
      }
    }
    if (admitting.isEmpty()) {
      return Check.fail(
          name,
          "no security group in the VPC has an inbound rule for tcp "
              + port
              + " from "
              + sgId
              + " or the subnets' CIDRs: add one to the "
              + (port == REDIS_PORT ? "ElastiCache" : "RDS / RDS Proxy")
              + " group");
    }
    return Check.pass(name, "inbound tcp " + port + " from " + sgId + " in " + admitting);
  }

  private static boolean coversPort(IpPermission p, int port) {
    if ("-1".equals(p.ipProtocol())) {
      return true;
    }
    return "tcp".equalsIgnoreCase(p.ipProtocol())
        && p.fromPort() != null
        && p.toPort() != null
        && p.fromPort() <= port
        && port <= p.toPort();
  }

  private static boolean fromGroup(IpPermission p, String sgId) {
    return p.userIdGroupPairs().stream().anyMatch(pair -> sgId.equals(pair.groupId()));
  }

  private static boolean fromEverySubnet(IpPermission p, List<Subnet> subnets) {
    return subnets.stream()
        .allMatch(
            s -> p.ipRanges().stream().anyMatch(r -> Cidr.contains(r.cidrIp(), s.cidrBlock())));
  }

  /** IPv4 CIDR containment, for an inbound rule written as the subnets' range. */
  static final class Cidr {
    private Cidr() {}

    static boolean contains(String outer, String inner) {
      if (outer == null || inner == null) {
        return false;
      }
      long[] o = parse(outer);
      long[] i = parse(inner);
      if (o[1] > i[1]) {
        return false;
      }
      long mask = o[1] == 0 ? 0 : (0xFFFFFFFFL << (32 - o[1])) & 0xFFFFFFFFL;
      return (o[0] & mask) == (i[0] & mask);
    }

    private static long[] parse(String cidr) {
      String[] parts = cidr.split("/");
      long address = 0;
      for (String octet : parts[0].split("\\.")) {
        address = (address << 8) | Integer.parseInt(octet);
      }
      return new long[] {address, parts.length > 1 ? Integer.parseInt(parts[1]) : 32};
    }
  }
}
