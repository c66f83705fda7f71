package io.ordertimeout.admin;

/**
 * An operator's request refused before anything changed (or inside a transaction then rolled back),
 * with a kind the HTTP layer maps to a status and a stable code the CLI prints.
 */
public final class AdminRefusal extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What went wrong, in HTTP terms: 400, 403, 404, 409, 503. */
  public enum Kind {
    BAD_REQUEST,
    FORBIDDEN,
    NOT_FOUND,
    CONFLICT,
    UNAVAILABLE
  }

  private final Kind kind;
  private final String code;

  public AdminRefusal(Kind kind, String code, String message) {
    super(message, null, false, false);
    this.kind = kind;
    this.code = code;
  }

  public static AdminRefusal badRequest(String code, String message) {
    return new AdminRefusal(Kind.BAD_REQUEST, code, message);
  }

  public static AdminRefusal forbidden(String code, String message) {
    return new AdminRefusal(Kind.FORBIDDEN, code, message);
  }

  public static AdminRefusal notFound(String message) {
    return new AdminRefusal(Kind.NOT_FOUND, "NOT_FOUND", message);
  }

  public static AdminRefusal conflict(String code, String message) {
    return new AdminRefusal(Kind.CONFLICT, code, message);
  }

  public Kind kind() {
    return kind;
  }

  public String code() {
    return code;
  }
}
