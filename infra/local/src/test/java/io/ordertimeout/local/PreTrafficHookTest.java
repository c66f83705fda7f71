package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pre-traffic hook is its own file, infra/hooks/pre-traffic/index.py, which template.yaml's
 * PreTrafficHook ships (Code, built by the Makefile), and its unit tests beside it (test_index.py:
 * stubbed CodeDeploy and Lambda clients, the Succeeded or Failed it reports) pass. They need
 * python3 with boto3 (cfn-lint's translator brings it) and are skipped without them.
 */
class PreTrafficHookTest {
  private static final Path ROOT = Main.templatePath().getParent();

  @Test
  void theHooksUnitTestsPass() throws Exception {
    Path python = TemplateProductionTest.onPath("python3");
    assumeTrue(python != null, "python3 is not on the PATH: the hook's unit tests skipped");
    assumeTrue(
        TemplateProductionTest.run(ROOT, python.toString(), "-c", "import boto3").code() == 0,
        "boto3 is not installed (pip install boto3): the hook's unit tests skipped");
    Path dir = hookDir();
    TemplateProductionTest.Result tests =
        TemplateProductionTest.run(
            ROOT,
            python.toString(),
            "-m",
            "unittest",
            "discover",
            "-s",
            dir.toString(),
            "-t",
            dir.toString(),
            "-p",
            "test_*.py",
            "-v");
    assertThat(tests.code()).as("python3 -m unittest in %s:%n%s", dir, tests.output()).isZero();
    assertThat(tests.output())
        .as("the hook's unit tests ran")
        .containsPattern(Pattern.compile("Ran [1-9][0-9]* tests"))
        .contains("test_a_wrong_status_fails_the_deployment")
        .endsWith("OK");
  }

  @Test
  void theTemplateShipsTheHookFromItsFile() throws Exception {
    JsonNode hook = TemplateProductionTest.props("PreTrafficHook");
    assertThat(hook.path("Code").isTextual()).as("Code is a local path: %s", hook).isTrue();
    assertThat(hook.path("Handler").asText()).isEqualTo("index.handler");
    Path index = hookDir().resolve("index.py");
    assertThat(index).isRegularFile();
    assertThat(Files.readString(index)).contains("\ndef handler(event, context):");
    assertThat(TemplateProductionTest.hookCode()).isEqualTo(Files.readString(index));
  }

  @Test
  void theMakefileCopiesTheHookIntoItsArtifact(@TempDir Path artifacts) throws Exception {
    Path make = TemplateProductionTest.onPath("make");
    assumeTrue(make != null, "make is not on the PATH: dry run skipped");
    TemplateProductionTest.Result dry =
        TemplateProductionTest.run(
            artifacts,
            make.toString(),
            "-n",
            "--makefile",
            ROOT.resolve("Makefile").toString(),
            "build-PreTrafficHook",
            "ARTIFACTS_DIR=" + artifacts);
    assertThat(dry.code()).as(dry.output()).isZero();
    assertThat(dry.output())
        .contains("cp " + hookDir().resolve("index.py") + " " + artifacts + "/");
  }

  /** The directory PreTrafficHook's Code names. */
  static Path hookDir() {
    Path dir = ROOT.resolve(TemplateProductionTest.props("PreTrafficHook").path("Code").asText());
    assertThat(dir).as("PreTrafficHook's Code").isDirectory();
    return dir;
  }
}
