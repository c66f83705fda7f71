package io.ordertimeout.api;

/**
 * A request the API refuses, with its HTTP status and a stable machine-readable code. Thrown before
 * anything is written, or from inside a transaction that is then rolled back, so a refused request
 * changes nothing.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final String code;

  public ApiError(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  public static ApiError badRequest(String code, String message) {
    return new ApiError(400, code, message);
  }

  public static ApiError conflict(String code, String message) {
    return new ApiError(409, code, message);
  }

  public static ApiError notFound(String message) {
    return new ApiError(404, "NOT_FOUND", message);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
