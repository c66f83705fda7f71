package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.MetricNames;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * template.yaml's production settings, read from the YAML as written; where cfn-lint or the SAM
 * translator (python3 with aws-sam-translator, which cfn-lint brings) is installed, also the
 * template as CloudFormation receives it. Short-form tags read as the value under them: {@code !Ref
 * X} is "X", {@code !GetAtt X.Arn} is "X.Arn", {@code !Sub "s"} is "s".
 */
class TemplateProductionTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String LOG_GROUP = "AWS::Logs::LogGroup";
  private static final Path ROOT = Main.templatePath().getParent();
  private static final JsonNode TEMPLATE = SamTemplate.yaml(ROOT.resolve("template.yaml"));
  private static final JsonNode RESOURCES = TEMPLATE.path("Resources");
  private static final JsonNode PARAMETERS = TEMPLATE.path("Parameters");
  private static final SamTemplate SAM = SamTemplate.read(ROOT.resolve("template.yaml"));
  private static final String HOOK = "PreTrafficHook";
  private static final String TOPIC = TemplateAlarms.TOPIC;

  /** The nested application with the paging alarms and the dashboard. */
  private static final String MONITORING = "Monitoring";

  private static final SamTemplate.Application MONITORING_APP =
      SAM.application(MONITORING).orElseThrow();
  private static final JsonNode MONITORING_TEMPLATE = MONITORING_APP.template();
  private static final TemplateAlarms ALARMS = TemplateAlarms.read(ROOT.resolve("template.yaml"));

  // ---- item 1: schedules neither retry nor queue ----

  @Test
  void scheduledFunctionsNeitherRetryNorQueueTheirRuns() throws IOException {
    List<SamTemplate.Function> scheduled = scheduledFunctions();
    assertThat(scheduled).hasSize(3);
    for (SamTemplate.Function f : scheduled) {
      JsonNode props = props(f.logicalId());
      long periodSeconds = f.schedules().get(0).rate().toSeconds();
      JsonNode config = props.path("EventInvokeConfig");
      assertThat(config.path("MaximumRetryAttempts").isInt())
          .as("%s EventInvokeConfig", f.logicalId())
          .isTrue();
      assertThat(config.path("MaximumRetryAttempts").asInt()).isZero();
      // Lambda's minimum is 60 s; an event older than one schedule period is superseded anyway
      assertThat(config.path("MaximumEventAgeInSeconds").asLong())
          .as("%s MaximumEventAgeInSeconds", f.logicalId())
          .isBetween(60L, periodSeconds);
      for (JsonNode event : schedules(f.logicalId())) {
        assertThat(event.at("/Properties/RetryPolicy/MaximumRetryAttempts").asInt(-1)).isZero();
        assertThat(event.at("/Properties/GroupName").asText()).isEqualTo("ScheduleGroup");
      }
      // SAM points ScheduleV2 targets at the alias when the function publishes one
      assertThat(autoPublishAlias(f.logicalId())).as(f.logicalId()).isEqualTo("live");
    }
    assertThat(type("ScheduleGroup")).isEqualTo("AWS::Scheduler::ScheduleGroup");
    assertThat(Files.readString(ROOT.resolve("template.yaml")))
        .as("the old claim that an overlapping run is dropped without retry")
        .doesNotContain("is dropped (no retry)");
  }

  /**
   * EventBridge Scheduler's precision is a minute: two runs of {@code rate(1 minute)} may start up
   * to two periods less a second apart. A sweep (or consumer) run keeps working until its successor
   * joins, so its working time, the Timeout less what it keeps back (the margin, and for the sweep
   * one pass's WeChat step), must cover that gap: otherwise shards go unswept and cancels unread
   * until the next run, with no alarm. The configuration read is the one the function reads.
   */
  @Test
  void aLoopRunOutlastsTheLongestGapBetweenTwoScheduledStarts() {
    for (String id : List.of("TimeoutSweepFunction", "StreamConsumerFunction")) {
      SamTemplate.Function f = SAM.function(id).orElseThrow();
      Map<String, String> env = new HashMap<>();
      env.put("OTC_MYSQL_URL", "jdbc:mysql://db.internal:3306/otc");
      env.put("OTC_REDIS_URI", "redis://cache.internal:6379");
      f.environment().entrySet().stream()
          .filter(v -> v.getKey().endsWith("_MS") && v.getValue().matches("\\d+"))
          .forEach(v -> env.put(v.getKey(), v.getValue()));
      io.ordertimeout.config.OtcConfig config =
          io.ordertimeout.config.OtcConfig.fromEnvironment(env);
      long timeoutMs = f.timeoutSeconds() * 1_000L;
      assertThat(config.waits().functionTimeout().toMillis())
          .as("%s OTC_FUNCTION_TIMEOUT_MS is its Timeout", id)
          .isEqualTo(timeoutMs);
      long keptBack =
          config.invocationMargin().toMillis()
              + (id.equals("TimeoutSweepFunction") ? config.waits().weChatStep().toMillis() : 0);
      long periodMs = f.schedules().get(0).rate().toMillis();
      long worstGapMs = 2 * periodMs - 1_000;
      assertThat(timeoutMs - keptBack)
          .as(
              "%s works %d ms of its %d ms; two starts may be %d ms apart",
              id, timeoutMs - keptBack, timeoutMs, worstGapMs)
          .isGreaterThanOrEqualTo(worstGapMs);
    }
  }

  /**
   * The custom metrics are what is read: every OrderTimeout name an alarm or the dashboard reads is
   * published (declared in EMF), every published name is recorded by the code (a literal of a
   * metrics call, or a MetricNames constant), and every name published for an operator is named in
   * the docs. So the series count stays at what serves an alarm, a graph or a runbook step.
   */
  @Test
  void publishedMetricsAreExactlyWhatAnAlarmTheDashboardOrAnOperatorReads() throws IOException {
    String template =
        Files.readString(ROOT.resolve("template.yaml"))
            + Files.readString(MONITORING_APP.location());
    Set<String> read = new TreeSet<>();
    Matcher dashboard = Pattern.compile("\\[\"OrderTimeout\", \"([a-z_0-9]+)\"").matcher(template);
    while (dashboard.find()) {
      read.add(dashboard.group(1));
    }
    for (JsonNode alarm : alarms()) {
      if (alarm.at("/Properties/Namespace").asText().equals("OrderTimeout")) {
        read.add(alarm.at("/Properties/MetricName").asText());
      }
    }
    assertThat(read).hasSizeGreaterThan(20);
    assertThat(MetricNames.PUBLISHED).containsAll(read);
    assertThat(MetricNames.DASHBOARD)
        .as("a dashboard name the dashboard no longer graphs")
        .allMatch(read::contains);

    StringBuilder code = new StringBuilder();
    for (String module : List.of("shared", "functions")) {
      try (Stream<Path> files = Files.walk(ROOT.resolve(module))) {
        for (Path f :
            files
                .filter(p -> p.toString().endsWith(".java"))
                .filter(p -> p.toString().contains("src" + File.separator + "main"))
                .toList()) {
          code.append(Files.readString(f));
        }
      }
    }
    assertThat(MetricNames.PUBLISHED)
        .as("published names the code records")
        .allMatch(n -> code.indexOf("\"" + n + "\"") >= 0);
    String readme = Docs.all(ROOT);
    assertThat(MetricNames.OPERATOR)
        .as("operator metrics the docs name")
        .allMatch(n -> readme.contains("`" + n + "`"));
  }

  @Test
  void droppedRunsAndSchedulerFailuresRaiseAlarms() {
    for (SamTemplate.Function f : scheduledFunctions()) {
      assertThat(
              alarmsOn("AWS/Lambda", "AsyncEventsDropped", Map.of("FunctionName", f.logicalId())))
          .as("AsyncEventsDropped alarm of %s", f.logicalId())
          .singleElement()
          .satisfies(a -> assertThat(ALARMS.pages(a)).as("%s pages", a).isTrue());
    }
    // Scheduler metrics have one dimension, the schedule group (SAM's ScheduleV2 is
    // AWS::Scheduler::Schedule, not an EventBridge rule: AWS/Scheduler, not AWS/Events)
    for (String metric : List.of("TargetErrorCount", "InvocationDroppedCount")) {
      assertThat(alarmsOn("AWS/Scheduler", metric, Map.of("ScheduleGroup", "ScheduleGroup")))
          .as(metric)
          .singleElement()
          .satisfies(a -> assertThat(ALARMS.pages(a)).as("%s pages", a).isTrue());
    }
  }

  // ---- item 2: compensation cannot overlap itself ----

  @Test
  void compensationEndsBeforeItsNextRunIsDueAndRunsOneAtATime() {
    SamTemplate.Function f = SAM.function("CompensationFunction").orElseThrow();
    long periodSeconds = f.schedules().get(0).rate().toSeconds();
    JsonNode props = props(f.logicalId());
    assertThat(reservedConcurrency(f.logicalId()).path("Default").asInt()).isEqualTo(1);
    // A run started as late as its event may wait (throttled by the one environment) still ends
    // before the next period's run is due; the pass stops on its remaining time (Compensator).
    long maxEventAge = props.at("/EventInvokeConfig/MaximumEventAgeInSeconds").asLong();
    assertThat(f.timeoutSeconds() + maxEventAge).isLessThanOrEqualTo(periodSeconds);
  }

  // ---- item 6: HTTP API throttling and access logs ----

  @Test
  void httpApiThrottlesEveryRouteAndThePublicWebhookHarder() {
    JsonNode api = props("OrdersApi");
    JsonNode defaults = api.path("DefaultRouteSettings");
    long rate = numberParameter(defaults.path("ThrottlingRateLimit").asText());
    long burst = numberParameter(defaults.path("ThrottlingBurstLimit").asText());
    assertThat(rate).isPositive();
    assertThat(burst).isGreaterThanOrEqualTo(rate);

    List<SamTemplate.HttpRoute> publicRoutes =
        SAM.routes().stream().filter(r -> r.auth().equals("NONE")).toList();
    assertThat(publicRoutes)
        .extracting(SamTemplate.HttpRoute::routeKey)
        .containsExactlyInAnyOrder(
            "POST /wechatpay/notify",
            "POST /wechatpay/notify/{tenantId}",
            "POST /wechatpay/notify/provider/{spMchid}",
            "POST /wechatpay/refund-notify/{tenantId}");
    Set<String> routeKeys = new TreeSet<>();
    SAM.routes().forEach(r -> routeKeys.add(r.routeKey()));
    assertThat(names(api.path("RouteSettings"))).isSubsetOf(routeKeys);
    for (SamTemplate.HttpRoute r : publicRoutes) {
      JsonNode own = api.path("RouteSettings").path(r.routeKey());
      assertThat(numberParameter(own.path("ThrottlingRateLimit").asText()))
          .as("rate limit of %s", r.routeKey())
          .isPositive()
          .isLessThan(rate);
      assertThat(numberParameter(own.path("ThrottlingBurstLimit").asText()))
          .as("burst limit of %s", r.routeKey())
          .isPositive()
          .isLessThan(burst);
    }
  }

  @Test
  void httpApiWritesAccessLogsToAGroupWithRetention() throws IOException {
    JsonNode settings = props("OrdersApi").path("AccessLogSettings");
    String destination = settings.path("DestinationArn").asText();
    assertThat(destination).endsWith(".Arn");
    String group = destination.substring(0, destination.length() - ".Arn".length());
    assertThat(type(group)).isEqualTo("AWS::Logs::LogGroup");
    String retention = props(group).path("RetentionInDays").asText();
    assertThat(PARAMETERS.path(retention).path("AllowedValues").isArray())
        .as("RetentionInDays of %s is a parameter: %s", group, retention)
        .isTrue();
    assertThat(RESOURCES.path(group).path("DeletionPolicy").asText())
        .isEqualTo("RetainExceptOnCreate");

    JsonNode format = JSON.readTree(settings.path("Format").asText());
    assertThat(format.path("requestId").asText()).isEqualTo("$context.requestId");
    assertThat(format.path("route").asText()).isEqualTo("$context.routeKey");
    assertThat(format.path("status").asText()).isEqualTo("$context.status");
    assertThat(format.path("ip").asText()).isEqualTo("$context.identity.sourceIp");
    assertThat(format.path("caller").asText()).isEqualTo("$context.identity.userArn");
    assertThat(format.toString()).doesNotContain("requestBody").doesNotContain("$input");
  }

  // ---- what fails a first deploy, and following a request ----

  @Test
  void reservedConcurrencyIsAParameterWhoseZeroLeavesTheFunctionUnreserved() {
    Map<String, Integer> reserved = new TreeMap<>();
    for (SamTemplate.Function f : SAM.functions()) {
      if (props(f.logicalId()).has("ReservedConcurrentExecutions")) {
        reserved.put(f.logicalId(), reservedConcurrency(f.logicalId()).path("Default").asInt());
      }
    }
    // the designed reservations stay the defaults: 5 in all, so an account needs a quota of 105
    assertThat(reserved)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("TimeoutSweepFunction", 2, "CompensationFunction", 1, "AdminFunction", 2));
  }

  @Test
  void everyFunctionLogsToAGroupCreatedBeforeItThatARolledBackCreateDeletes() {
    Set<String> groups = new TreeSet<>();
    for (SamTemplate.Function f : SAM.functions()) {
      String group = props(f.logicalId()).at("/LoggingConfig/LogGroup").asText();
      assertThat(type(group))
          .as("LoggingConfig.LogGroup of %s", f.logicalId())
          .isEqualTo(LOG_GROUP);
      // named after the stack, never after the function: the group is created first
      assertThat(props(group).path("LogGroupName").asText())
          .as("name of %s", group)
          .isEqualTo("/aws/lambda/${AWS::StackName}/" + module(f));
      groups.add(group);
    }
    assertThat(groups).hasSize(SAM.functions().size());
    RESOURCES
        .fields()
        .forEachRemaining(
            e -> {
              if (e.getValue().path("Type").asText().equals(LOG_GROUP)) {
                assertThat(e.getValue().path("DeletionPolicy").asText())
                    .as("DeletionPolicy of %s", e.getKey())
                    .isEqualTo("RetainExceptOnCreate");
                assertThat(e.getValue().path("UpdateReplacePolicy").asText())
                    .as("UpdateReplacePolicy of %s", e.getKey())
                    .isEqualTo("Retain");
                assertThat(props(e.getKey()).path("LogGroupName").asText())
                    .as("a stack-wide name in %s", e.getKey())
                    .contains("${AWS::StackName}");
              }
            });
  }

  @Test
  void everyFunctionIsTracedAndTheAccessLogNamesTheFunctionsRequestId() throws Exception {
    assertThat(TEMPLATE.at("/Globals/Function/Tracing").asText()).isEqualTo("TracingMode");
    JsonNode mode = PARAMETERS.path("TracingMode");
    assertThat(mode.path("Default").asText()).isEqualTo("Active");
    assertThat(mode.path("AllowedValues").toString()).isEqualTo("[\"Active\",\"PassThrough\"]");
    JsonNode format = JSON.readTree(props("OrdersApi").at("/AccessLogSettings/Format").asText());
    // the Lambda invoke's request id: the requestId of the function's log lines for the request
    assertThat(format.path("lambdaRequestId").asText()).isEqualTo("$context.awsEndpointRequestId");

    JsonNode resources = translated().path("Resources");
    for (SamTemplate.Function f : SAM.functions()) {
      JsonNode function = resources.path(f.logicalId()).path("Properties");
      assertThat(function.at("/TracingConfig/Mode/Ref").asText())
          .as("TracingConfig of %s", f.logicalId())
          .isEqualTo("TracingMode");
      assertThat(function.at("/LoggingConfig/LogGroup/Ref").asText())
          .as("LoggingConfig of %s", f.logicalId())
          .endsWith("Logs");
      String role = function.at("/Role/Fn::GetAtt/0").asText();
      // SAM adds the X-Ray write policy to the role it makes for a traced function
      assertThat(resources.path(role).at("/Properties/ManagedPolicyArns").toString().toLowerCase())
          .as("managed policies of %s", role)
          .contains("xray");
    }
  }

  // ---- item 7: safe rollout ----

  @Test
  void everyFunctionShiftsTrafficThroughCodeDeployWithRollbackAlarmsAndTheHook() {
    for (SamTemplate.Function f : SAM.functions()) {
      JsonNode preference = props(f.logicalId()).path("DeploymentPreference");
      String typeParameter = preference.path("Type").asText();
      assertThat(texts(PARAMETERS.path(typeParameter).path("AllowedValues")))
          .as("%s DeploymentPreference Type %s: a parameter", f.logicalId(), typeParameter)
          .contains("Canary10Percent5Minutes", "AllAtOnce");
      if (!f.routes().isEmpty()) {
        assertThat(PARAMETERS.path(typeParameter).path("Default").asText())
            .isEqualTo("Canary10Percent5Minutes");
      }
      assertThat(preference.at("/Hooks/PreTraffic").asText()).isEqualTo(HOOK);

      List<JsonNode> rollback = new ArrayList<>();
      for (JsonNode alarm : preference.path("Alarms")) {
        String id = alarmId(alarm.asText());
        // CodeDeploy reads them when it deploys, and a Ref must resolve: here, not in Monitoring
        assertThat(RESOURCES.has(id)).as("rollback alarm %s is in template.yaml", id).isTrue();
        assertThat(ALARMS.pages(id)).as("rollback alarm %s pages", id).isTrue();
        rollback.add(ALARMS.alarms().get(id));
      }
      assertThat(rollback)
          .as("%s rolls back on the errors of the version it deploys", f.logicalId())
          .anySatisfy(
              a -> {
                assertThat(a.path("Namespace").asText()).isEqualTo("AWS/Lambda");
                assertThat(a.path("MetricName").asText()).isEqualTo("Errors");
                Map<String, JsonNode> dims = dimensions(a);
                assertThat(dims.get("FunctionName").asText()).isEqualTo(f.logicalId());
                assertThat(dims.get("Resource").asText())
                    .isEqualTo("${" + f.logicalId() + "}:live");
                // !Select [7, !Split [":", !Ref <Function>.Version]]: the version number
                JsonNode version = dims.get("ExecutedVersion");
                assertThat(version.get(0).asInt()).isEqualTo(7);
                assertThat(version.get(1).get(1).asText()).isEqualTo(f.logicalId() + ".Version");
              });
      if (!f.routes().isEmpty()) {
        assertThat(rollback)
            .as("%s rolls back on the API's 5xx rate", f.logicalId())
            .anySatisfy(a -> assertThat(metricMathNamespaces(a)).containsExactly("AWS/ApiGateway"));
      }
    }
  }

  @Test
  void preTrafficHookKnowsEveryFunctionsDeploymentAndHasLeastPrivilege() throws IOException {
    assertThat(type(HOOK))
        .as("a plain Lambda function: SAM's Globals (VPC, Java, SnapStart, alias) must not apply")
        .isEqualTo("AWS::Lambda::Function");
    JsonNode hook = props(HOOK);
    // SAM's CodeDeploy role (AWSCodeDeployRoleForLambda) invokes only CodeDeployHook_* functions
    assertThat(hook.path("FunctionName").asText()).startsWith("CodeDeployHook_");
    int longestTimeout =
        SAM.functions().stream().mapToInt(SamTemplate.Function::timeoutSeconds).max().orElseThrow();
    assertThat(hook.path("Timeout").asInt())
        .as("waits for a scheduled pass to free the reserved environment, then runs its own")
        .isGreaterThanOrEqualTo(2 * longestTimeout);

    JsonNode env = hook.at("/Environment/Variables");
    JsonNode samples = hookSamples();
    Set<String> modules = new TreeSet<>();
    for (SamTemplate.Function f : SAM.functions()) {
      String module = module(f);
      modules.add(module);
      String prefix = module.toUpperCase().replace('-', '_');
      assertThat(env.path(prefix + "_GROUP").asText()).isEqualTo(f.logicalId() + "DeploymentGroup");
      assertThat(env.path(prefix + "_VERSION").asText()).isEqualTo(f.logicalId() + ".Version");
      assertThat(samples.path(module).size()).as("samples of %s", module).isPositive();
    }
    assertThat(names(samples)).isEqualTo(modules);

    String role = hook.path("Role").asText().replace(".Arn", "");
    List<JsonNode> statements = new ArrayList<>();
    props(role)
        .path("Policies")
        .forEach(p -> p.at("/PolicyDocument/Statement").forEach(statements::add));
    // and the policies attached to the role (the invoke one: inline, it would make a cycle)
    RESOURCES
        .fields()
        .forEachRemaining(
            r -> {
              if (r.getValue().path("Type").asText().equals("AWS::IAM::Policy")
                  && texts(r.getValue().at("/Properties/Roles")).contains(role)) {
                r.getValue().at("/Properties/PolicyDocument/Statement").forEach(statements::add);
                assertThat(texts(RESOURCES.path(HOOK).path("DependsOn")))
                    .as("the hook runs only once its policy %s is attached", r.getKey())
                    .contains(r.getKey());
              }
            });
    Map<String, Set<String>> resourcesByAction = new TreeMap<>();
    for (JsonNode s : statements) {
      assertThat(s.path("Effect").asText()).isEqualTo("Allow");
      for (String action : texts(s.path("Action"))) {
        resourcesByAction
            .computeIfAbsent(action, k -> new TreeSet<>())
            .addAll(texts(s.path("Resource")));
      }
    }
    String deploymentGroups =
        "arn:${AWS::Partition}:codedeploy:${AWS::Region}:${AWS::AccountId}:deploymentgroup:"
            + "${ServerlessDeploymentApplication}/*";
    Set<String> versions = new TreeSet<>();
    SAM.functions().forEach(f -> versions.add("${" + f.logicalId() + ".Arn}:*"));
    assertThat(resourcesByAction)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "codedeploy:GetDeployment", Set.of(deploymentGroups),
                "codedeploy:PutLifecycleEventHookExecutionStatus", Set.of(deploymentGroups),
                "lambda:InvokeFunction", versions,
                "logs:CreateLogStream", Set.of("PreTrafficHookLogs.Arn"),
                "logs:PutLogEvents", Set.of("PreTrafficHookLogs.Arn")));
  }

  /**
   * The samples' IAM caller is the hook's own role, and the two functions with IAM callers map that
   * role (and only it) to the probe tenant: with TenantPrincipals or AdminPrincipals set, a sample
   * from any other caller would be refused 403 and every deployment rolled back.
   */
  @Test
  void preTrafficHookSamplesCallAsTheHooksRoleWhichTheApiFunctionsMapToTheProbe()
      throws IOException {
    String role = props(HOOK).path("Role").asText();
    assertThat(props(HOOK).at("/Environment/Variables/PROBE_PRINCIPAL").asText()).isEqualTo(role);
    for (SamTemplate.Function f : SAM.functions()) {
      boolean iamCallers =
          f.routes().stream().anyMatch(r -> !r.auth().equals("NONE") && !r.auth().isEmpty());
      assertThat(f.environment().get("OTC_PROBE_PRINCIPAL"))
          .as("OTC_PROBE_PRINCIPAL of %s", f.logicalId())
          .isEqualTo(iamCallers ? role : null);
    }
    JsonNode samples = hookSamples();
    for (String module : List.of("order-created", "admin")) {
      for (JsonNode sample : samples.path(module)) {
        assertThat(sample.at("/event/requestContext/authorizer/iam/userArn").asText())
            .as("%s %s", module, sample.path("name").asText())
            .isEqualTo("PROBE_PRINCIPAL");
      }
    }
    for (JsonNode sample : samples.path("admin")) {
      assertThat(sample.at("/event/queryStringParameters/tenantId").asText())
          .isEqualTo(io.ordertimeout.domain.TenantIds.PROBE);
    }
  }

  /**
   * The two managed policies a user attaches name exactly the routes of their function, one
   * execute-api resource per route: the mall backend's never reaches /admin, and neither is the
   * whole API.
   */
  @Test
  void theInvokePoliciesNameExactlyTheirFunctionsRoutes() {
    Map<String, String> policyOf =
        Map.of(
            "MallBackendInvokePolicy", "OrderCreatedFunction",
            "OperatorInvokePolicy", "AdminFunction");
    policyOf.forEach(
        (policy, function) -> {
          assertThat(type(policy)).isEqualTo("AWS::IAM::ManagedPolicy");
          JsonNode statements = props(policy).at("/PolicyDocument/Statement");
          assertThat(statements.size()).as(policy).isOne();
          JsonNode statement = statements.get(0);
          assertThat(statement.path("Effect").asText()).isEqualTo("Allow");
          assertThat(texts(statement.path("Action"))).containsExactly("execute-api:Invoke");
          Set<String> expected = new TreeSet<>();
          SAM.functions().stream()
              .filter(f -> f.logicalId().equals(function))
              .flatMap(f -> f.routes().stream())
              .forEach(
                  r ->
                      expected.add(
                          "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:"
                              + "${OrdersApi}/*/"
                              + r.method()
                              + r.path().replaceAll("\\{[A-Za-z]+\\}", "*")));
          assertThat(expected).as("routes of %s", function).isNotEmpty();
          assertThat(new TreeSet<>(texts(statement.path("Resource"))))
              .as("%s names exactly the routes of %s", policy, function)
              .isEqualTo(expected);
          assertThat(TEMPLATE.at("/Outputs/" + policy + "/Value").asText()).isEqualTo(policy);
        });
    assertThat(texts(props("MallBackendInvokePolicy").at("/PolicyDocument/Statement/0/Resource")))
        .noneMatch(r -> r.contains("admin"));
  }

  @Test
  void preTrafficHookSendsTheSampleEvents() throws IOException {
    JsonNode samples = hookSamples();
    for (SamTemplate.Function f : SAM.functions()) {
      String module = module(f);
      for (JsonNode sample : samples.path(module)) {
        JsonNode event = sample.path("event");
        if (f.routes().isEmpty()) {
          JsonNode file =
              JSON.readTree(ROOT.resolve("events/" + module + "-schedule.json").toFile());
          assertThat(event).as("%s sample", module).isEqualTo(file);
          assertThat(f.schedules().get(0).input()).contains(file.path("schedule").asText());
        } else {
          assertThat(f.routes())
              .extracting(SamTemplate.HttpRoute::routeKey)
              .as("%s sample %s", module, sample.path("name").asText())
              .contains(event.path("routeKey").asText());
          assertThat(event.at("/requestContext/http/method").asText() + " ")
              .isEqualTo(event.path("routeKey").asText().split(" ")[0] + " ");
          assertThat(sample.at("/expect/statusCode").asInt()).isBetween(400, 499);
        }
      }
    }
    // the webhook's sample is the sample notification itself (stale by now: 401 before any crypto)
    JsonNode notify =
        JSON.readTree(ROOT.resolve("events/payment-notify-wechat-success.json").toFile());
    JsonNode sent = samples.path("payment-notify").get(0).path("event");
    assertThat(sent.path("body")).isEqualTo(notify.path("body"));
    notify
        .path("headers")
        .fields()
        .forEachRemaining(
            h -> {
              if (h.getKey().startsWith("wechatpay-")) {
                assertThat(sent.path("headers").path(h.getKey())).isEqualTo(h.getValue());
              }
            });
  }

  @Test
  void everyFunctionHasErrorsAndThrottlesAlarmsAndTheApiItsServerErrorRate() {
    for (SamTemplate.Function f : SAM.functions()) {
      for (String metric : List.of("Errors", "Throttles")) {
        assertThat(alarmsOn("AWS/Lambda", metric, Map.of("FunctionName", f.logicalId())))
            .as("%s alarm of %s that pages", metric, f.logicalId())
            .anySatisfy(a -> assertThat(ALARMS.pages(a)).as("%s pages", a).isTrue());
      }
    }
    List<String> apiAlarms = new ArrayList<>();
    alarmResources()
        .forEach(
            (id, a) -> {
              if (metricMathNamespaces(a).contains("AWS/ApiGateway")) {
                apiAlarms.add(id);
              }
            });
    assertThat(apiAlarms)
        .singleElement()
        .satisfies(
            id -> {
              JsonNode a = alarmResources().get(id);
              Set<String> metrics = new TreeSet<>();
              for (JsonNode m : a.path("Metrics")) {
                JsonNode metric = m.at("/MetricStat/Metric");
                if (!metric.isMissingNode()) {
                  metrics.add(metric.path("MetricName").asText());
                  assertThat(dimensions(metric).get("ApiId").asText()).isEqualTo("OrdersApi");
                }
              }
              assertThat(metrics).containsExactly("5xx", "Count");
              assertThat(ALARMS.pages(id)).as("%s pages", id).isTrue();
            });
  }

  // ---- item 8: the dashboard ----

  @Test
  void dashboardShowsTheClosePathWithTheMetricNamesTheCodeEmits() throws IOException {
    JsonNode body = JSON.readTree(monitoringProps("Dashboard").path("DashboardBody").asText());
    Map<String, Set<String>> statsByOrderTimeoutMetric = new TreeMap<>();
    Set<String> lambdaFunctions = new TreeSet<>();
    List<String> alarmArns = new ArrayList<>();
    for (JsonNode widget : body.path("widgets")) {
      JsonNode p = widget.path("properties");
      p.path("alarms").forEach(a -> alarmArns.add(a.asText()));
      for (JsonNode metric : p.path("metrics")) {
        List<String> parts = new ArrayList<>();
        JsonNode options = JSON.createObjectNode();
        for (JsonNode part : metric) {
          if (part.isObject()) {
            options = part;
          } else {
            parts.add(part.asText());
          }
        }
        assertThat(parts.get(0)).as("metric %s uses no '.' shorthand", metric).isNotEqualTo(".");
        String stat = options.path("stat").asText(p.path("stat").asText());
        if (parts.get(0).equals(MetricNames.NAMESPACE)) {
          // the service-wide EMF series: the dimension set without FunctionName
          assertThat(parts).as("%s has no dimension", metric).hasSize(2);
          statsByOrderTimeoutMetric.computeIfAbsent(parts.get(1), k -> new TreeSet<>()).add(stat);
        } else if (parts.get(0).equals("AWS/Lambda")) {
          assertThat(parts.get(2)).isEqualTo("FunctionName");
          lambdaFunctions.add(parts.get(3));
        }
      }
    }
    Set<String> emitted = emittedMetricNames();
    assertThat(emitted).as("names found in the sources").containsAll(MetricNames.ALARMED);
    assertThat(statsByOrderTimeoutMetric.keySet())
        .as("dashboard metrics the code never records")
        .isSubsetOf(emitted);
    assertThat(statsByOrderTimeoutMetric)
        .containsEntry(MetricNames.CLOSE_LAG_MS, Set.of("p50", "p99"))
        .containsKeys(
            MetricNames.TIMER_BACKLOG,
            "orders_closed_timeout",
            "orders_closed_cancel",
            "orders_paid",
            MetricNames.DEAD_LETTERS,
            MetricNames.PAID_AFTER_CLOSE,
            "stream_delivery_failures",
            "stream_claimed");
    Set<String> functionRefs = new TreeSet<>();
    SAM.functions().forEach(f -> functionRefs.add("${" + f.logicalId() + "}"));
    assertThat(lambdaFunctions).isEqualTo(functionRefs);

    // the alarm widget shows every alarm that pages by itself: the composites and the alarms that
    // are no composite's member
    Set<String> paging = new TreeSet<>();
    ALARMS
        .all()
        .forEach(
            (id, a) -> {
              if (alarmActions(a).contains(TOPIC)) {
                paging.add("${" + id + ".Arn}");
              }
            });
    assertThat(paging).hasSizeGreaterThan(ALARMS.composites().size());
    assertThat(alarmArns).containsExactlyInAnyOrderElementsOf(paging);

    // every ${...} of the !Sub is a resource (or its attribute) or a parameter of the monitoring
    // template, or a pseudo parameter
    JsonNode monitoring = MONITORING_TEMPLATE.path("Resources");
    JsonNode passed = MONITORING_TEMPLATE.path("Parameters");
    Matcher m = Pattern.compile("\\$\\{([A-Za-z0-9:]+)(\\.[A-Za-z]+)?}").matcher(body.toString());
    while (m.find()) {
      String name = m.group(1);
      assertThat(name.startsWith("AWS::") || monitoring.has(name) || passed.has(name))
          .as("${%s} in DashboardBody", name)
          .isTrue();
    }
    assertThat(monitoringProps("Dashboard").path("DashboardName").asText())
        .as("named after the parent stack, as before it was nested")
        .isEqualTo("${ParentStackName}-order-timeout");
    assertThat(TEMPLATE.at("/Outputs/DashboardName/Value").asText())
        .isEqualTo(MONITORING + ".Outputs.DashboardName");
    assertThat(MONITORING_TEMPLATE.at("/Outputs/DashboardName/Value").asText())
        .isEqualTo("Dashboard");
  }

  // ---- item 9: sam build ----

  @Test
  void everyFunctionIsBuiltByTheMakefileFromOneMavenRun() throws IOException {
    String makefile = Files.readString(ROOT.resolve("Makefile"));
    assertThat(Pattern.compile("(?m)^\\t.*\\./mvnw ").matcher(makefile).results().count())
        .as("one Maven invocation (a recipe line) for all functions")
        .isEqualTo(1);
    assertThat(makefile)
        .contains("cp $(ROOT)/functions/$(1)/target/$(1)-lambda.jar $(ARTIFACTS_DIR)/lib/");
    for (SamTemplate.Function f : SAM.functions()) {
      JsonNode metadata = RESOURCES.path(f.logicalId()).path("Metadata");
      assertThat(metadata.path("BuildMethod").asText()).as(f.logicalId()).isEqualTo("makefile");
      assertThat(ROOT.resolve(metadata.path("ContextPath").asText()).resolve("Makefile"))
          .isRegularFile();
      String module = module(f);
      assertThat(ROOT.resolve("functions").resolve(module).resolve("pom.xml")).isRegularFile();
      Matcher target =
          Pattern.compile("(?m)^build-" + f.logicalId() + ":\\s*\\n((?:\\t.*\\n)+)")
              .matcher(makefile);
      assertThat(target.find()).as("Makefile target build-%s", f.logicalId()).isTrue();
      assertThat(target.group(1))
          .as("build-%s reuses the shared Maven run and ships its own jar", f.logicalId())
          .contains("$(JARS)")
          .contains("$(call copy-jar," + module + ")");
    }
  }

  @Test
  void makefileTargetsCopyTheShadedJarIntoTheArtifactsDir(@TempDir Path artifacts)
      throws Exception {
    Path make = onPath("make");
    assumeTrue(make != null, "make is not on the PATH: dry run skipped");
    for (SamTemplate.Function f : SAM.functions()) {
      Path dir = artifacts.resolve(f.logicalId());
      // as SAM runs it: in another directory, with the Makefile given and ARTIFACTS_DIR set
      Result dry =
          run(
              artifacts,
              make.toString(),
              "-n",
              "--makefile",
              ROOT.resolve("Makefile").toString(),
              "build-" + f.logicalId(),
              "ARTIFACTS_DIR=" + dir);
      assertThat(dry.code()).as(dry.output()).isZero();
      String module = module(f);
      assertThat(dry.output())
          .contains(
              "cp "
                  + ROOT.resolve("functions/" + module + "/target/" + module + "-lambda.jar")
                  + " "
                  + dir
                  + "/lib/");
    }
  }

  // ---- the template as CloudFormation sees it ----

  @Tag("integration")
  @Test
  void cfnLintReportsNothingNotEvenInformational() throws Exception {
    Path cfnLint = onPath("cfn-lint");
    assumeTrue(cfnLint != null, "cfn-lint is not on the PATH (pip install cfn-lint): skipped");
    // -c I adds the informational rules to the default errors and warnings
    String nested = ROOT.relativize(MONITORING_APP.location()).toString();
    Result lint = run(ROOT, cfnLint.toString(), "-c", "I", "--", "template.yaml", nested);
    assertThat(lint.output())
        .as("cfn-lint -c I findings in template.yaml and %s", nested)
        .isEmpty();
    assertThat(lint.code()).isZero();
  }

  @Test
  void samTransformSendsEveryEventSourceToTheLiveAlias() throws Exception {
    JsonNode cfn = translated();
    JsonNode resources = cfn.path("Resources");
    Map<String, String> aliasOf = new HashMap<>();
    resources
        .fields()
        .forEachRemaining(
            e -> {
              if (e.getValue().path("Type").asText().equals("AWS::Lambda::Alias")) {
                JsonNode p = e.getValue().path("Properties");
                assertThat(p.path("Name").asText()).isEqualTo("live");
                aliasOf.put(p.at("/FunctionName/Ref").asText(), e.getKey());
                JsonNode update = e.getValue().at("/UpdatePolicy/CodeDeployLambdaAliasUpdate");
                assertThat(update.at("/BeforeAllowTrafficHook/Ref").asText()).isEqualTo(HOOK);
                JsonNode group = resources.path(update.at("/DeploymentGroupName/Ref").asText());
                assertThat(group.at("/Properties/AlarmConfiguration/Enabled").asBoolean()).isTrue();
                assertThat(group.at("/Properties/AutoRollbackConfiguration/Events").toString())
                    .contains("DEPLOYMENT_STOP_ON_ALARM");
              }
            });
    Set<String> functions = new TreeSet<>();
    SAM.functions().forEach(f -> functions.add(f.logicalId()));
    assertThat(aliasOf.keySet()).isEqualTo(functions);

    int schedules = 0;
    int invokeConfigs = 0;
    for (var it = resources.fields(); it.hasNext(); ) {
      var e = it.next();
      JsonNode p = e.getValue().path("Properties");
      switch (e.getValue().path("Type").asText()) {
        case "AWS::Scheduler::Schedule" -> {
          schedules++;
          assertThat(aliasOf.values()).as(e.getKey()).contains(p.at("/Target/Arn/Ref").asText());
          assertThat(p.at("/GroupName/Ref").asText()).isEqualTo("ScheduleGroup");
        }
        case "AWS::Lambda::EventInvokeConfig" -> {
          invokeConfigs++;
          assertThat(p.path("Qualifier").asText()).as(e.getKey()).isEqualTo("live");
          assertThat(p.path("MaximumRetryAttempts").asInt(-1)).isZero();
        }
        case "AWS::Lambda::Permission" ->
            assertThat(aliasOf.values())
                .as(e.getKey())
                .contains(p.at("/FunctionName/Ref").asText());
        default -> {
          // other resources are checked from the YAML above
        }
      }
    }
    assertThat(schedules).isEqualTo(3);
    assertThat(invokeConfigs).isEqualTo(3);
    // every route integrates with the alias, not $LATEST
    Matcher uri =
        Pattern.compile("functions/\\$\\{([A-Za-z0-9]+)}/invocations")
            .matcher(resources.path("OrdersApi").path("Properties").path("Body").toString());
    Set<String> integrated = new TreeSet<>();
    while (uri.find()) {
      integrated.add(uri.group(1));
    }
    assertThat(integrated).isNotEmpty().allMatch(aliasOf::containsValue);
  }

  // ---- helpers ----

  private static JsonNode translated() throws Exception {
    Path python = onPath("python3");
    assumeTrue(python != null, "python3 is not on the PATH: SAM translation skipped");
    assumeTrue(
        run(ROOT, python.toString(), "-c", "import samtranslator").code() == 0,
        "aws-sam-translator is not installed (pip install cfn-lint brings it): skipped");
    Result out =
        run(ROOT, false, python.toString(), tool("sam_translate.py").toString(), "template.yaml");
    assertThat(out.code()).as("sam_translate.py failed; run it by hand to see why").isZero();
    return JSON.readTree(out.output());
  }

  /** The SAMPLES JSON of the hook's code: module -> [{name, event, expect}]. */
  static JsonNode hookSamples() throws IOException {
    String code = hookCode();
    Matcher m =
        Pattern.compile("json\\.loads\\(r\"\"\"(.*?)\"\"\"\\)", Pattern.DOTALL).matcher(code);
    assertThat(m.find()).as("SAMPLES = json.loads(r\"\"\"...\"\"\") in the hook's code").isTrue();
    return JSON.readTree(m.group(1));
  }

  /** The template's parameter names. */
  static Set<String> parameterNames() {
    return names(PARAMETERS);
  }

  /** The hook's index.py, in the directory its Code names (infra/hooks/pre-traffic). */
  static String hookCode() {
    Path index = ROOT.resolve(props(HOOK).path("Code").asText()).resolve("index.py");
    try {
      return Files.readString(index);
    } catch (IOException e) {
      throw new UncheckedIOException("could not read the pre-traffic hook " + index, e);
    }
  }

  /** functions/<module> of a function's CodeUri. */
  static String module(SamTemplate.Function f) {
    assertThat(f.codeUri()).as("CodeUri of %s", f.logicalId()).matches("functions/[a-z0-9-]+");
    return f.codeUri().substring("functions/".length());
  }

  static Path tool(String name) {
    try {
      return Path.of(TemplateProductionTest.class.getResource("/template-tools/" + name).toURI());
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<SamTemplate.Function> scheduledFunctions() {
    return SAM.functions().stream().filter(f -> !f.schedules().isEmpty()).toList();
  }

  private static List<JsonNode> schedules(String logicalId) {
    List<JsonNode> out = new ArrayList<>();
    props(logicalId)
        .path("Events")
        .forEach(
            e -> {
              if (e.path("Type").asText().equals("ScheduleV2")) {
                out.add(e);
              }
            });
    return out;
  }

  private static String autoPublishAlias(String logicalId) {
    JsonNode own = props(logicalId).path("AutoPublishAlias");
    return own.isMissingNode()
        ? TEMPLATE.at("/Globals/Function/AutoPublishAlias").asText(null)
        : own.asText();
  }

  static JsonNode props(String logicalId) {
    assertThat(RESOURCES.has(logicalId)).as("resource %s", logicalId).isTrue();
    return RESOURCES.path(logicalId).path("Properties");
  }

  /** The Number parameter a function's ReservedConcurrentExecutions takes, unset when it is 0. */
  private static JsonNode reservedConcurrency(String logicalId) {
    // YAML tags are dropped: !If [Condition, !Ref Parameter, !Ref AWS::NoValue] reads as a list
    JsonNode reserved = props(logicalId).path("ReservedConcurrentExecutions");
    assertThat(reserved.isArray() && reserved.size() == 3)
        .as("ReservedConcurrentExecutions of %s is !If [...]: %s", logicalId, reserved)
        .isTrue();
    String parameter = reserved.get(1).asText();
    assertThat(reserved.get(2).asText()).isEqualTo("AWS::NoValue");
    JsonNode condition = TEMPLATE.path("Conditions").path(reserved.get(0).asText());
    // !Not [!Equals [!Ref Parameter, "0"]]
    assertThat(condition.toString())
        .as("condition %s", reserved.get(0).asText())
        .isEqualTo("[[\"" + parameter + "\",\"0\"]]");
    JsonNode p = PARAMETERS.path(parameter);
    assertThat(p.path("Type").asText()).as("parameter %s", parameter).isEqualTo("Number");
    assertThat(p.path("MinValue").asInt(-1)).as("MinValue of %s", parameter).isZero();
    return p;
  }

  private static String type(String logicalId) {
    return RESOURCES.path(logicalId).path("Type").asText();
  }

  private static long numberParameter(String name) {
    JsonNode p = PARAMETERS.path(name);
    assertThat(p.path("Type").asText()).as("parameter %s", name).isEqualTo("Number");
    return p.path("Default").asLong();
  }

  /** The metric alarms of template.yaml and of the monitoring template, by logical id. */
  private static Map<String, JsonNode> alarmResources() {
    return ALARMS.alarms();
  }

  private static List<JsonNode> alarms() {
    return new ArrayList<>(alarmResources().values());
  }

  /** A DeploymentPreference alarm's id: a Ref to an alarm resource, or an alarm's AlarmName. */
  private static String alarmId(String reference) {
    if (alarmResources().containsKey(reference)) {
      return reference;
    }
    return alarmResources().entrySet().stream()
        .filter(a -> a.getValue().path("AlarmName").asText().equals(reference))
        .map(Map.Entry::getKey)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no alarm " + reference));
  }

  /** The ids of the metric alarms on one metric with exactly these dimensions. */
  private static List<String> alarmsOn(
      String namespace, String metric, Map<String, String> dimensions) {
    return alarmResources().entrySet().stream()
        .filter(a -> a.getValue().path("Namespace").asText().equals(namespace))
        .filter(a -> a.getValue().path("MetricName").asText().equals(metric))
        .filter(
            a -> {
              Map<String, String> dims = new TreeMap<>();
              dimensions(a.getValue()).forEach((k, v) -> dims.put(k, v.asText()));
              return dims.equals(dimensions);
            })
        .map(Map.Entry::getKey)
        .toList();
  }

  static JsonNode monitoringProps(String logicalId) {
    JsonNode resources = MONITORING_TEMPLATE.path("Resources");
    assertThat(resources.has(logicalId)).as("resource %s of Monitoring", logicalId).isTrue();
    return resources.path(logicalId).path("Properties");
  }

  private static Map<String, JsonNode> dimensions(JsonNode alarmOrMetric) {
    Map<String, JsonNode> out = new TreeMap<>();
    alarmOrMetric
        .path("Dimensions")
        .forEach(d -> out.put(d.path("Name").asText(), d.path("Value")));
    return out;
  }

  private static Set<String> metricMathNamespaces(JsonNode alarm) {
    Set<String> out = new TreeSet<>();
    alarm
        .path("Metrics")
        .forEach(
            m -> {
              String ns = m.at("/MetricStat/Metric/Namespace").asText("");
              if (!ns.isEmpty()) {
                out.add(ns);
              }
            });
    return out;
  }

  private static Set<String> alarmActions(JsonNode alarm) {
    return new TreeSet<>(texts(alarm.path("AlarmActions")));
  }

  private static List<String> texts(JsonNode node) {
    List<String> out = new ArrayList<>();
    if (node.isArray()) {
      node.forEach(n -> out.add(n.asText()));
    } else if (!node.isMissingNode()) {
      out.add(node.asText());
    }
    return out;
  }

  private static Set<String> names(JsonNode object) {
    Set<String> out = new TreeSet<>();
    object.fieldNames().forEachRemaining(out::add);
    return out;
  }

  /**
   * Metric names the main sources record: the MetricNames constants and the string literals in the
   * first argument of {@code metrics.count/recordMillis/gauge(...)} calls (a ternary between two
   * names yields both).
   */
  static Set<String> emittedMetricNames() throws IOException {
    Set<String> out = new TreeSet<>();
    for (var field : MetricNames.class.getFields()) {
      if (field.getType() == String.class && !field.getName().equals("NAMESPACE")) {
        try {
          out.add((String) field.get(null));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    Pattern call = Pattern.compile("metrics(?:\\(\\))?\\s*\\.\\s*(?:count|recordMillis|gauge)\\(");
    Pattern literal = Pattern.compile("\"([a-z][a-z0-9_]*)\"");
    List<Path> dirs = new ArrayList<>(List.of(ROOT.resolve("shared/src/main/java")));
    try (Stream<Path> functions = Files.list(ROOT.resolve("functions"))) {
      functions.map(d -> d.resolve("src/main/java")).filter(Files::isDirectory).forEach(dirs::add);
    }
    for (Path dir : dirs) {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
          String source = Files.readString(file);
          Matcher m = call.matcher(source);
          while (m.find()) {
            int end = firstArgumentEnd(source, m.end());
            Matcher names = literal.matcher(source.substring(m.end(), end));
            while (names.find()) {
              out.add(names.group(1));
            }
          }
        }
      }
    }
    return out;
  }

  /** Index of the comma or parenthesis that ends the call argument starting at {@code start}. */
  private static int firstArgumentEnd(String source, int start) {
    int depth = 0;
    for (int i = start; i < source.length(); i++) {
      char c = source.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')' && depth-- == 0 || c == ',' && depth == 0) {
        return i;
      }
    }
    return source.length();
  }

  record Result(int code, String output) {}

  /** Runs {@code command} in {@code dir}; the output is stdout and stderr together. */
  static Result run(Path dir, String... command) throws IOException, InterruptedException {
    return run(dir, true, command);
  }

  static Result run(Path dir, boolean withStderr, String... command)
      throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
    // python3 must not leave __pycache__ beside the hook's sources
    builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
    if (withStderr) {
      builder.redirectErrorStream(true);
    } else {
      builder.redirectError(ProcessBuilder.Redirect.DISCARD);
    }
    Process p = builder.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(180, TimeUnit.SECONDS)).as("%s finished", List.of(command)).isTrue();
    return new Result(p.exitValue(), output.strip());
  }

  static Path onPath(String command) {
    String path = System.getenv("PATH");
    for (String dir : path == null ? new String[0] : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir, command);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }
}
