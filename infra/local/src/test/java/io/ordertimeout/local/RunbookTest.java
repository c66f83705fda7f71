package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.ops.AdminCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The runbook (docs/operations/runbook.md) covers every alarm of template.yaml and of the
 * monitoring template it nests (metric and composite alarms), and every entry tells the on-call
 * engineer which {@code ./ops admin} operation to run: an alarm added without an entry, or an entry
 * naming an operation the command does not have, fails here.
 */
class RunbookTest {
  private static final Path ROOT = Main.templatePath().getParent();

  /** A runbook entry: a level-4 heading naming one or more alarms in backticks, up to the next. */
  private static final Pattern ENTRY = Pattern.compile("(?m)^#### (.+)$");

  private static final Pattern NAME = Pattern.compile("`([A-Za-z0-9]+)`");
  private static final Pattern OPERATION = Pattern.compile("\\./ops admin ([a-z-]+)");

  @Test
  void everyAlarmHasAnEntryAndEveryEntryNamesAnExistingOperation() throws IOException {
    Set<String> alarms = alarms();
    Map<String, String> entries = runbook();

    assertThat(alarms).as("alarms of template.yaml and its applications").hasSizeGreaterThan(20);
    assertThat(entries.keySet()).as("alarms with a runbook entry").containsAll(alarms);
    assertThat(alarms)
        .as("runbook entries of alarms the templates lack")
        .containsAll(entries.keySet());
    entries.forEach(
        (alarm, body) -> {
          List<String> named = operations(body);
          assertThat(named).as("./ops admin operations in the entry of %s", alarm).isNotEmpty();
          assertThat(AdminCommand.operations())
              .as("operations the entry of %s names", alarm)
              .containsAll(named);
          assertThat(body).as("entry of %s", alarm).contains("- Means:", "- Look:", "- Recover:");
        });
  }

  @Test
  void anEntryWithoutAnOperationOrAnAlarmWithoutAnEntryIsFound() {
    String readme =
        "intro\n# Runbook\n#### `AAlarm`\n- Means: x\n- Look: logs\n- Recover: wait\n"
            + "#### `BAlarm`\n- Means: x\n- Look: `./ops admin story <id>`\n- Recover: y\n"
            + "# Next\n#### `NotARunbookEntry`\n";
    Map<String, String> entries = entries(readme);

    assertThat(entries.keySet()).containsExactly("AAlarm", "BAlarm");
    assertThat(operations(entries.get("AAlarm"))).isEmpty();
    assertThat(operations(entries.get("BAlarm"))).containsExactly("story");
  }

  /**
   * A composite alarm pages once for an incident: its entry is the entry of every member (the
   * heading names them all), so the page and the alarms a graph shows in red lead to the same
   * steps, and a member without actions of its own is never without one.
   */
  @Test
  void aCompositeAlarmSharesItsEntryWithItsMembers() throws IOException {
    TemplateAlarms alarms = TemplateAlarms.read(ROOT.resolve("template.yaml"));
    Map<String, String> entries = runbook();
    assertThat(alarms.composites()).as("composite alarms").isNotEmpty();
    alarms
        .members()
        .forEach(
            (composite, members) -> {
              assertThat(members).as("members of %s", composite).hasSizeGreaterThan(1);
              for (String member : members) {
                assertThat(entries.get(member))
                    .as("entry of %s, member of %s", member, composite)
                    .isNotNull()
                    .isEqualTo(entries.get(composite));
                assertThat(alarms.all().get(member).has("AlarmActions"))
                    .as("%s pages through %s, not by itself", member, composite)
                    .isFalse();
              }
            });
  }

  /** Every alarm and composite alarm of template.yaml and of its nested applications. */
  private static Set<String> alarms() {
    return new TreeSet<>(TemplateAlarms.read(ROOT.resolve("template.yaml")).all().keySet());
  }

  private static Map<String, String> runbook() throws IOException {
    return entries(Files.readString(ROOT.resolve("docs/operations/runbook.md")));
  }

  /** Alarm -> its entry's text, from the runbook (docs/operations/runbook.md, "# Runbook"). */
  static Map<String, String> entries(String runbook) {
    int start = runbook.startsWith("# Runbook\n") ? 0 : runbook.indexOf("\n# Runbook\n");
    assertThat(start).as("the runbook starts with '# Runbook'").isNotNegative();
    int end = runbook.indexOf("\n# ", start + 1);
    String section = runbook.substring(start, end < 0 ? runbook.length() : end + 1);
    Map<String, String> entries = new LinkedHashMap<>();
    Matcher heading = ENTRY.matcher(section);
    List<int[]> bounds = new java.util.ArrayList<>();
    List<String> titles = new java.util.ArrayList<>();
    while (heading.find()) {
      bounds.add(new int[] {heading.start(), heading.end()});
      titles.add(heading.group(1));
    }
    for (int i = 0; i < titles.size(); i++) {
      int to = i + 1 < bounds.size() ? bounds.get(i + 1)[0] : section.length();
      String body = section.substring(bounds.get(i)[1], to);
      Matcher name = NAME.matcher(titles.get(i));
      while (name.find()) {
        entries.put(name.group(1), body);
      }
    }
    return entries;
  }

  private static List<String> operations(String body) {
    List<String> ops = new java.util.ArrayList<>();
    Matcher m = OPERATION.matcher(body.replaceAll("\\s+", " "));
    while (m.find()) {
      ops.add(m.group(1));
    }
    return ops;
  }
}
