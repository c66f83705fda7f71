package io.ordertimeout.ops;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The words after a command ({@code ./ops admin}, {@code ./local wechat}, {@code ./local tenant}):
 * the operation, its positional arguments and its flags. Each command names its own switches and
 * value flags and turns a refusal into its own usage error.
 */
public record CommandWords(String op, List<String> positionals, Map<String, String> flags) {
  /** Refused words: an unknown flag, or a value flag without its value. */
  public static final class Refused extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message);
    }
  }

  /** Bad usage of a command: it prints the message and exits 2. */
  public static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
      super(message);
    }
  }

  /** The API or simulator refused, or could not be reached: the command exits 1. */
  public static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Failure(String message) {
      super(message);
    }
  }

  public static CommandWords parse(
      List<String> args, Set<String> switches, Set<String> valueFlags) {
    List<String> positionals = new ArrayList<>();
    Map<String, String> flags = new LinkedHashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String word = args.get(i);
      String name = word.startsWith("--") ? word.substring(2) : null;
      if (name == null) {
        positionals.add(word);
      } else if (switches.contains(name)) {
        flags.put(name, "true");
      } else if (valueFlags.contains(name) && i + 1 < args.size()) {
        flags.put(name, args.get(++i));
      } else {
        throw new Refused(
            valueFlags.contains(name) ? word + " needs a value" : "unknown flag " + word);
      }
    }
    String op = positionals.isEmpty() ? null : positionals.remove(0);
    return new CommandWords(op, List.copyOf(positionals), Map.copyOf(flags));
  }
}
