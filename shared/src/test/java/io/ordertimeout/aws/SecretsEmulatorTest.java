package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.mysql.Database;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wiring.Components;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;

/**
 * The Secrets Manager read against an AWS emulator (LocalStack or moto_server, see {@link
 * AwsEmulator}): secrets are created through the real API, read by the production code, and the DB
 * credentials open a real connection to the embedded MariaDB.
 */
class SecretsEmulatorTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static AwsEmulator emulator;
  private static SecretsManagerClient admin;

  @BeforeAll
  static void startEmulator() {
    emulator = AwsEmulator.start();
    admin =
        SecretsManagerClient.builder()
            .region(Region.of(AwsEmulator.REGION))
            .credentialsProvider(AwsEmulator.CREDENTIALS)
            .endpointOverride(emulator.endpoint())
            .httpClient(UrlConnectionHttpClient.create())
            .build();
  }

  @AfterAll
  static void stopEmulator() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (emulator != null) {
      emulator.close();
    }
  }

  @Test
  void dbCredentialsFromTheSecretOpenTheDatabase() throws SQLException {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("secrets");
    String user = "otc_" + UUID.randomUUID().toString().substring(0, 8);
    String password = "pw-" + UUID.randomUUID();
    createDbUser(servers, schema, user, password);
    String arn = createSecret(Map.of("username", user, "password", password));
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("secrets"));
    env.put("OTC_MIGRATE_ON_START", "true");
    env.put(ConfigLoader.DB_SECRET_ARN, arn);

    try (Secrets secrets = newSecrets()) {
      OtcConfig config = ConfigLoader.load(env, () -> secrets);

      assertThat(config.mysqlUser()).isEqualTo(user);
      assertThat(config.mysqlPassword()).isEqualTo(password);
      assertThat(config.toString()).doesNotContain(password);
      try (Components app = new Components(config);
          Connection c = app.dataSource().getConnection();
          ResultSet rs =
              c.createStatement()
                  .executeQuery(
                      "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '"
                          + schema
                          + "' AND table_name = 'orders'")) {
        rs.next();
        assertThat(rs.getInt(1)).as("Flyway migrated through the secret's credentials").isOne();
      }
    } finally {
      runAsRoot(
          servers, schema, "DROP USER IF EXISTS '" + user + "'@'localhost', '" + user + "'@'%'");
      servers.dropSchema(schema);
    }
  }

  /**
   * A rotation as Secrets Manager's rotation function does it, against the emulator and the real
   * MariaDB: the password changes in the database (ALTER USER), then in the secret. Placements and
   * closes before and after it all land; the pool re-read the secret on MySQL's error 1045. A
   * second rotation is picked up by the SnapStart restore hook without any refused login.
   */
  @Test
  void aRotatedDbSecretIsReadAgainWhenMySqlRefusesTheOldPasswordAndAfterRestore()
      throws SQLException {
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("rotated");
    String user = "otc_" + UUID.randomUUID().toString().substring(0, 8);
    createDbUser(servers, schema, user, "pw-1");
    String arn = createSecret(Map.of("username", user, "password", "pw-1"));
    Map<String, String> env = new LinkedHashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("rotated"));
    env.put("OTC_MIGRATE_ON_START", "true");
    env.put(ConfigLoader.DB_SECRET_ARN, arn);
    try (Secrets secrets = newSecrets();
        Components app =
            new Components(
                ConfigLoader.load(env, () -> secrets),
                null,
                null,
                ConfigLoader.dbLogins(env, () -> secrets))) {
      Tx tx = new Tx(app.dataSource());
      tx.inTransaction(
          "seed",
          c ->
              c.createStatement()
                  .executeUpdate(
                      "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', 'sku-s', 100, 100)"));
      placeAndCancelHalf(app, "before", 10);

      for (String host : new String[] {"localhost", "%"}) {
        runAsRoot(servers, schema, "ALTER USER '" + user + "'@'" + host + "' IDENTIFIED BY 'pw-2'");
      }
      admin.putSecretValue(
          r -> r.secretId(arn).secretString(json(Map.of("username", user, "password", "pw-2"))));
      app.dataSource().getHikariPoolMXBean().softEvictConnections();
      placeAndCancelHalf(app, "after", 10);

      assertThat(Database.logins(app.dataSource()).login().password()).isEqualTo("pw-2");
      assertThat(count(tx, "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isEqualTo(10);
      assertThat(count(tx, "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(10);
      assertThat(count(tx, "SELECT reserved FROM stock WHERE sku_id = 'sku-s'")).isEqualTo(10);

      for (String host : new String[] {"localhost", "%"}) {
        runAsRoot(servers, schema, "ALTER USER '" + user + "'@'" + host + "' IDENTIFIED BY 'pw-3'");
      }
      admin.putSecretValue(
          r -> r.secretId(arn).secretString(json(Map.of("username", user, "password", "pw-3"))));
      long reloads = Database.logins(app.dataSource()).reloads();
      new SnapStartHooks(app.dataSource(), app.redis()).afterRestore(null);

      assertThat(Database.logins(app.dataSource()).login().password()).isEqualTo("pw-3");
      assertThat(Database.logins(app.dataSource()).reloads()).isEqualTo(reloads + 1);
      placeAndCancelHalf(app, "restored", 2);
      assertThat(count(tx, "SELECT COUNT(*) FROM orders")).isEqualTo(22);
      new InvariantChecker(app.dataSource()).assertHolds();
    } finally {
      runAsRoot(
          servers, schema, "DROP USER IF EXISTS '" + user + "'@'localhost', '" + user + "'@'%'");
      servers.dropSchema(schema);
    }
  }

  private static void placeAndCancelHalf(Components app, String prefix, int n) {
    for (int i = 0; i < n; i++) {
      String id = prefix + "-" + i;
      app.placeOrders()
          .place(
              new PlaceOrderCommand(
                  id, "default", "u-" + i, List.of(new OrderItem("sku-s", 1)), null, 100, 600));
      if (i % 2 == 1) {
        app.closer().close(TenantIds.DEFAULT, List.of(id), CloseReason.USER_CANCEL);
      }
    }
  }

  private static long count(Tx tx, String sql) {
    return tx.read(
        sql,
        c -> {
          try (ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
          }
        });
  }

  /** A least-privilege DB user like the one the RDS secret holds (the embedded root has none). */
  private static void createDbUser(
      EmbeddedServers servers, String schema, String user, String password) throws SQLException {
    for (String host : new String[] {"localhost", "%"}) {
      runAsRoot(
          servers,
          schema,
          "CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY '" + password + "'");
      runAsRoot(
          servers, schema, "GRANT ALL ON `" + schema + "`.* TO '" + user + "'@'" + host + "'");
    }
  }

  private static void runAsRoot(EmbeddedServers servers, String schema, String sql)
      throws SQLException {
    try (Connection c =
            DriverManager.getConnection(
                servers.jdbcUrl(schema), servers.mysqlUser(), servers.mysqlPassword());
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  @Test
  void endpointComesFromTheSecretWhenNoUrlIsSet() {
    String arn =
        createSecret(
            Map.of(
                "username", "otc_app",
                "password", "s3cret-Pa55",
                "host", "otc-proxy.proxy-abc.ap-southeast-1.rds.amazonaws.com",
                "port", 3306,
                "dbname", "otc"));
    Map<String, String> env =
        Map.of("OTC_REDIS_URI", "redis://127.0.0.1:6379", ConfigLoader.DB_SECRET_ARN, arn);

    try (Secrets secrets = newSecrets()) {
      OtcConfig config = ConfigLoader.load(env, () -> secrets);

      assertThat(config.mysqlUrl())
          .isEqualTo("jdbc:mysql://otc-proxy.proxy-abc.ap-southeast-1.rds.amazonaws.com:3306/otc");
      assertThat(config.mysqlUser()).isEqualTo("otc_app");
    }
  }

  @Test
  void secretIsReadOncePerEnvironment() {
    String arn = createSecret(Map.of("username", "first", "password", "p1"));
    try (Secrets secrets = newSecrets()) {
      assertThat(secrets.json(arn).get("username").asText()).isEqualTo("first");

      admin.putSecretValue(r -> r.secretId(arn).secretString(json(Map.of("username", "second"))));

      assertThat(secrets.json(arn).get("username").asText())
          .as("cached for the execution environment's life")
          .isEqualTo("first");
      try (Secrets fresh = newSecrets()) {
        assertThat(fresh.json(arn).get("username").asText()).isEqualTo("second");
      }
    }
  }

  @Test
  void merchantKeysFromTheSecret() throws NoSuchAlgorithmException {
    Map<String, Object> merchant = merchant("1900000001");
    String arn = createSecret(Map.of("tenants", Map.of("mall-a", merchant)));

    try (Secrets secrets = newSecrets()) {
      SecretsMerchantDirectory directory = SecretsMerchantDirectory.load(secrets, arn);

      MerchantCredentials credentials = directory.forTenant("mall-a");
      assertThat(credentials.mchid()).isEqualTo("1900000001");
      assertThat(credentials.privateKeyPem()).isEqualTo(merchant.get("privateKey"));
      assertThat(credentials.apiV3Key()).hasSize(32);
      assertThat(credentials.toString())
          .doesNotContain("PRIVATE KEY", (String) merchant.get("apiV3Key"));
      assertThatThrownBy(() -> directory.forTenant("mall-b"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("mall-b")
          .hasMessageContaining("[mall-a]");
    }
  }

  @Test
  void missingSecretFailsWithItsIdAndNothingElse() {
    String arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:otc/missing-AbCdEf";
    try (Secrets secrets = newSecrets()) {
      assertThatThrownBy(() -> secrets.secretString(arn))
          .isInstanceOf(SecretUnavailableException.class)
          .hasMessageContaining(arn);
    }
  }

  @Test
  void secretThatIsNotJsonDoesNotLeakItsText() {
    String arn = createSecretString("hunter2-not-json");
    try (Secrets secrets = newSecrets()) {
      assertThatThrownBy(() -> secrets.json(arn))
          .isInstanceOf(SecretUnavailableException.class)
          .hasMessageContaining(arn)
          .hasMessageNotContaining("hunter2");
    }
  }

  private static Secrets newSecrets() {
    return Secrets.create(AwsEmulator.REGION, emulator.endpoint(), AwsEmulator.CREDENTIALS);
  }

  private static String createSecret(Map<String, ?> value) {
    return createSecretString(json(value));
  }

  private static String createSecretString(String value) {
    String name = "otc/test-" + UUID.randomUUID();
    return admin.createSecret(r -> r.name(name).secretString(value)).arn();
  }

  /**
   * A merchant's secret with keys of its own: two calls never share a key (the ring holds more
   * pairs than one test asks for), yet the pairs are generated once per JVM rather than twice per
   * call, which was a fifth of this module's test CPU.
   */
  static Map<String, Object> merchant(String mchid) throws NoSuchAlgorithmException {
    KeyPair merchantKey = nextKeyPair();
    KeyPair platformKey = nextKeyPair();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mchid", mchid);
    m.put("appid", "wx8888888888888888");
    m.put("merchantSerialNumber", "5157F09EFDC096DE15EBE81A47057A7232F1B8E1");
    m.put("privateKey", pem("PRIVATE KEY", merchantKey.getPrivate().getEncoded()));
    m.put("apiV3Key", "0123456789abcdef0123456789abcdef");
    m.put("wechatPayPublicKeyId", "PUB_KEY_ID_0119000000012025000000000000000000");
    m.put("wechatPayPublicKey", pem("PUBLIC KEY", platformKey.getPublic().getEncoded()));
    m.put("notifyUrl", "https://api.example.com/wechatpay/notify");
    return m;
  }

  private static final int KEY_RING_SIZE = 8;
  private static final List<KeyPair> KEY_RING = new ArrayList<>();
  private static int nextKey;

  private static synchronized KeyPair nextKeyPair() throws NoSuchAlgorithmException {
    if (KEY_RING.isEmpty()) {
      KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
      rsa.initialize(2048);
      for (int i = 0; i < KEY_RING_SIZE; i++) {
        KEY_RING.add(rsa.generateKeyPair());
      }
    }
    KeyPair pair = KEY_RING.get(nextKey);
    nextKey = (nextKey + 1) % KEY_RING_SIZE;
    return pair;
  }

  private static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }

  private static String json(Map<String, ?> value) {
    try {
      return JSON.writeValueAsString(value);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
