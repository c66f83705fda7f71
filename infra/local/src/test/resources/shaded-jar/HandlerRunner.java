import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.UUID;

/**
 * Runs a function's handler as Lambda's Java runtime does, on nothing but the function's shaded jar:
 * {@code java -cp <function>-lambda.jar HandlerRunner.java <handler class> <remaining ms> <event>...}
 * (a single-file source program, compiled against the jar alone). The handler is built through its
 * no-argument constructor (the init phase, reading the environment), then invoked once per event
 * file. Prints one {@code RESULT <json>} line per answer; an init failure prints {@code INIT-FAILED}
 * and exits 2, an invocation failure {@code INVOKE-FAILED} and exits 3.
 */
public class HandlerRunner {
  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  public static void main(String[] args) throws Exception {
    Object handler;
    Method handle;
    try {
      Class<?> type = Class.forName(args[0]);
      handler = type.getConstructor().newInstance();
      handle =
          Arrays.stream(type.getMethods())
              .filter(m -> m.getName().equals("handleRequest") && !m.isBridge())
              .filter(m -> m.getParameterCount() == 2)
              .findFirst()
              .orElseThrow();
    } catch (Throwable e) {
      System.out.println("INIT-FAILED " + e);
      e.printStackTrace(System.out);
      System.exit(2);
      return;
    }
    long remaining = Long.parseLong(args[1]);
    for (int i = 2; i < args.length; i++) {
      String event = Files.readString(Path.of(args[i]), StandardCharsets.UTF_8);
      try {
        Object input = JSON.readValue(event, handle.getParameterTypes()[0]);
        Object answer = handle.invoke(handler, input, context(remaining));
        System.out.println("RESULT " + JSON.writeValueAsString(answer));
      } catch (Throwable e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        System.out.println("INVOKE-FAILED " + cause);
        cause.printStackTrace(System.out);
        System.exit(3);
      }
    }
    System.out.flush();
    // Lettuce's and Hikari's threads would keep the JVM up; Lambda freezes it instead
    System.exit(0);
  }

  private static Context context(long remainingMillis) {
    long deadline = System.currentTimeMillis() + remainingMillis;
    String requestId = UUID.randomUUID().toString();
    String function = System.getenv().getOrDefault("AWS_LAMBDA_FUNCTION_NAME", "function");
    return new Context() {
      public String getAwsRequestId() {
        return requestId;
      }

      public String getLogGroupName() {
        return "/aws/lambda/" + function;
      }

      public String getLogStreamName() {
        return "shaded-jar-test";
      }

      public String getFunctionName() {
        return function;
      }

      public String getFunctionVersion() {
        return "1";
      }

      public String getInvokedFunctionArn() {
        return "arn:aws:lambda:ap-southeast-1:123456789012:function:" + function + ":live";
      }

      public CognitoIdentity getIdentity() {
        return null;
      }

      public ClientContext getClientContext() {
        return null;
      }

      public int getRemainingTimeInMillis() {
        return (int) Math.max(0, deadline - System.currentTimeMillis());
      }

      public int getMemoryLimitInMB() {
        return 1024;
      }

      public LambdaLogger getLogger() {
        return new LambdaLogger() {
          public void log(String message) {
            System.out.println(message);
          }

          public void log(byte[] message) {
            System.out.println(new String(message, StandardCharsets.UTF_8));
          }
        };
      }
    };
  }
}
