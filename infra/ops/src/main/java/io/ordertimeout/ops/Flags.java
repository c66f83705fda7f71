package io.ordertimeout.ops;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --name value} pairs, the words after a command that takes flags only ({@code ./ops smoke},
 * {@code ./ops preflight}, {@code ./local up}).
 */
public record Flags(Map<String, String> values) {
  public Flags {
    values = Map.copyOf(values);
  }

  /** Refuses a word that is not a flag and a flag without its value. */
  public static Flags parse(List<String> args) {
    Map<String, String> values = new LinkedHashMap<>();
    List<String> rest = new ArrayList<>(args);
    while (!rest.isEmpty()) {
      String name = rest.remove(0);
      if (!name.startsWith("--") || rest.isEmpty()) {
        throw new IllegalArgumentException("expected --flag value, got '" + name + "'");
      }
      values.put(name.substring(2), rest.remove(0));
    }
    return new Flags(values);
  }

  public String value(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  public int intValue(String name, int fallback) {
    String v = values.get(name);
    try {
      return v == null ? fallback : Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be a whole number, was '" + v + "'");
    }
  }
}
