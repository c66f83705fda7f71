package io.ordertimeout.aws;

/**
 * A secret could not be read or has the wrong shape. The message names the secret and the missing
 * field, never a value.
 */
public final class SecretUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public SecretUnavailableException(String message) {
    super(message);
  }

  public SecretUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
