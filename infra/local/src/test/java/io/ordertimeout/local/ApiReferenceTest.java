package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.payment.PaymentMismatchException;
import io.ordertimeout.wechat.InvalidNotificationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * The HTTP reference (docs/reference/http-api.md and admin-api.md) cannot drift from the template
 * and the code: every route of template.yaml has a section there and no section names a route the
 * template lacks; every section has a status table with its success status; every error code a
 * table names is one the code answers, and every code the code answers is in the reference.
 */
class ApiReferenceTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final List<Path> REFERENCE =
      List.of(
          ROOT.resolve("docs/reference/http-api.md"), ROOT.resolve("docs/reference/admin-api.md"));
  private static final Pattern ROUTE = Pattern.compile("`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`");
  private static final Pattern STATUS_ROW = Pattern.compile("^\\| ([1-5]\\d\\d) \\|(.*)$");
  private static final Pattern CODE = Pattern.compile("`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)`");

  /**
   * Codes given to an API error where the source names them: {@code new ApiError(400, "X"}, {@code
   * AdminRefusal.badRequest("X"}, {@code new AdminRefusal(Kind.NOT_FOUND, "X"}, {@code
   * Json.error("X"}.
   */
  private static final Pattern THROWN =
      Pattern.compile(
          "(?:ApiError|AdminRefusal|Json\\.error)(?:\\.[a-zA-Z]+)?\\(\\s*(?:[\\w.]+,\\s*)?\"([A-Z][A-Z0-9_]+)\"");

  private static final Pattern LITERAL = Pattern.compile("\"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\"");

  /** Reasons answered as another code, named in the reference's text rather than its tables. */
  private static final Set<String> ANSWERED_AS_ANOTHER = Set.of("UNKNOWN_SERIAL", "UNKNOWN_TENANT");

  /** Route key of each section (a heading naming routes) to the section's lines. */
  private static Map<String, List<String>> sections() {
    Map<String, List<String>> sections = new LinkedHashMap<>();
    for (Path f : REFERENCE) {
      List<List<String>> current = new ArrayList<>();
      for (String line : Docs.prose(Docs.read(f)).values()) {
        if (line.startsWith("#")) {
          current = new ArrayList<>();
          Matcher route = ROUTE.matcher(line);
          while (route.find()) {
            List<String> lines = new ArrayList<>();
            assertThat(sections.put(route.group(1), lines))
                .as("a second section for " + route.group(1))
                .isNull();
            current.add(lines);
          }
        } else {
          current.forEach(lines -> lines.add(line));
        }
      }
    }
    return sections;
  }

  @Test
  void everyRouteOfTheTemplateHasASectionAndEverySectionARoute() {
    Set<String> template = new TreeSet<>();
    SamTemplate.read(Main.templatePath()).routes().forEach(r -> template.add(r.routeKey()));

    assertThat(template).hasSizeGreaterThan(20);
    assertThat(new TreeSet<>(sections().keySet())).isEqualTo(template);
  }

  @Test
  void everySectionHasAStatusTableWithItsSuccess() {
    List<String> without = new ArrayList<>();
    sections()
        .forEach(
            (route, lines) -> {
              boolean success =
                  lines.stream()
                      .map(STATUS_ROW::matcher)
                      .anyMatch(m -> m.matches() && m.group(1).startsWith("2"));
              if (!success) {
                without.add(route);
              }
            });
    assertThat(without).as("routes whose section has no 2xx status row").isEmpty();
  }

  @Test
  void theReferencesErrorCodesAreTheCodesAnswers() throws IOException {
    Set<String> literals = new TreeSet<>();
    Set<String> answered = answeredCodes(literals);
    Set<String> tabled = new TreeSet<>();
    StringBuilder text = new StringBuilder();
    for (Path f : REFERENCE) {
      for (String line : Docs.prose(Docs.read(f)).values()) {
        text.append(line).append('\n');
        if (STATUS_ROW.matcher(line).matches()) {
          // the code column only: the "when" column may quote WeChat's own codes
          Matcher code = CODE.matcher(line.split("\\|", -1)[2]);
          while (code.find()) {
            tabled.add(code.group(1));
          }
        }
      }
    }
    assertThat(answered).as("codes the code answers").hasSizeGreaterThan(60);

    Set<String> unknown = new TreeSet<>(tabled);
    unknown.removeAll(answered);
    unknown.removeAll(literals);
    assertThat(unknown).as("codes in the reference's tables that no code answers").isEmpty();

    Set<String> undocumented = new TreeSet<>(answered);
    undocumented.removeAll(tabled);
    undocumented.removeIf(c -> ANSWERED_AS_ANOTHER.contains(c) && text.indexOf("`" + c + "`") >= 0);
    assertThat(undocumented).as("codes the code answers that no status table names").isEmpty();
  }

  /**
   * The enums of refusals plus every code literal given to an API error in main code; {@code
   * literals} gets every upper-case string literal of main code (codes passed through a helper).
   */
  private static Set<String> answeredCodes(Set<String> literals) throws IOException {
    Set<String> codes = new TreeSet<>();
    for (OrderRejected.Code c : OrderRejected.Code.values()) {
      codes.add(c.name());
    }
    for (InvalidNotificationException.Reason r : InvalidNotificationException.Reason.values()) {
      codes.add(r.name());
    }
    for (PaymentMismatchException.Kind k : PaymentMismatchException.Kind.values()) {
      codes.add(k.name());
    }
    for (String module : List.of("shared", "functions")) {
      try (Stream<Path> files = Files.walk(ROOT.resolve(module))) {
        for (Path f :
            files
                .filter(p -> p.toString().endsWith(".java"))
                .filter(p -> p.toString().contains("/src/main/"))
                .toList()) {
          String source = Files.readString(f);
          Matcher m = THROWN.matcher(source);
          while (m.find()) {
            codes.add(m.group(1));
          }
          Matcher literal = LITERAL.matcher(source);
          while (literal.find()) {
            literals.add(literal.group(1));
          }
        }
      }
    }
    return codes;
  }
}
