package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code ./local}'s dispatch: the operator's commands are {@code ./ops}'s now, and {@code ./local}
 * says so in one line without starting anything; usage lists what it still runs.
 */
class MainTest {

  private record Run(int exit, String out) {}

  @Test
  void adminSmokeAndPreflightPointToOpsWithTheSameWordsAndExitTwo() throws Exception {
    Run admin = run("admin", "story", "o-1", "--tenant", "shop-a");
    Run smoke = run("smoke", "--api", "https://x.execute-api.ap-east-1.amazonaws.com");
    Run preflight = run("preflight");

    assertThat(admin)
        .isEqualTo(
            new Run(
                2,
                "./local admin is now ./ops admin: run ./ops admin story o-1 --tenant shop-a\n"));
    assertThat(smoke)
        .isEqualTo(
            new Run(
                2,
                "./local smoke is now ./ops smoke: run ./ops smoke --api"
                    + " https://x.execute-api.ap-east-1.amazonaws.com\n"));
    assertThat(preflight)
        .isEqualTo(new Run(2, "./local preflight is now ./ops preflight: run ./ops preflight\n"));
  }

  @Test
  void usageListsTheLocalCommandsAndNamesOpsForTheOthers() throws Exception {
    Run none = run();
    Run unknown = run("explode");

    assertThat(none.exit()).isEqualTo(2);
    assertThat(unknown).isEqualTo(none);
    assertThat(none.out())
        .startsWith("usage: ./local <command> [flags]\n")
        .contains("  up    ", "  demo  ", "  wechat <operation>", "  tenant add <tenantId>")
        .contains("commands: up, demo, wechat, tenant\n")
        .endsWith("admin, smoke and preflight operate a stack: ./ops (usage: ./ops help)\n")
        .doesNotContain("  admin ", "  smoke ", "  preflight ");
  }

  private static Run run(String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = Main.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8));
    return new Run(exit, out.toString(StandardCharsets.UTF_8));
  }
}
