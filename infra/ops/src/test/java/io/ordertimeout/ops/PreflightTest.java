package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.model.DomainType;
import software.amazon.awssdk.services.ec2.model.IpPermission;
import software.amazon.awssdk.services.ec2.model.UserIdGroupPair;
import software.amazon.awssdk.services.ec2.model.VpcEndpointType;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;

/**
 * {@code ./ops preflight} against moto_server's EC2 and Secrets Manager, seeded through the SDK
 * with a deployable setup (every check passes, exit 0) and a broken one (each check's own failure,
 * exit 1). Skipped with the reason when moto_server is not on the PATH.
 */
class PreflightTest {
  private static final String REGION = "us-east-1";
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Process moto;
  private static URI endpoint;
  private static Ec2Client ec2;
  private static SecretsManagerClient secrets;

  @BeforeAll
  static void startMoto() throws Exception {
    Path executable = onPath("moto_server");
    Assumptions.assumeTrue(
        executable != null, "moto_server is not on the PATH (pip install 'moto[server]'): skipped");
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    moto =
        new ProcessBuilder(executable.toString(), "-H", "127.0.0.1", "-p", String.valueOf(port))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    awaitListening(port);
    endpoint = URI.create("http://127.0.0.1:" + port);
    StaticCredentialsProvider credentials =
        StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));
    ec2 =
        Ec2Client.builder()
            .region(Region.of(REGION))
            .credentialsProvider(credentials)
            .endpointOverride(endpoint)
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .build();
    secrets =
        SecretsManagerClient.builder()
            .region(Region.of(REGION))
            .credentialsProvider(credentials)
            .endpointOverride(endpoint)
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .build();
  }

  @AfterAll
  static void stopMoto() throws InterruptedException {
    if (ec2 != null) {
      ec2.close();
      secrets.close();
    }
    if (moto != null) {
      moto.destroy();
      if (!moto.waitFor(5, TimeUnit.SECONDS)) {
        moto.destroyForcibly();
      }
    }
  }

  @Test
  void aDeployableSetupPassesEveryCheck() throws Exception {
    Network net = network("10.1", true);
    Map<String, String> params = new LinkedHashMap<>();
    params.put("SubnetIds", net.subnetA + "," + net.subnetB);
    params.put("SecurityGroupId", net.functionSg);
    params.put("DbSecretArn", secret("good-db", dbSecret(true)));
    params.put("WeChatPaySecretArn", secret("good-wechat", weChatSecret()));
    params.put(
        "RedisSecretArn", secret("good-redis", "{\"username\":\"otc-app\",\"password\":\"p\"}"));
    params.put("MysqlUrl", "jdbc:mysql://proxy.example:3306/otc");
    params.put("RedisUri", "rediss://clustercfg.otc.example:6379");
    authorize(net.redisSg, 6379, net.functionSg);
    authorize(net.dbSg, 3306, net.functionSg);

    Result r = preflight(params);

    assertThat(r.exit).as(r.out).isZero();
    assertThat(r.out)
        .doesNotContain("FAIL")
        .contains("PASS  DB secret (DbSecretArn)")
        .contains("PASS  WeChat Pay secret (WeChatPaySecretArn)")
        .contains("1 merchant(s) with loadable keys")
        .contains("PASS  Redis secret (RedisSecretArn)")
        .contains(
            "PASS  JDBC URL (MysqlUrl): connects as jdbc:mysql://proxy.example:3306/otc?sslMode=VERIFY_IDENTITY")
        .contains("PASS  Redis URI (RedisUri)")
        .contains("PASS  subnets (SubnetIds)")
        .contains("PASS  route out of " + net.subnetA)
        .contains("PASS  route out of " + net.subnetB)
        .contains("PASS  Secrets Manager reachable: through the NAT gateways")
        .contains("PASS  EventBridge reachable: through the NAT gateways")
        .contains("PASS  security group (SecurityGroupId)")
        .contains("PASS  Redis admits the functions (6379)")
        .contains("PASS  MySQL admits the functions (3306)")
        .contains("checks passed")
        .doesNotContain("\"password\":\"p\"")
        .doesNotContain("s3cret");
  }

  @Test
  void aBrokenSetupFailsEachCheckWithWhatToFix() throws Exception {
    Network net = network("10.2", false);
    // Secrets Manager through an interface endpoint, EventBridge through nothing
    ec2.createVpcEndpoint(
        r ->
            r.vpcId(net.vpc)
                .serviceName("com.amazonaws." + REGION + ".secretsmanager")
                .vpcEndpointType(VpcEndpointType.INTERFACE)
                .subnetIds(net.subnetA, net.subnetB)
                .privateDnsEnabled(true));
    authorize(net.redisSg, 6379, net.functionSg); // but nobody admits 3306
    Map<String, String> params = new LinkedHashMap<>();
    params.put("SubnetIds", net.subnetA + "," + net.subnetB);
    params.put("SecurityGroupId", net.functionSg);
    params.put("DbSecretArn", secret("bad-db", dbSecret(false)));
    params.put("WeChatPaySecretArn", secret("bad-wechat", "not json"));
    params.put("MysqlUrl", "jdbc:mysql://proxy.example:3306/otc?sslMode=REQUIRED");
    params.put("RedisUri", "rediss://otc-app:s3cret@clustercfg.otc.example:6379");

    Result r = preflight(params);

    assertThat(r.exit).as(r.out).isEqualTo(1);
    assertThat(r.out)
        .contains(
            "FAIL  DB secret (DbSecretArn): secret "
                + params.get("DbSecretArn")
                + " has no 'password'")
        .contains("FAIL  WeChat Pay secret (WeChatPaySecretArn)")
        .contains("is not JSON")
        .contains("PASS  Redis secret (RedisSecretArn): not given")
        .contains("FAIL  JDBC URL (MysqlUrl)")
        .contains("sets sslMode=REQUIRED")
        .contains("FAIL  Redis URI (RedisUri): carries credentials")
        .contains("FAIL  route out of " + net.subnetA)
        .contains("FAIL  route out of " + net.subnetB)
        .contains("needs 0.0.0.0/0 to a NAT gateway")
        .contains("PASS  Secrets Manager reachable: interface endpoint")
        .contains("FAIL  EventBridge reachable")
        .contains("com.amazonaws." + REGION + ".events")
        .contains("PASS  Redis admits the functions (6379)")
        .contains("FAIL  MySQL admits the functions (3306)")
        .contains("checks failed")
        .doesNotContain("s3cret@");
  }

  @Test
  void subnetsInOneAzAndAMissingGroupFail() throws Exception {
    String vpc = ec2.createVpc(r -> r.cidrBlock("10.3.0.0/16")).vpc().vpcId();
    String a = subnet(vpc, "10.3.1.0/24", "us-east-1a");
    String b = subnet(vpc, "10.3.2.0/24", "us-east-1a");
    Map<String, String> params = new LinkedHashMap<>();
    params.put("SubnetIds", a + "," + b);
    params.put("SecurityGroupId", "sg-0123456789abcdef0");

    Result r = preflight(params);

    assertThat(r.exit).isEqualTo(1);
    assertThat(r.out)
        .contains("FAIL  subnets (SubnetIds): all in [us-east-1a]")
        .contains("FAIL  security group (SecurityGroupId): sg-0123456789abcdef0 not found")
        .contains("FAIL  DB secret (DbSecretArn): DbSecretArn is not given");
  }

  @Test
  void aListParameterKeepsItsCommas() {
    assertThat(
            Preflight.parseStackParams(
                "SubnetIds=subnet-a,subnet-b,SecurityGroupId=sg-1,DbSecretArn=arn:aws:x"))
        .containsExactly(
            Map.entry("SubnetIds", "subnet-a,subnet-b"),
            Map.entry("SecurityGroupId", "sg-1"),
            Map.entry("DbSecretArn", "arn:aws:x"));
    assertThat(PreflightNetwork.Cidr.contains("10.0.0.0/16", "10.0.3.0/24")).isTrue();
    assertThat(PreflightNetwork.Cidr.contains("10.0.0.0/24", "10.0.3.0/24")).isFalse();
    assertThat(PreflightNetwork.Cidr.contains("0.0.0.0/0", "10.0.3.0/24")).isTrue();
  }

  // ---- seeding ----

  /** A VPC with two private subnets in two AZs, a function group and Redis / DB groups. */
  private record Network(
      String vpc, String subnetA, String subnetB, String functionSg, String redisSg, String dbSg) {}

  private static Network network(String prefix, boolean nat) {
    String vpc = ec2.createVpc(r -> r.cidrBlock(prefix + ".0.0/16")).vpc().vpcId();
    String a = subnet(vpc, prefix + ".1.0/24", "us-east-1a");
    String b = subnet(vpc, prefix + ".2.0/24", "us-east-1b");
    if (nat) {
      String publicA = subnet(vpc, prefix + ".0.0/24", "us-east-1a");
      String igw = ec2.createInternetGateway(r -> {}).internetGateway().internetGatewayId();
      ec2.attachInternetGateway(r -> r.vpcId(vpc).internetGatewayId(igw));
      String allocation = ec2.allocateAddress(r -> r.domain(DomainType.VPC)).allocationId();
      String natId =
          ec2.createNatGateway(r -> r.subnetId(publicA).allocationId(allocation))
              .natGateway()
              .natGatewayId();
      String table = ec2.createRouteTable(r -> r.vpcId(vpc)).routeTable().routeTableId();
      ec2.createRoute(
          r -> r.routeTableId(table).destinationCidrBlock("0.0.0.0/0").natGatewayId(natId));
      ec2.associateRouteTable(r -> r.routeTableId(table).subnetId(a));
      ec2.associateRouteTable(r -> r.routeTableId(table).subnetId(b));
    }
    return new Network(
        vpc,
        a,
        b,
        group(vpc, prefix + "-fn"),
        group(vpc, prefix + "-redis"),
        group(vpc, prefix + "-db"));
  }

  private static String subnet(String vpc, String cidr, String zone) {
    return ec2.createSubnet(r -> r.vpcId(vpc).cidrBlock(cidr).availabilityZone(zone))
        .subnet()
        .subnetId();
  }

  private static String group(String vpc, String name) {
    return ec2.createSecurityGroup(r -> r.vpcId(vpc).groupName(name).description(name)).groupId();
  }

  private static void authorize(String group, int port, String from) {
    ec2.authorizeSecurityGroupIngress(
        r ->
            r.groupId(group)
                .ipPermissions(
                    IpPermission.builder()
                        .ipProtocol("tcp")
                        .fromPort(port)
                        .toPort(port)
                        .userIdGroupPairs(UserIdGroupPair.builder().groupId(from).build())
                        .build()));
  }

  private static String secret(String name, String value) {
    return secrets
        .createSecret(r -> r.name(name + "-" + System.nanoTime()).secretString(value))
        .arn();
  }

  private static String dbSecret(boolean withPassword) throws Exception {
    Map<String, Object> db = new LinkedHashMap<>();
    db.put("username", "otc_app");
    if (withPassword) {
      db.put("password", "s3cret");
    }
    return JSON.writeValueAsString(db);
  }

  private static String weChatSecret() throws Exception {
    KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
    rsa.initialize(2048);
    KeyPair merchant = rsa.generateKeyPair();
    KeyPair weChat = rsa.generateKeyPair();
    Map<String, String> m = new LinkedHashMap<>();
    m.put("mchid", "1900000001");
    m.put("appid", "wx8888888888888888");
    m.put("merchantSerialNumber", "5157F09EFDC096DE15EBE81A47057A72");
    m.put("privateKey", pem("PRIVATE KEY", merchant.getPrivate().getEncoded()));
    m.put("apiV3Key", "0123456789abcdef0123456789abcdef");
    m.put("wechatPayPublicKeyId", "PUB_KEY_ID_0119000000012025000000000000");
    m.put("wechatPayPublicKey", pem("PUBLIC KEY", weChat.getPublic().getEncoded()));
    m.put("notifyUrl", "https://api.example/wechatpay/notify");
    return JSON.writeValueAsString(m);
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  // ---- running ----

  private record Result(int exit, String out) {}

  private static Result preflight(Map<String, String> params) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    int exit = Preflight.run(params, REGION, ec2, secrets, out);
    System.out.print(bytes.toString(StandardCharsets.UTF_8)); // the report, in the test log
    return new Result(exit, bytes.toString(StandardCharsets.UTF_8));
  }

  private static void awaitListening(int port) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (!moto.isAlive()) {
        throw new IllegalStateException("moto_server exited with " + moto.exitValue());
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException("moto_server did not listen on " + port + " in 30 s");
  }

  private static Path onPath(String command) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(dir, command);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }
}
