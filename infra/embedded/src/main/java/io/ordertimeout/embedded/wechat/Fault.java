package io.ordertimeout.embedded.wechat;

/** A failure the simulator can be told to answer with, the way WeChat Pay fails in production. */
public enum Fault {
  /** HTTP 500 {"code":"SYSTEM_ERROR"}: WeChat's "try again later". */
  SYSTEM_ERROR(500, "SYSTEM_ERROR", "系统错误"),
  /** HTTP 429 {"code":"FREQUENCY_LIMITED"}: the merchant exceeded its call rate. */
  FREQUENCY_LIMITED(429, "FREQUENCY_LIMITED", "频率超限"),
  /** No answer until the simulator's hang time passes, so the client's read timeout fires first. */
  HANG(0, "", "");

  final int status;
  final String code;
  final String message;

  Fault(int status, String code, String message) {
    this.status = status;
    this.code = code;
    this.message = message;
  }
}
