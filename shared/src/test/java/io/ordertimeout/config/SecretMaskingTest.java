package io.ordertimeout.config;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import io.ordertimeout.wiring.Components;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The configuration's one init log line shows endpoints, never credentials, whatever characters a
 * password holds: checked over generated passwords full of the characters a URI gives meaning to.
 */
class SecretMaskingTest {
  /** Letters, digits and every character a URI or a JDBC URL parses. */
  private static final String CHARS =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/@:%?#&=;,!$*+~.-_[]()'";

  private static final String SPECIAL = "/@:%?#";

  private static final int CASES = 2_000;

  @Test
  void aRedisPasswordIsMaskedWhateverItHolds() {
    Random random = new Random(20261202);
    for (int i = 0; i < CASES; i++) {
      String password = password(random, CHARS);
      for (String uri :
          new String[] {
            "redis://:" + password + "@cache.internal:6379/0",
            "rediss://default:" + password + "@clustercfg.otc.cache.internal:6379",
            "rediss://app:"
                + URLEncoder.encode(password, StandardCharsets.UTF_8)
                + "@cache.internal:6379?timeout=2s"
          }) {
        String shown = new RedisSettings(uri, false, "otc", 16).toString();

        assertThat(shown).as(uri).doesNotContain(password).contains("cache.internal:6379");
        assertThat(shown).doesNotContain(URLEncoder.encode(password, StandardCharsets.UTF_8));
      }
    }
  }

  @Test
  void aJdbcUrlsUserInformationAndPasswordPropertiesAreMasked() {
    Random random = new Random(42);
    for (int i = 0; i < CASES; i++) {
      String password = password(random, CHARS);
      // in a query a raw & ; , or ) would end the value for the driver too: encoded, or without
      String query = password(random, CHARS.replaceAll("[&;,)]", ""));
      String encoded = URLEncoder.encode(password, StandardCharsets.UTF_8);
      for (String url :
          new String[] {
            "jdbc:mysql://app:" + password + "@db.internal:3306/otc?sslMode=VERIFY_IDENTITY",
            "jdbc:mysql://db.internal:3306/otc?user=app&password="
                + query
                + "&sslMode=VERIFY_IDENTITY",
            "jdbc:mysql://db.internal:3306/otc?password="
                + encoded
                + "&trustCertificateKeyStorePassword="
                + query
                + "&sslMode=VERIFY_IDENTITY",
            "jdbc:mariadb://db.internal:3306/otc?sslMode=verify-full&password=" + query
          }) {
        String shown = new DatabaseSettings(url, "app", "from-the-secret", 2, false).toString();

        assertThat(shown)
            .as(url)
            .doesNotContain(password)
            .doesNotContain(query)
            .doesNotContain(encoded)
            .doesNotContain("from-the-secret")
            .contains("db.internal:3306")
            .containsIgnoringCase("sslMode=");
      }
    }
  }

  /** The whole init, logs and failure of a function whose endpoints hold secrets. */
  @Test
  void theInitLogHoldsNoSecret() {
    String dbPassword = "s3/cr@t:pw%40";
    String urlPassword = "hunter2/@x";
    String redisPassword = "p@ss/w@rd";
    Map<String, String> env = new HashMap<>();
    // port 1: nothing listens, so init fails after its configuration line, as a bad deploy would
    env.put(
        "OTC_MYSQL_URL",
        "jdbc:mysql://app:" + dbPassword + "@127.0.0.1:1/otc?password=" + urlPassword);
    env.put("OTC_MYSQL_PASSWORD", dbPassword);
    env.put("OTC_REDIS_URI", "redis://:" + redisPassword + "@127.0.0.1:1");
    OtcConfig config = OtcConfig.fromEnvironment(env);
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    root.addAppender(log);
    // INFO, as on Lambda (the build runs tests at WARN)
    Level level = root.getLevel();
    root.setLevel(Level.INFO);
    try {
      new Components(config).close();
    } catch (RuntimeException expected) {
      // the database is unreachable
    } finally {
      root.setLevel(level);
      root.detachAppender(log);
    }

    assertThat(log.list)
        .as("log lines of the init")
        .anySatisfy(e -> assertThat(e.getFormattedMessage()).startsWith("configuration: "));
    for (ILoggingEvent e : log.list) {
      String text = e.getFormattedMessage() + throwableText(e.getThrowableProxy());
      for (String secret : new String[] {dbPassword, urlPassword, redisPassword}) {
        assertThat(text).as("log line %s", e.getFormattedMessage()).doesNotContain(secret);
      }
    }
  }

  private static String throwableText(IThrowableProxy t) {
    StringBuilder out = new StringBuilder();
    for (IThrowableProxy p = t; p != null; p = p.getCause()) {
      out.append(' ').append(p.getMessage());
    }
    return out.toString();
  }

  /** 6 to 30 characters of {@code chars}, at least one of them a URI's delimiters. */
  private static String password(Random random, String chars) {
    StringBuilder p = new StringBuilder();
    int length = 6 + random.nextInt(25);
    for (int i = 0; i < length; i++) {
      p.append(chars.charAt(random.nextInt(chars.length())));
    }
    p.insert(random.nextInt(p.length()), SPECIAL.charAt(random.nextInt(SPECIAL.length())));
    return p.toString();
  }
}
