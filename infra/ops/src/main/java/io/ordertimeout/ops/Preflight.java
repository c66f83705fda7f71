package io.ordertimeout.ops;

import java.io.PrintStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.ec2.Ec2Client;
import software.amazon.awssdk.services.ec2.Ec2ClientBuilder;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClientBuilder;

/**
 * {@code ./ops preflight --stack-params K=V,...}: checks, through the AWS API, what the functions'
 * init needs before a deploy starts. SnapStart runs init while CloudFormation publishes each
 * version, so a missing secret, a subnet without a way out or a security group nobody admits fails
 * the stack only after ~20 minutes of rollback; here it fails in seconds, one line per check.
 *
 * <p>Read-only: Secrets Manager GetSecretValue (the values are parsed, never printed) and EC2
 * Describe* calls, so it needs {@code secretsmanager:GetSecretValue} on the secrets and {@code
 * ec2:Describe*}.
 */
final class Preflight {
  static final String NAME = "preflight";

  /** One check's verdict: a failed one names what to fix. */
  record Check(String name, boolean ok, String detail) {
    static Check pass(String name, String detail) {
      return new Check(name, true, detail);
    }

    static Check fail(String name, String detail) {
      return new Check(name, false, detail);
    }
  }

  private Preflight() {}

  /**
   * {@code ./ops preflight --stack-params K=V,... [--profile P] [--region R] [--endpoint-url URL]}:
   * 0 when every check passed, 1 when one failed, 2 when it could not start.
   */
  static int command(Flags flags, PrintStream out) {
    String params = flags.value("stack-params", null);
    if (params == null) {
      out.println(
          "usage: ./ops preflight --stack-params SubnetIds=subnet-a,subnet-b,SecurityGroupId=sg-1,"
              + "DbSecretArn=...,WeChatPaySecretArn=...[,RedisSecretArn=...,MysqlUrl=...,RedisUri=...]"
              + " [--profile P] [--region R] [--endpoint-url URL]");
      return 2;
    }
    Optional<String> profile = Optional.ofNullable(flags.value("profile", null));
    AwsCredentialsProvider credentials =
        profile
            .<AwsCredentialsProvider>map(ProfileCredentialsProvider::create)
            .orElseGet(() -> DefaultCredentialsProvider.builder().build());
    String region;
    try {
      region = region(Optional.ofNullable(flags.value("region", null)), profile);
    } catch (SdkException e) {
      out.println("preflight: no region (pass --region): " + e.getMessage());
      return 2;
    }
    URI endpoint =
        Optional.ofNullable(flags.value("endpoint-url", null)).map(URI::create).orElse(null);
    Map<String, String> stackParams;
    try {
      stackParams = parseStackParams(params);
    } catch (IllegalArgumentException e) {
      out.println("preflight: " + e.getMessage());
      return 2;
    }
    try (Ec2Client ec2 = ec2(region, credentials, endpoint);
        SecretsManagerClient secrets = secretsManager(region, credentials, endpoint)) {
      return run(stackParams, region, ec2, secrets, out);
    } catch (SdkException e) {
      out.println("preflight: the AWS API refused or could not be reached: " + e.getMessage());
      return 2;
    }
  }

  /** Runs every check, prints one line each and a summary; 0 when all passed, else 1. */
  static int run(
      Map<String, String> params,
      String region,
      Ec2Client ec2,
      SecretsManagerClient secrets,
      PrintStream out) {
    out.println("preflight: region " + region);
    List<Check> checks = new ArrayList<>();
    checks.addAll(new PreflightSecrets(secrets).checks(params));
    checks.addAll(new PreflightNetwork(ec2, region).checks(params));
    long failed = checks.stream().filter(c -> !c.ok()).count();
    for (Check c : checks) {
      out.println((c.ok() ? "  PASS  " : "  FAIL  ") + c.name() + ": " + c.detail());
    }
    out.println(
        failed == 0
            ? "preflight: all " + checks.size() + " checks passed"
            : "preflight: " + failed + " of " + checks.size() + " checks failed");
    return failed == 0 ? 0 : 1;
  }

  /**
   * {@code K=V,K=V}: a word without '=' continues the previous value, so a list parameter is
   * written as it is in {@code sam deploy --parameter-overrides} (SubnetIds=subnet-a,subnet-b).
   */
  static Map<String, String> parseStackParams(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    String last = null;
    for (String word : text.split(",")) {
      int eq = word.indexOf('=');
      if (eq > 0) {
        last = word.substring(0, eq).trim();
        out.put(last, word.substring(eq + 1).trim());
      } else if (last != null) {
        out.put(last, out.get(last) + "," + word.trim());
      } else {
        throw new IllegalArgumentException("--stack-params: expected K=V, got '" + word + "'");
      }
    }
    return out;
  }

  private static String region(Optional<String> flag, Optional<String> profile) {
    if (flag.isPresent()) {
      return flag.get();
    }
    DefaultAwsRegionProviderChain.Builder chain = DefaultAwsRegionProviderChain.builder();
    profile.ifPresent(chain::profileName);
    return chain.build().getRegion().id();
  }

  private static Ec2Client ec2(String region, AwsCredentialsProvider credentials, URI endpoint) {
    Ec2ClientBuilder b =
        Ec2Client.builder()
            .region(Region.of(region))
            .credentialsProvider(credentials)
            .httpClientBuilder(UrlConnectionHttpClient.builder());
    if (endpoint != null) {
      b.endpointOverride(endpoint);
    }
    return b.build();
  }

  private static SecretsManagerClient secretsManager(
      String region, AwsCredentialsProvider credentials, URI endpoint) {
    SecretsManagerClientBuilder b =
        SecretsManagerClient.builder()
            .region(Region.of(region))
            .credentialsProvider(credentials)
            .httpClientBuilder(UrlConnectionHttpClient.builder());
    if (endpoint != null) {
      b.endpointOverride(endpoint);
    }
    return b.build();
  }
}
