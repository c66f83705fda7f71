package io.ordertimeout.reliability;

import io.ordertimeout.aws.TemplateFiles;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The alarms of template.yaml and its monitoring template (infra/monitoring/template.yaml) that a
 * fault test can watch, read from the templates themselves (so a changed threshold changes the
 * measured detection delay): each one's metric, threshold (a parameter's default when it is a
 * {@code !Ref}), period, datapoints to alarm and missing-data treatment.
 */
final class AlarmRules {
  /** One CloudWatch alarm as template.yaml declares it. */
  record Rule(
      String alarm,
      String metric,
      double threshold,
      int periodSeconds,
      int datapoints,
      boolean missingBreaches) {
    /** The shortest time the alarm needs above its threshold before it fires. */
    int evaluationSeconds() {
      return periodSeconds * datapoints;
    }
  }

  private static final Pattern RESOURCE =
      Pattern.compile("(?m)^  ([A-Za-z0-9]+):\\n    Type: AWS::CloudWatch::Alarm\\n");

  private final Map<String, Rule> rules = new LinkedHashMap<>();

  private AlarmRules(String template) {
    Matcher m = RESOURCE.matcher(template);
    while (m.find()) {
      int end = template.indexOf("\n\n", m.end());
      String block = template.substring(m.end(), end < 0 ? template.length() : end);
      String name = m.group(1);
      String metric = field(block, "MetricName");
      if (metric == null) {
        continue; // a metric-math alarm (ApiServerErrorsAlarm): handled by name below
      }
      rules.put(
          name,
          new Rule(
              name,
              metric,
              number(template, field(block, "Threshold")),
              (int) number(template, field(block, "Period")),
              (int)
                  number(
                      template,
                      field(block, "DatapointsToAlarm") != null
                          ? field(block, "DatapointsToAlarm")
                          : field(block, "EvaluationPeriods")),
              "breaching".equals(field(block, "TreatMissingData"))));
    }
    // ApiServerErrorsAlarm is metric math (5xx / Count * 100 > ApiServerErrorRatePercent, 2 of
    // 2 minutes); its threshold is the parameter's default.
    rules.put(
        "ApiServerErrorsAlarm",
        new Rule(
            "ApiServerErrorsAlarm",
            "5xx %",
            number(template, "!Ref ApiServerErrorRatePercent"),
            60,
            2,
            false));
  }

  /** The alarms of template.yaml and of the monitoring template it nests. */
  static AlarmRules fromTemplate() {
    return new AlarmRules(TemplateFiles.text(TemplateFiles.root()));
  }

  Rule rule(String alarm) {
    Rule r = rules.get(alarm);
    if (r == null) {
      throw new IllegalStateException(
          "template.yaml has no alarm " + alarm + ": " + rules.keySet());
    }
    return r;
  }

  private static String field(String block, String key) {
    Matcher m = Pattern.compile("(?m)^      " + key + ": (.+)$").matcher(block);
    return m.find() ? m.group(1).trim() : null;
  }

  private static double number(String template, String value) {
    if (value == null) {
      throw new IllegalStateException("an alarm field is missing in template.yaml");
    }
    if (value.startsWith("!Ref ")) {
      String parameter = value.substring(5).trim();
      Matcher m =
          Pattern.compile("(?m)^  " + parameter + ":\\n(?:    .*\\n)*?    Default: (\\S+)")
              .matcher(template);
      if (!m.find()) {
        throw new IllegalStateException("template.yaml parameter " + parameter + " has no Default");
      }
      return Double.parseDouble(m.group(1));
    }
    return Double.parseDouble(value);
  }
}
