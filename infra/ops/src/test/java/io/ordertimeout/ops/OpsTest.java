package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code ./ops}'s dispatch: usage, the three commands, refused words. */
class OpsTest {

  private record Run(int exit, String out, String err) {}

  @Test
  void noArgumentsPrintsTheUsageAndExitsTwoAndHelpPrintsItAndExitsZero() {
    Run none = ops();
    Run help = ops("help");

    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err())
        .startsWith("usage: ./ops <command> ...\n  admin <operation> ...")
        .contains("\n  smoke --api <ApiUrl>", "\n  preflight --stack-params ")
        .endsWith("commands: admin, smoke, preflight\n");
    assertThat(help).isEqualTo(new Run(0, none.err(), ""));
    assertThat(ops("--help")).isEqualTo(help);
    assertThat(ops("smoke", "--help")).isEqualTo(help);
    assertThat(ops("preflight", "-h")).isEqualTo(help);
    assertThat(ops("admin", "--help")).isEqualTo(ops("admin", "help"));
  }

  @Test
  void anUnknownCommandOrAWordThatIsNoFlagIsAUsageError() {
    Run unknown = ops("up");
    Run word = ops("smoke", "https://api");
    Run number =
        ops("smoke", "--api", "https://a.execute-api.ap-east-1.amazonaws.com", "--wait", "soon");

    assertThat(unknown.exit()).isEqualTo(2);
    assertThat(unknown.err()).startsWith("./ops: unknown command 'up'\nusage: ./ops <command>");
    assertThat(word.exit()).isEqualTo(2);
    assertThat(word.err()).startsWith("./ops smoke: expected --flag value, got 'https://api'\n");
    assertThat(number.exit()).isEqualTo(2);
    assertThat(number.out())
        .isEqualTo("smoke: cannot start: --wait must be a whole number, was 'soon'\n");
  }

  @Test
  void preflightWithoutStackParametersPrintsItsUsageAndAdminHelpReachesAdmin() {
    Run preflight = ops("preflight");
    Run badParams = ops("preflight", "--stack-params", "nokey", "--region", "us-east-1");
    Run admin = ops("admin", "help");

    assertThat(preflight.exit()).isEqualTo(2);
    assertThat(preflight.out())
        .startsWith("usage: ./ops preflight --stack-params SubnetIds=subnet-a,subnet-b,");
    assertThat(badParams)
        .isEqualTo(new Run(2, "preflight: --stack-params: expected K=V, got 'nokey'\n", ""));
    assertThat(admin.exit()).isZero();
    assertThat(admin.out()).startsWith("usage: ./ops admin <operation>");
  }

  private static Run ops(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        Ops.run(
            List.of(args),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
