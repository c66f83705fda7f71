package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.MetricNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * template.yaml and its monitoring template against cfn-lint (when it is on the PATH), and the
 * parts of them that name things in this module: the alarmed metrics and the schedule payloads in
 * events/.
 */
class TemplateLintTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path ROOT = TemplateFiles.root();
  private static final Path TEMPLATE = ROOT.resolve("template.yaml");

  @Tag("integration")
  @Test
  void cfnLintReportsNoErrors() throws Exception {
    Path cfnLint = AwsEmulator.onPath("cfn-lint");
    if (cfnLint == null) {
      System.err.println("cfn-lint is not on the PATH: template.yaml lint SKIPPED");
    }
    Assumptions.assumeTrue(
        cfnLint != null, "cfn-lint is not on the PATH (pip install cfn-lint): lint skipped");
    List<String> command = new ArrayList<>(List.of(cfnLint.toString(), "--"));
    List<Path> templates = TemplateFiles.all(ROOT);
    assertThat(templates).as("template.yaml and its monitoring template").hasSizeGreaterThan(1);
    templates.forEach(t -> command.add(ROOT.relativize(t).toString()));
    Process lint =
        new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true).start();
    String output = new String(lint.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(lint.waitFor(180, TimeUnit.SECONDS)).as("cfn-lint finished").isTrue();
    // cfn-lint's exit code is a bit mask: 2 errors, 4 warnings, 8 informational; 1 a crash
    int code = lint.exitValue();
    assertThat(code & 3).as("cfn-lint %s errors (exit %d):%n%s", command, code, output).isZero();
  }

  @Test
  void everyAlarmedMetricIsOneTheCodePublishes() {
    String template = TemplateFiles.text(ROOT);
    Matcher m = Pattern.compile("Namespace: (\\S+)\\s*\\n\\s*MetricName: (\\S+)").matcher(template);
    Set<String> alarmed = new TreeSet<>();
    while (m.find()) {
      if (m.group(1).equals(MetricNames.NAMESPACE)) {
        alarmed.add(m.group(2));
      }
    }

    assertThat(alarmed).containsExactlyInAnyOrderElementsOf(MetricNames.ALARMED);
  }

  @Test
  void scheduleEventsAreTheTemplatesInputs() throws IOException {
    Matcher m = Pattern.compile("Input: '(\\{.*\\})'").matcher(Files.readString(TEMPLATE));
    Set<String> schedules = new TreeSet<>();
    while (m.find()) {
      JsonNode input = JSON.readTree(m.group(1));
      String schedule = input.get("schedule").asText();
      schedules.add(schedule);
      JsonNode event =
          JSON.readTree(ROOT.resolve("events/" + schedule + "-schedule.json").toFile());
      input
          .fields()
          .forEachRemaining(
              e ->
                  assertThat(event.get(e.getKey()))
                      .as(schedule + " " + e.getKey())
                      .isEqualTo(e.getValue()));
    }

    assertThat(schedules).containsExactly("compensation", "stream-consumer", "timeout-sweep");
  }
}
