package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which changes publish a version behind the live alias, on the template as the SAM transform turns
 * it (aws-sam-translator; skipped without it, as the other translation tests). Every property of a
 * function as written publishes one (AutoPublishAliasAllProperties: a new Timeout or VpcConfig), a
 * new parameter value does not: SAM hashes the properties with every !Ref unresolved. So onboarding
 * a tenant on AWS bumps OTC_CONFIG_REVISION (docs/operations/onboarding.md): every function reads
 * the merchant secret and OTC_TENANT_PRINCIPALS at init, and SnapStart serves the snapshot of the
 * version that ran it.
 */
class ConfigRevisionTemplateTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path ROOT = Main.templatePath().getParent();
  private static final String REVISION = "        OTC_CONFIG_REVISION: \"1\"\n";

  @Test
  void aNewTenantPrincipalsValueAlonePublishesNoVersion() throws Exception {
    Map<String, String> before = versions(ROOT.resolve("template.yaml"));
    Map<String, String> after =
        versions(
            ROOT.resolve("template.yaml"),
            "TenantPrincipals={\"arn:aws:iam::123456789012:role/mall-a\":[\"shop-a\"]}");

    assertThat(before).hasSize(6);
    // the same version resources: the live alias keeps the version whose init read the old value
    assertThat(after).isEqualTo(before);
  }

  @Test
  void aNewConfigRevisionPublishesAVersionOfEveryFunctionBehindItsAlias(@TempDir Path dir)
      throws Exception {
    String template = Files.readString(ROOT.resolve("template.yaml"), StandardCharsets.UTF_8);
    assertThat(template)
        .as("the Globals environment sets the revision once")
        .containsOnlyOnce(REVISION);
    Path bumped = dir.resolve("template.yaml");
    Files.writeString(
        bumped,
        template.replace(REVISION, REVISION.replace("\"1\"", "\"2\"")),
        StandardCharsets.UTF_8);

    Map<String, String> before = versions(ROOT.resolve("template.yaml"));
    Map<String, String> after = versions(bumped);

    assertThat(after).hasSize(6).containsOnlyKeys(before.keySet());
    after.forEach(
        (function, version) ->
            assertThat(version).as("version of %s", function).isNotEqualTo(before.get(function)));
  }

  @Test
  void everyFunctionPublishesAVersionOnAnyChangeOfItsProperties() throws Exception {
    String template = Files.readString(ROOT.resolve("template.yaml"), StandardCharsets.UTF_8);
    // in Globals, so no function can leave it out
    assertThat(template)
        .containsOnlyOnce("    AutoPublishAlias: live\n")
        .containsOnlyOnce("    AutoPublishAliasAllProperties: true\n");
  }

  @Test
  void aChangedTimeoutPublishesAVersionOfThatFunction(@TempDir Path dir) throws Exception {
    String template = Files.readString(ROOT.resolve("template.yaml"), StandardCharsets.UTF_8);
    String sweepTimeout = "      Timeout: " + sweepTimeout(template) + "\n";
    assertThat(template).as("the sweep's Timeout line").containsOnlyOnce(sweepTimeout);
    Path changed = dir.resolve("template.yaml");
    Files.writeString(
        changed, template.replace(sweepTimeout, "      Timeout: 120\n"), StandardCharsets.UTF_8);

    Map<String, String> before = versions(ROOT.resolve("template.yaml"));
    Map<String, String> after = versions(changed);

    // SAM's default hash (code, Environment, MemorySize, SnapStart) kept the old id here, so the
    // live alias kept running with the old Timeout
    assertThat(after.get("TimeoutSweepFunction")).isNotEqualTo(before.get("TimeoutSweepFunction"));
    before.remove("TimeoutSweepFunction");
    after.remove("TimeoutSweepFunction");
    assertThat(after).as("the other functions").isEqualTo(before);
  }

  @Test
  void aChangedSubnetPublishesAVersionOfEveryFunction(@TempDir Path dir) throws Exception {
    String template = Files.readString(ROOT.resolve("template.yaml"), StandardCharsets.UTF_8);
    String subnets = "      SubnetIds: !Ref SubnetIds\n";
    assertThat(template).as("the Globals VpcConfig").containsOnlyOnce(subnets);
    Path changed = dir.resolve("template.yaml");
    // the functions move to the first subnet of the list only
    Files.writeString(
        changed,
        template.replace(subnets, "      SubnetIds: [!Select [0, !Ref SubnetIds]]\n"),
        StandardCharsets.UTF_8);

    Map<String, String> before = versions(ROOT.resolve("template.yaml"));
    Map<String, String> after = versions(changed);

    assertThat(after).hasSize(6).containsOnlyKeys(before.keySet());
    after.forEach(
        (function, version) ->
            assertThat(version).as("version of %s", function).isNotEqualTo(before.get(function)));
  }

  @Test
  void aNewSubnetIdsValueAloneStillPublishesNoVersion() throws Exception {
    // The hash covers the template as written, each !Ref unresolved: new subnets passed as the
    // parameter reach $LATEST but not the live alias until OTC_CONFIG_REVISION changes
    // (docs/operations/onboarding.md).
    Map<String, String> before =
        versions(ROOT.resolve("template.yaml"), "SubnetIds=subnet-a,subnet-b");
    Map<String, String> after =
        versions(ROOT.resolve("template.yaml"), "SubnetIds=subnet-a,subnet-c");

    assertThat(after).hasSize(6).isEqualTo(before);
  }

  private static String sweepTimeout(String template) {
    int sweep = template.indexOf("  TimeoutSweepFunction:\n");
    assertThat(sweep).as("TimeoutSweepFunction in template.yaml").isPositive();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\n      Timeout: (\\d+)\n").matcher(template);
    assertThat(m.find(sweep)).as("the sweep's Timeout").isTrue();
    return m.group(1);
  }

  /**
   * Translations already made in this JVM, by template text and parameters: five tests translate
   * the template as it is, and one translation is a python process of about a second.
   */
  private static final Map<String, Map<String, String>> TRANSLATED = new ConcurrentHashMap<>();

  /** Whether python3 with aws-sam-translator is here; null until first asked. */
  private static Boolean translatorChecked;

  /** Function logical id -> the logical id of the version its live alias points at. */
  private static Map<String, String> versions(Path template, String... parameters)
      throws Exception {
    Path python = TemplateProductionTest.onPath("python3");
    assumeTrue(python != null, "python3 is not on the PATH: SAM translation skipped");
    assumeTrue(
        translatorInstalled(python),
        "aws-sam-translator is not installed (pip install cfn-lint brings it): skipped");
    String key =
        Files.readString(template, StandardCharsets.UTF_8) + "\0" + String.join("\0", parameters);
    Map<String, String> known = TRANSLATED.get(key);
    if (known == null) {
      known = translate(python, template, parameters);
      TRANSLATED.put(key, known);
    }
    return new TreeMap<>(known);
  }

  private static synchronized boolean translatorInstalled(Path python) throws Exception {
    if (translatorChecked == null) {
      translatorChecked =
          TemplateProductionTest.run(ROOT, python.toString(), "-c", "import samtranslator").code()
              == 0;
    }
    return translatorChecked;
  }

  private static Map<String, String> translate(Path python, Path template, String... parameters)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(python.toString());
    command.add(TemplateProductionTest.tool("sam_translate.py").toString());
    command.add(template.toString());
    command.addAll(List.of(parameters));
    TemplateProductionTest.Result out =
        TemplateProductionTest.run(ROOT, false, command.toArray(String[]::new));
    assertThat(out.code()).as("sam_translate.py failed; run it by hand to see why").isZero();
    Map<String, String> versions = new TreeMap<>();
    JSON.readTree(out.output())
        .path("Resources")
        .fields()
        .forEachRemaining(
            e -> {
              JsonNode p = e.getValue().path("Properties");
              if (e.getValue().path("Type").asText().equals("AWS::Lambda::Alias")) {
                versions.put(
                    p.at("/FunctionName/Ref").asText(),
                    p.at("/FunctionVersion/Fn::GetAtt/0").asText());
              }
            });
    return versions;
  }
}
