package io.ordertimeout.embedded;

/**
 * Builds schema URLs from a server URL such as {@code jdbc:mysql://host:3306/} or {@code
 * jdbc:mysql://host?x=y}.
 */
final class JdbcUrls {

  private JdbcUrls() {}

  /**
   * Puts {@code schema} in the path and appends {@code parameters} after any the server URL already
   * has.
   */
  static String forSchema(String serverUrl, String schema, String parameters) {
    int query = serverUrl.indexOf('?');
    String base = query < 0 ? serverUrl : serverUrl.substring(0, query);
    String existing = query < 0 ? "" : serverUrl.substring(query + 1);
    int hostStart = base.indexOf("//") + 2;
    int pathStart = base.indexOf('/', hostStart);
    String hosts = pathStart < 0 ? base : base.substring(0, pathStart);
    String allParameters = existing.isEmpty() ? parameters : existing + "&" + parameters;
    return hosts + "/" + schema + "?" + allParameters;
  }
}
