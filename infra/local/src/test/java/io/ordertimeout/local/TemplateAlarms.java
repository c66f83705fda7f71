package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The alarms of template.yaml and of its nested applications (the monitoring template), as the
 * template tests read them: metric alarms and composite alarms by logical id, the template each is
 * in, and each composite's members resolved to the alarms they are, across the two templates (a
 * member in the parent reaches the nested template as an ARN parameter, {@code X.Arn}).
 */
record TemplateAlarms(
    Map<String, JsonNode> alarms,
    Map<String, JsonNode> composites,
    Map<String, List<String>> members,
    Map<String, Path> templateOf) {

  static final String ALARM = "AWS::CloudWatch::Alarm";
  static final String COMPOSITE = "AWS::CloudWatch::CompositeAlarm";

  /** The SNS topic parameter, named alike in both templates. */
  static final String TOPIC = "AlarmTopicArn";

  private static final Pattern MEMBER =
      Pattern.compile("ALARM\\(\"\\$\\{([A-Za-z0-9]+)(\\.Arn)?}\"\\)");

  static TemplateAlarms read(Path template) {
    Map<String, JsonNode> alarms = new TreeMap<>();
    Map<String, JsonNode> composites = new TreeMap<>();
    Map<String, List<String>> members = new TreeMap<>();
    Map<String, Path> templateOf = new TreeMap<>();
    collect(
        template, SamTemplate.yaml(template), Map.of(), alarms, composites, members, templateOf);
    for (SamTemplate.Application app : SamTemplate.read(template).applications()) {
      collect(
          app.location(),
          app.template(),
          app.parameters(),
          alarms,
          composites,
          members,
          templateOf);
    }
    return new TemplateAlarms(alarms, composites, members, templateOf);
  }

  private static void collect(
      Path file,
      JsonNode root,
      Map<String, String> passed,
      Map<String, JsonNode> alarms,
      Map<String, JsonNode> composites,
      Map<String, List<String>> members,
      Map<String, Path> templateOf) {
    JsonNode resources = root.path("Resources");
    resources
        .fields()
        .forEachRemaining(
            e -> {
              String type = e.getValue().path("Type").asText();
              JsonNode props = e.getValue().path("Properties");
              if (type.equals(ALARM)) {
                alarms.put(e.getKey(), props);
              } else if (type.equals(COMPOSITE)) {
                composites.put(e.getKey(), props);
                members.put(e.getKey(), members(props, resources, passed));
              } else {
                return;
              }
              assertThat(templateOf.put(e.getKey(), file))
                  .as("alarm %s in one template only", e.getKey())
                  .isNull();
            });
  }

  /** The alarms a composite's rule names: its own template's, or the parent's by ARN parameter. */
  private static List<String> members(
      JsonNode composite, JsonNode resources, Map<String, String> passed) {
    List<String> out = new ArrayList<>();
    Matcher m = MEMBER.matcher(composite.path("AlarmRule").asText());
    while (m.find()) {
      String name = m.group(1);
      if (m.group(2) != null) {
        assertThat(resources.has(name)).as("member %s of the rule", name).isTrue();
        out.add(name);
      } else {
        String value = passed.get(name);
        assertThat(value).as("parameter %s of the rule, passed by the parent", name).isNotNull();
        assertThat(value).as("parameter %s: an alarm's ARN", name).endsWith(".Arn");
        out.add(value.substring(0, value.length() - ".Arn".length()));
      }
    }
    return out;
  }

  /** Every alarm and composite alarm, by logical id. */
  Map<String, JsonNode> all() {
    Map<String, JsonNode> out = new LinkedHashMap<>(alarms);
    out.putAll(composites);
    return out;
  }

  /** The composite an alarm is a member of, or null. */
  String compositeOf(String alarm) {
    return members.entrySet().stream()
        .filter(e -> e.getValue().contains(alarm))
        .map(Map.Entry::getKey)
        .findFirst()
        .orElse(null);
  }

  /**
   * Whether an alarm sends its ALARM state to the SNS topic: by itself or through its composite.
   */
  boolean pages(String alarm) {
    if (actions(all().get(alarm), "AlarmActions").contains(TOPIC)) {
      return true;
    }
    String composite = compositeOf(alarm);
    return composite != null && pages(composite);
  }

  static List<String> actions(JsonNode alarm, String field) {
    List<String> out = new ArrayList<>();
    alarm.path(field).forEach(a -> out.add(a.asText()));
    return out;
  }
}
