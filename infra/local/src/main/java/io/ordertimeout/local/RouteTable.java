package io.ordertimeout.local;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Matches a request to a template route the way API Gateway's HTTP API does: the most specific
 * route wins (a path without {@code {param}} segments before one with them), {@code {name}} matches
 * one segment and {@code {name+}} the rest of the path.
 */
final class RouteTable {

  /** A route whose function is served locally, or null when its handler is not loaded. */
  record Entry(SamTemplate.HttpRoute route, LocalFunction function, Pattern pattern) {}

  /** A route that matched, with the values of its path parameters. */
  record Match(Entry entry, Map<String, String> pathParameters) {}

  private static final Pattern PARAM = Pattern.compile("\\{([A-Za-z0-9_]+)(\\+?)}");

  private final List<Entry> entries;

  RouteTable(List<Entry> entries) {
    List<Entry> sorted = new ArrayList<>(entries);
    sorted.sort(Comparator.comparingInt((Entry e) -> params(e.route().path())));
    this.entries = List.copyOf(sorted);
  }

  static Entry entry(SamTemplate.HttpRoute route, LocalFunction function) {
    return new Entry(route, function, compile(route.path()));
  }

  List<Entry> entries() {
    return entries;
  }

  Optional<Match> match(String method, String path) {
    for (Entry e : entries) {
      if (!e.route().method().equals("ANY") && !e.route().method().equals(method)) {
        continue;
      }
      Matcher m = e.pattern().matcher(path);
      if (m.matches()) {
        return Optional.of(new Match(e, parameters(e.route().path(), m)));
      }
    }
    return Optional.empty();
  }

  private static Pattern compile(String path) {
    StringBuilder regex = new StringBuilder();
    Matcher m = PARAM.matcher(path);
    int last = 0;
    while (m.find()) {
      regex.append(Pattern.quote(path.substring(last, m.start())));
      regex.append(m.group(2).isEmpty() ? "([^/]+)" : "(.+)");
      last = m.end();
    }
    regex.append(Pattern.quote(path.substring(last)));
    return Pattern.compile(regex.toString());
  }

  private static Map<String, String> parameters(String path, Matcher values) {
    Map<String, String> params = new LinkedHashMap<>();
    Matcher names = PARAM.matcher(path);
    int group = 1;
    while (names.find()) {
      params.put(names.group(1), values.group(group++));
    }
    return params;
  }

  private static int params(String path) {
    return (int) PARAM.matcher(path).results().count();
  }
}
