package io.ordertimeout.testing;

import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** The Lambda context of a test invocation: a request id and a real remaining-time countdown. */
public final class LambdaTestContext implements Context {
  private final String requestId = UUID.randomUUID().toString();
  private final String functionName;
  private final long deadlineMillis;

  public LambdaTestContext(String functionName, long timeoutMillis) {
    this.functionName = functionName;
    this.deadlineMillis = System.currentTimeMillis() + timeoutMillis;
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
    return "test";
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
    return "arn:aws:lambda:ap-east-1:123456789012:function:" + functionName;
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
