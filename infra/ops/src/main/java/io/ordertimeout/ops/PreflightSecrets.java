package io.ordertimeout.ops;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.aws.DbCredentials;
import io.ordertimeout.aws.RedisLogin;
import io.ordertimeout.aws.Secrets;
import io.ordertimeout.aws.SecretsMerchantDirectory;
import io.ordertimeout.mysql.JdbcTransport;
import io.ordertimeout.ops.Preflight.Check;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;

/**
 * The secrets and URLs init reads: each secret exists, is JSON of the shape init parses (the same
 * parsers), and the WeChat Pay keys are PEM keys the SDK can load; the JDBC URL verifies the
 * server, the Redis URI carries no password. No value is printed.
 */
final class PreflightSecrets {
  private final Secrets secrets;

  PreflightSecrets(SecretsManagerClient client) {
    this.secrets = new Secrets(client);
  }

  List<Check> checks(Map<String, String> params) {
    List<Check> out = new ArrayList<>();
    out.add(dbSecret(params));
    out.add(weChatSecret(params.get("WeChatPaySecretArn")));
    out.add(redisSecret(params.get("RedisSecretArn")));
    String url = params.get("MysqlUrl");
    if (url != null) {
      out.add(mysqlUrl(url));
    }
    String redisUri = params.get("RedisUri");
    if (redisUri != null) {
      out.add(redisUri(redisUri));
    }
    return out;
  }

  private Check dbSecret(Map<String, String> params) {
    String name = "DB secret (DbSecretArn)";
    String arn = params.get("DbSecretArn");
    if (arn == null || arn.isBlank()) {
      return Check.fail(name, "DbSecretArn is not given");
    }
    try {
      DbCredentials db = DbCredentials.parse(arn, secrets.json(arn));
      if (params.get("MysqlUrl") == null) {
        db.jdbcUrl(arn);
      }
      return Check.pass(name, arn + " parses (" + db + ")");
    } catch (RuntimeException e) {
      return Check.fail(name, e.getMessage());
    }
  }

  private Check weChatSecret(String arn) {
    String name = "WeChat Pay secret (WeChatPaySecretArn)";
    if (arn == null || arn.isBlank()) {
      return Check.fail(name, "WeChatPaySecretArn is not given");
    }
    try {
      SecretsMerchantDirectory.load(secrets, arn);
      JsonNode json = secrets.json(arn);
      JsonNode tenants = json.get("tenants");
      int merchants = 0;
      if (tenants == null) {
        keys(arn, json);
        merchants = 1;
      } else {
        for (Iterator<Map.Entry<String, JsonNode>> it = tenants.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          keys(arn + " tenant " + e.getKey(), e.getValue());
          merchants++;
        }
      }
      return Check.pass(name, arn + " parses, " + merchants + " merchant(s) with loadable keys");
    } catch (RuntimeException e) {
      return Check.fail(name, e.getMessage());
    }
  }

  /** The merchant's RSA private key (PKCS#8) and WeChat Pay's public key (X.509) load. */
  private static void keys(String where, JsonNode merchant) {
    try {
      KeyFactory rsa = KeyFactory.getInstance("RSA");
      rsa.generatePrivate(new PKCS8EncodedKeySpec(pem(merchant.get("privateKey").asText())));
      rsa.generatePublic(new X509EncodedKeySpec(pem(merchant.get("wechatPayPublicKey").asText())));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "secret "
              + where
              + ": privateKey or wechatPayPublicKey is not an RSA PEM key ("
              + e.getClass().getSimpleName()
              + ")",
          e);
    }
  }

  private static byte[] pem(String text) {
    String body = text.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
    return Base64.getDecoder().decode(body);
  }

  private Check redisSecret(String arn) {
    String name = "Redis secret (RedisSecretArn)";
    if (arn == null || arn.isBlank()) {
      return Check.pass(name, "not given: no Redis AUTH, the security groups alone admit");
    }
    try {
      boolean user = RedisLogin.parse(arn, secrets.json(arn)).username() != null;
      return Check.pass(name, arn + " parses (" + (user ? "RBAC user" : "default user") + ")");
    } catch (RuntimeException e) {
      return Check.fail(name, e.getMessage());
    }
  }

  private static Check mysqlUrl(String url) {
    String name = "JDBC URL (MysqlUrl)";
    try {
      return Check.pass(name, "connects as " + JdbcTransport.requireVerified(url, "(any)"));
    } catch (IllegalArgumentException e) {
      return Check.fail(name, e.getMessage());
    }
  }

  private static Check redisUri(String uri) {
    String name = "Redis URI (RedisUri)";
    if (!uri.startsWith("rediss://")) {
      return Check.fail(
          name, "not a TLS URI (rediss://): ElastiCache in-transit encryption is required");
    }
    if (uri.matches("rediss://[^/]*@.*")) {
      return Check.fail(name, "carries credentials: put them in the secret RedisSecretArn names");
    }
    return Check.pass(name, "TLS, no credentials in the URI");
  }
}
