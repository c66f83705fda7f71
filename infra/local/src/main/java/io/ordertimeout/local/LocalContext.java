package io.ordertimeout.local;

import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * The Lambda context of one local invocation: a fresh request id and a real countdown from the
 * function's template Timeout. When the stack is stopping the remaining time reads 0, so a
 * long-running loop (the sweep runs until its remaining time falls under its margin, see
 * config.Waits) ends its current pass and returns instead of holding Ctrl-C for a minute.
 */
final class LocalContext implements Context {
  private final String requestId = UUID.randomUUID().toString();
  private final String functionName;
  private final long deadlineMillis;
  private final BooleanSupplier stopping;

  LocalContext(String functionName, long timeoutMillis, BooleanSupplier stopping) {
    this.functionName = functionName;
    this.deadlineMillis = System.currentTimeMillis() + timeoutMillis;
    this.stopping = stopping;
  }

  @Override
  public String getAwsRequestId() {
    return requestId;
  }

  @Override
  public String getLogGroupName() {
    return "/aws/lambda/" + functionName;
  }

  @Override
  public String getLogStreamName() {
    return "local";
  }

  @Override
  public String getFunctionName() {
    return functionName;
  }

  @Override
  public String getFunctionVersion() {
    return "$LATEST";
  }

  @Override
  public String getInvokedFunctionArn() {
    return "arn:aws:lambda:local:000000000000:function:" + functionName;
  }

  @Override
  public CognitoIdentity getIdentity() {
    return null;
  }

  @Override
  public ClientContext getClientContext() {
    return null;
  }

  @Override
  public int getRemainingTimeInMillis() {
    if (stopping.getAsBoolean()) {
      return 0;
    }
    return (int) Math.max(0, deadlineMillis - System.currentTimeMillis());
  }

  @Override
  public int getMemoryLimitInMB() {
    return 1024;
  }

  @Override
  public LambdaLogger getLogger() {
    return new LambdaLogger() {
      @Override
      public void log(String message) {
        System.out.println(message);
      }

      @Override
      public void log(byte[] message) {
        System.out.println(new String(message, StandardCharsets.UTF_8));
      }
    };
  }
}
