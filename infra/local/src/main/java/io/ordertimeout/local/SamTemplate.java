package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the local runner and the template tests need from template.yaml: the functions with their
 * Handler, CodeUri, Timeout and environment, their HTTP API routes and their ScheduleV2 schedules,
 * and the nested applications (AWS::Serverless::Application, e.g. the monitoring template) whose
 * Location is a template file beside it.
 *
 * <p>Parsed with jackson-dataformat-yaml, which reads CloudFormation's short-form tags ({@code !Ref
 * X}, {@code !Sub "..."}, {@code !GetAtt A.B}) as the plain scalar or sequence under the tag: an
 * environment value {@code !Ref RedisUri} becomes "RedisUri". Only the names matter here, never the
 * resolved values, so nothing is lost.
 */
public record SamTemplate(
    Map<String, String> globalEnvironment,
    int globalTimeoutSeconds,
    List<Function> functions,
    List<Application> applications) {

  /** Lambda's own default when neither Globals nor the function sets Timeout. */
  private static final int LAMBDA_DEFAULT_TIMEOUT_SECONDS = 3;

  private static final Pattern RATE =
      Pattern.compile("rate\\((\\d+) (minute|minutes|hour|hours|day|days)\\)");

  public SamTemplate {
    globalEnvironment = Map.copyOf(globalEnvironment);
    functions = List.copyOf(functions);
    applications = List.copyOf(applications);
  }

  /** One AWS::Serverless::Function. */
  public record Function(
      String logicalId,
      String handler,
      String codeUri,
      int timeoutSeconds,
      Map<String, String> environment,
      List<HttpRoute> routes,
      List<Schedule> schedules) {

    public Function {
      environment = Map.copyOf(environment);
      routes = List.copyOf(routes);
      schedules = List.copyOf(schedules);
    }

    /** {@code io.x.Handler} of {@code io.x.Handler::handleRequest}. */
    public String handlerClass() {
      int sep = handler.indexOf("::");
      return sep < 0 ? handler : handler.substring(0, sep);
    }

    /** {@code handleRequest} of {@code io.x.Handler::handleRequest}; Lambda's default otherwise. */
    public String handlerMethod() {
      int sep = handler.indexOf("::");
      return sep < 0 ? "handleRequest" : handler.substring(sep + 2);
    }
  }

  /** One HttpApi event: method, path (with {param} segments) and the authorizer in force. */
  public record HttpRoute(String eventName, String method, String path, String auth) {
    /** API Gateway's route key, e.g. {@code POST /orders/{id}/cancel}. */
    public String routeKey() {
      return method + " " + path;
    }
  }

  /** One ScheduleV2 event: its expression, the interval it means, and the Input JSON it sends. */
  public record Schedule(String eventName, String expression, Duration rate, String input) {}

  /**
   * One AWS::Serverless::Application whose Location is a local template: its path (resolved against
   * the parent template's directory, as {@code sam package} resolves it) and the Parameters the
   * parent passes, each as SamTemplate reads a value ({@code !GetAtt A.Arn} is "A.Arn").
   */
  public record Application(String logicalId, Path location, Map<String, String> parameters) {
    public Application {
      parameters = Map.copyOf(parameters);
    }

    /** The application's template, read as {@link #yaml(Path)} reads one. */
    public JsonNode template() {
      return yaml(location);
    }
  }

  public static SamTemplate read(Path file) {
    try {
      return parse(Files.readString(file), file.toAbsolutePath().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException("could not read SAM template " + file, e);
    }
  }

  /** A template's text; nested applications' Locations resolve against the working directory. */
  public static SamTemplate parse(String yaml) {
    return parse(yaml, Path.of("").toAbsolutePath());
  }

  /**
   * A CloudFormation or SAM template as a tree, with short-form tags read as the value under them
   * ({@code !Ref X} is "X"): what the template tests inspect beyond the functions.
   */
  public static JsonNode yaml(Path file) {
    try {
      return tree(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("could not read template " + file, e);
    }
  }

  private static JsonNode tree(String yaml) {
    try {
      return new ObjectMapper(new YAMLFactory()).readTree(yaml);
    } catch (IOException e) {
      throw new IllegalArgumentException("template is not valid YAML: " + e.getMessage(), e);
    }
  }

  private static SamTemplate parse(String yaml, Path dir) {
    JsonNode root = tree(yaml);
    JsonNode globals = root.path("Globals").path("Function");
    JsonNode resources = root.path("Resources");
    int globalTimeout = globals.path("Timeout").asInt(LAMBDA_DEFAULT_TIMEOUT_SECONDS);
    List<Function> functions = new ArrayList<>();
    List<Application> applications = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = resources.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> resource = it.next();
      switch (resource.getValue().path("Type").asText()) {
        case "AWS::Serverless::Function" ->
            functions.add(
                function(resource.getKey(), resource.getValue(), resources, globalTimeout));
        case "AWS::Serverless::Application" ->
            application(resource.getKey(), resource.getValue(), dir).ifPresent(applications::add);
        default -> {
          // other resources are the template tests' to inspect
        }
      }
    }
    return new SamTemplate(environment(globals), globalTimeout, functions, applications);
  }

  public Optional<Application> application(String logicalId) {
    return applications.stream().filter(a -> a.logicalId().equals(logicalId)).findFirst();
  }

  public Optional<Function> function(String logicalId) {
    return functions.stream().filter(f -> f.logicalId().equals(logicalId)).findFirst();
  }

  /** Every HTTP route of every function, in template order. */
  public List<HttpRoute> routes() {
    return functions.stream().flatMap(f -> f.routes().stream()).toList();
  }

  /**
   * The interval a ScheduleV2 {@code rate(...)} expression means; cron and at() are refused, since
   * the local runner would have to guess their next fire time.
   */
  public static Duration rate(String expression) {
    Matcher m = RATE.matcher(expression.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "unsupported schedule expression '" + expression + "'; the local runner runs rate(...)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "minute", "minutes" -> Duration.ofMinutes(n);
      case "hour", "hours" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  private static Function function(
      String logicalId, JsonNode resource, JsonNode resources, int globalTimeout) {
    JsonNode props = resource.path("Properties");
    List<HttpRoute> routes = new ArrayList<>();
    List<Schedule> schedules = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = props.path("Events").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> event = it.next();
      JsonNode ep = event.getValue().path("Properties");
      switch (event.getValue().path("Type").asText()) {
        case "HttpApi" -> routes.add(route(event.getKey(), ep, resources));
        case "ScheduleV2", "Schedule" -> schedules.add(schedule(event.getKey(), ep));
        default -> {
          // other event sources are not served locally; the template tests list what they are
        }
      }
    }
    return new Function(
        logicalId,
        props.path("Handler").asText(null),
        props.path("CodeUri").asText(null),
        props.path("Timeout").asInt(globalTimeout),
        environment(props),
        routes,
        schedules);
  }

  /**
   * An application whose Location is a path; one from the Serverless Application Repository (an
   * ApplicationId and SemanticVersion) or an S3 URL has no local template and is left out.
   */
  private static Optional<Application> application(String logicalId, JsonNode resource, Path dir) {
    JsonNode props = resource.path("Properties");
    JsonNode location = props.path("Location");
    if (!location.isTextual() || location.asText().contains("://")) {
      return Optional.empty();
    }
    Map<String, String> parameters = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = props.path("Parameters").fields();
        it.hasNext(); ) {
      Map.Entry<String, JsonNode> p = it.next();
      parameters.put(
          p.getKey(), p.getValue().isValueNode() ? p.getValue().asText() : p.getValue().toString());
    }
    return Optional.of(
        new Application(logicalId, dir.resolve(location.asText()).normalize(), parameters));
  }

  private static HttpRoute route(String name, JsonNode props, JsonNode resources) {
    String auth = props.path("Auth").path("Authorizer").asText(null);
    if (auth == null) {
      // the API's DefaultAuthorizer applies to every route that does not name its own
      String apiId = props.path("ApiId").asText("");
      auth =
          resources
              .path(apiId)
              .path("Properties")
              .path("Auth")
              .path("DefaultAuthorizer")
              .asText("NONE");
    }
    return new HttpRoute(
        name, props.path("Method").asText("ANY").toUpperCase(), props.path("Path").asText(), auth);
  }

  private static Schedule schedule(String name, JsonNode props) {
    String expression = props.path("ScheduleExpression").asText();
    JsonNode input = props.path("Input");
    return new Schedule(
        name, expression, rate(expression), input.isMissingNode() ? "{}" : input.asText());
  }

  private static Map<String, String> environment(JsonNode owner) {
    Map<String, String> env = new LinkedHashMap<>();
    JsonNode vars = owner.path("Environment").path("Variables");
    for (Iterator<Map.Entry<String, JsonNode>> it = vars.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> v = it.next();
      env.put(
          v.getKey(), v.getValue().isValueNode() ? v.getValue().asText() : v.getValue().toString());
    }
    return env;
  }
}
