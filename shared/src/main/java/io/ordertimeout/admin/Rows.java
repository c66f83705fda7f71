package io.ordertimeout.admin;

import io.ordertimeout.mysql.DbTime;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Column readers for the admin views: instants as ISO-8601 UTC strings, null kept null. */
final class Rows {
  private Rows() {}

  static String instant(ResultSet rs, String column) throws SQLException {
    Instant at = DbTime.instant(rs, column);
    return at == null ? null : at.toString();
  }

  static String iso(long epochMillis) {
    return Instant.ofEpochMilli(epochMillis).toString();
  }

  /**
   * Every row of {@code sql} (one string argument) with every column by its name: the story shows
   * rows as stored, so a column added by a later migration appears without a change here.
   */
  static List<Map<String, Object>> all(Connection c, String sql, String... args)
      throws SQLException {
    List<Map<String, Object>> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        ResultSetMetaData meta = rs.getMetaData();
        while (rs.next()) {
          Map<String, Object> row = new LinkedHashMap<>();
          for (int i = 1; i <= meta.getColumnCount(); i++) {
            String name = meta.getColumnLabel(i);
            int type = meta.getColumnType(i);
            row.put(
                name,
                type == Types.TIMESTAMP || type == Types.DATE
                    ? instant(rs, name)
                    : rs.getObject(i));
          }
          rows.add(row);
        }
      }
    }
    return rows;
  }
}
