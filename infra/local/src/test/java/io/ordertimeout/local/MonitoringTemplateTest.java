package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The split of template.yaml: the rollback alarms CodeDeploy watches stay beside the functions, and
 * every other alarm, the composite alarms and the dashboard are the nested application Monitoring
 * (infra/monitoring/template.yaml), which gets everything it names from the parent. Every alarm
 * pages, by itself or through exactly one composite.
 */
class MonitoringTemplateTest {
  private static final Path TEMPLATE = Main.templatePath().getParent().resolve("template.yaml");
  private static final JsonNode PARENT = SamTemplate.yaml(TEMPLATE);
  private static final SamTemplate SAM = SamTemplate.read(TEMPLATE);
  private static final SamTemplate.Application MONITORING =
      SAM.application("Monitoring").orElseThrow();
  private static final TemplateAlarms ALARMS = TemplateAlarms.read(TEMPLATE);

  @Test
  void monitoringIsANestedApplicationOfTheTemplateBesideIt() {
    assertThat(MONITORING.location())
        .isEqualTo(TEMPLATE.getParent().resolve("infra/monitoring/template.yaml"))
        .isRegularFile();
    assertThat(PARENT.at("/Resources/Monitoring/Type").asText())
        .isEqualTo("AWS::Serverless::Application");
    assertThat(MONITORING.template().path("Transform").isMissingNode())
        .as("plain CloudFormation: no SAM transform in the nested template")
        .isTrue();
    assertThat(SAM.applications())
        .extracting(SamTemplate.Application::logicalId)
        .containsExactly("Monitoring");
  }

  @Test
  void everyParameterOfMonitoringIsPassedAndNamedAfterWhatItCarries() {
    JsonNode declared = MONITORING.template().path("Parameters");
    Set<String> names = new TreeSet<>();
    declared.fieldNames().forEachRemaining(names::add);
    assertThat(MONITORING.parameters().keySet()).isEqualTo(names);

    JsonNode parameters = PARENT.path("Parameters");
    JsonNode resources = PARENT.path("Resources");
    MONITORING
        .parameters()
        .forEach(
            (name, value) -> {
              if (name.equals("ParentStackName")) {
                assertThat(value).isEqualTo("AWS::StackName");
              } else if (parameters.has(name)) {
                assertThat(value)
                    .as("parameter %s: the parent's of that name", name)
                    .isEqualTo(name);
                assertThat(declared.path(name).path("Type").asText())
                    .as("type of %s", name)
                    .isEqualTo(parameters.path(name).path("Type").asText());
              } else if (name.endsWith("AlarmArn")) {
                String alarm = name.substring(0, name.length() - "Arn".length());
                assertThat(value).as("parameter %s", name).isEqualTo(alarm + ".Arn");
                assertThat(resources.path(alarm).path("Type").asText())
                    .isEqualTo(TemplateAlarms.ALARM);
              } else {
                // a resource's name or id (the CodeDeploy application is the one SAM generates)
                assertThat(value).as("parameter %s: a !Ref of that resource", name).isEqualTo(name);
                assertThat(resources.has(name) || name.equals("ServerlessDeploymentApplication"))
                    .as("resource %s of template.yaml", name)
                    .isTrue();
              }
            });
  }

  @Test
  void theParentKeepsExactlyTheRollbackAlarmsAndMonitoringTheRest() {
    Set<String> rollback = new TreeSet<>();
    for (SamTemplate.Function f : SAM.functions()) {
      PARENT
          .at("/Resources/" + f.logicalId() + "/Properties/DeploymentPreference/Alarms")
          .forEach(a -> rollback.add(idOf(a.asText())));
    }
    Set<String> inParent = new TreeSet<>();
    Set<String> inMonitoring = new TreeSet<>();
    ALARMS
        .templateOf()
        .forEach((id, file) -> (file.equals(TEMPLATE) ? inParent : inMonitoring).add(id));
    assertThat(inParent).as("alarms of template.yaml").isEqualTo(rollback);
    assertThat(inMonitoring).as("alarms of Monitoring").hasSizeGreaterThan(20);
    assertThat(types(PARENT)).doesNotContain("AWS::CloudWatch::Dashboard");
    assertThat(types(MONITORING.template())).contains("AWS::CloudWatch::Dashboard");
  }

  @Test
  void everyAlarmPagesByItselfOrThroughExactlyOneComposite() {
    assertThat(ALARMS.composites()).hasSizeGreaterThanOrEqualTo(6);
    ALARMS
        .composites()
        .forEach(
            (id, composite) -> {
              assertThat(TemplateAlarms.actions(composite, "AlarmActions"))
                  .as("AlarmActions of %s", id)
                  .containsExactly(TemplateAlarms.TOPIC);
              assertThat(ALARMS.members().get(id)).as("members of %s", id).hasSizeGreaterThan(1);
            });
    for (Map.Entry<String, JsonNode> e : ALARMS.alarms().entrySet()) {
      String id = e.getKey();
      List<String> composites = new ArrayList<>();
      ALARMS
          .members()
          .forEach(
              (c, members) -> {
                if (members.contains(id)) {
                  composites.add(c);
                }
              });
      List<String> actions = TemplateAlarms.actions(e.getValue(), "AlarmActions");
      List<String> ok = TemplateAlarms.actions(e.getValue(), "OKActions");
      if (composites.isEmpty()) {
        assertThat(actions)
            .as("AlarmActions of %s, in no composite", id)
            .containsExactly(TemplateAlarms.TOPIC);
        assertThat(ok).as("OKActions of %s", id).containsExactly(TemplateAlarms.TOPIC);
      } else {
        assertThat(composites).as("composites of %s", id).hasSize(1);
        assertThat(actions).as("%s pages through %s only", id, composites).isEmpty();
        assertThat(ok).as("%s returns to OK through %s only", id, composites).isEmpty();
      }
      assertThat(ALARMS.pages(id)).as("%s pages", id).isTrue();
    }
  }

  /**
   * The cost estimate prices what the templates declare: every metric alarm (a metric-math alarm is
   * billed per metric it reads), every composite alarm.
   */
  @Test
  void theCostEstimateCountsEveryAlarm() {
    String cost = Docs.read(TEMPLATE.getParent().resolve("docs/operations/cost.md"));
    Matcher m =
        Pattern.compile("(\\d+) alarms \\((\\d+) alarm metrics\\) \\+ (\\d+) composite alarms")
            .matcher(cost);
    assertThat(m.find()).as("cost.md's CloudWatch row counts the alarms").isTrue();
    int metrics = 0;
    for (JsonNode alarm : ALARMS.alarms().values()) {
      int read = 0;
      for (JsonNode metric : alarm.path("Metrics")) {
        read += metric.has("MetricStat") ? 1 : 0;
      }
      metrics += alarm.has("Metrics") ? read : 1;
    }
    assertThat(Integer.parseInt(m.group(1))).as("alarms").isEqualTo(ALARMS.alarms().size());
    assertThat(Integer.parseInt(m.group(2))).as("alarm metrics").isEqualTo(metrics);
    assertThat(Integer.parseInt(m.group(3)))
        .as("composite alarms")
        .isEqualTo(ALARMS.composites().size());
  }

  /** A DeploymentPreference alarm: a Ref to an alarm, or an alarm's AlarmName. */
  private static String idOf(String reference) {
    if (ALARMS.alarms().containsKey(reference)) {
      return reference;
    }
    return ALARMS.alarms().entrySet().stream()
        .filter(a -> a.getValue().path("AlarmName").asText().equals(reference))
        .map(Map.Entry::getKey)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no alarm " + reference));
  }

  private static Set<String> types(JsonNode template) {
    Set<String> out = new TreeSet<>();
    template.path("Resources").forEach(r -> out.add(r.path("Type").asText()));
    return out;
  }
}
