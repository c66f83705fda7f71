package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.outbox.RelaySettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The configuration reference cannot drift from the code: every {@code OTC_*} variable the
 * functions' code reads (a string literal of shared's and the functions' main code) has a row in a
 * table of docs/, and every variable a row names is read by that code or its resources (the log
 * configuration), unless the row itself says it is "read by no code" (a deploy-time revision). And
 * every default a row states is the code's: the settings read without the variable equal the
 * settings read with it set to the documented value.
 */
class ConfigurationDocsTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final Pattern LITERAL = Pattern.compile("\"(OTC_[A-Z0-9_]+)\"");
  private static final Pattern ROW = Pattern.compile("^\\| ([^|]+) \\|(.*)$");
  private static final Pattern NAME = Pattern.compile("`(OTC_[A-Z0-9_]+|_[A-Z0-9_]+)`");

  @Test
  void everyVariableTheCodeReadsIsDocumentedAndEveryDocumentedOneIsRead() throws IOException {
    Set<String> read = new TreeSet<>();
    StringBuilder resources = new StringBuilder();
    for (String module : List.of("shared", "functions")) {
      try (Stream<Path> files = Files.walk(ROOT.resolve(module))) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          String path = ROOT.relativize(f).toString().replace('\\', '/');
          if (path.contains("/target/") || !path.contains("/src/main/")) {
            continue;
          }
          String text = Files.readString(f);
          if (path.endsWith(".java")) {
            Matcher m = LITERAL.matcher(text);
            while (m.find()) {
              read.add(m.group(1));
            }
          } else {
            resources.append(text);
          }
        }
      }
    }
    Set<String> documented = new TreeSet<>();
    Set<String> readByNoCode = new TreeSet<>();
    for (Path f : Docs.files(ROOT)) {
      for (String line : Docs.prose(Docs.read(f)).values()) {
        Matcher row = ROW.matcher(line);
        if (!row.matches()) {
          continue;
        }
        Matcher name = NAME.matcher(row.group(1));
        String first = null;
        while (name.find()) {
          String n = name.group(1);
          if (n.startsWith("OTC_")) {
            first = n;
          } else if (first != null) {
            // `OTC_WECHAT_MCHID`, `_APPID`: the shorthand shares the first name's prefix
            n = first.substring(0, first.indexOf('_', 4)) + n;
          } else {
            continue;
          }
          documented.add(n);
          if (row.group(2).contains("read by no code")) {
            readByNoCode.add(n);
          }
        }
      }
    }

    assertThat(read).as("variables the code reads").hasSizeGreaterThan(40);
    assertThat(documented).as("variables the code reads, documented").containsAll(read);
    Set<String> unread = new TreeSet<>(documented);
    unread.removeAll(read);
    unread.removeAll(readByNoCode);
    unread.removeIf(n -> resources.indexOf(n) >= 0);
    assertThat(unread).as("documented variables no code reads").isEmpty();
  }

  /** Variables read outside the settings records: the log configuration reads OTC_LOG_LEVEL. */
  private static final Set<String> OTHER_READERS = Set.of("OTC_LOG_LEVEL");

  /** A stated value: a number, or a word in backticks (not prose such as "unset" or "empty"). */
  private static final Pattern VALUE = Pattern.compile("(\\d+)|`([A-Za-z0-9.]+)`");

  @Test
  void everyDocumentedDefaultIsTheCodesDefault() throws IOException {
    Map<String, String> defaults = documentedDefaults();
    assertThat(defaults).as("documented value defaults").hasSizeGreaterThan(35);
    Map<String, String> base =
        Map.of(
            "OTC_MYSQL_URL",
            "jdbc:mysql://127.0.0.1:3306/otc",
            "OTC_REDIS_URI",
            "redis://127.0.0.1:6379");
    List<String> settings = settings(base);
    List<String> wrong = new ArrayList<>();
    List<String> unread = new ArrayList<>();
    defaults.forEach(
        (name, value) -> {
          if (!settings.equals(settings(with(base, name, value)))) {
            wrong.add(name + " documented as " + value);
          }
          if (!OTHER_READERS.contains(name)
              && settings.equals(settings(with(base, name, another(value))))) {
            unread.add(name);
          }
        });
    assertThat(wrong).as("documented defaults the code does not have").isEmpty();
    assertThat(unread).as("documented defaults no settings record reads").isEmpty();
  }

  /** Rows of docs/ whose default column names values, one per variable of the row. */
  private static Map<String, String> documentedDefaults() throws IOException {
    Map<String, String> defaults = new LinkedHashMap<>();
    for (Path f : Docs.files(ROOT)) {
      for (String line : Docs.prose(Docs.read(f)).values()) {
        String[] cells = line.split("\\|", -1);
        if (cells.length < 4 || !cells[1].contains("`OTC_")) {
          continue;
        }
        List<String> names = new ArrayList<>();
        Matcher name = NAME.matcher(cells[1]);
        while (name.find()) {
          String n = name.group(1);
          names.add(
              n.startsWith("OTC_")
                  ? n
                  : names.get(0).substring(0, names.get(0).indexOf('_', 4)) + n);
        }
        String[] values = cells[2].trim().split(", ");
        if (values.length != names.size()) {
          continue;
        }
        for (int i = 0; i < values.length; i++) {
          Matcher v = VALUE.matcher(values[i]);
          if (v.matches()) {
            defaults.put(names.get(i), v.group(1) != null ? v.group(1) : v.group(2));
          }
        }
      }
    }
    return defaults;
  }

  /** What each settings record reads from {@code env}, or why it refused. */
  private static List<String> settings(Map<String, String> env) {
    List<String> read = new ArrayList<>();
    read.add(attempt(() -> OtcConfig.fromEnvironment(env)));
    read.add(attempt(() -> CompensationSettings.fromEnvironment(env)));
    read.add(attempt(() -> RelaySettings.fromEnvironment(env)));
    read.add(attempt(() -> io.ordertimeout.reconcile.ReconciliationSettings.fromEnvironment(env)));
    return read;
  }

  private static String attempt(java.util.function.Supplier<Object> read) {
    try {
      return String.valueOf(read.get());
    } catch (RuntimeException e) {
      return "refused: " + e.getMessage();
    }
  }

  private static Map<String, String> with(Map<String, String> base, String name, String value) {
    Map<String, String> env = new HashMap<>(base);
    env.put(name, value);
    return env;
  }

  /** A value other than {@code value} of the same kind. */
  private static String another(String value) {
    if (value.matches("\\d+")) {
      return String.valueOf(Long.parseLong(value) * 2 + 1);
    }
    if (value.equals("true") || value.equals("false")) {
      return String.valueOf(!Boolean.parseBoolean(value));
    }
    if (value.matches("P\\d+D")) {
      return "P" + (Integer.parseInt(value.substring(1, value.length() - 1)) + 1) + "D";
    }
    return value + "x";
  }
}
