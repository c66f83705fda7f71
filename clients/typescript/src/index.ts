/**
 * A typed client for the order-timeout HTTP API (docs/reference/openapi.yaml): every request
 * SigV4-signed for API Gateway (service `execute-api`), the tenant set once per client, and the
 * order routes a mall backend calls wrapped with their retry semantics.
 *
 * The types come from the generated `./generated/api.ts` (`npm run generate`); `raw` is the
 * openapi-fetch client over every route of the document, signed the same way.
 */
import { Sha256 } from "@aws-crypto/sha256-js";
import { fromNodeProviderChain } from "@aws-sdk/credential-providers";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@smithy/types";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

export type { components, paths } from "./generated/api.js";

type Schemas = components["schemas"];
export type Order = Schemas["Order"];
export type OrderStatus = Schemas["OrderStatus"];
export type PlaceOrderRequest = Schemas["PlaceOrderRequest"];
export type PrepayRequest = Schemas["PrepayRequest"];
export type Prepay = Schemas["Prepay"];
export type OrderEvent = Schemas["Timeline"]["events"][number];

/** What the mini-program passes to `wx.requestPayment` (with its own success and fail callbacks). */
export interface RequestPaymentParams {
  timeStamp: string;
  nonceStr: string;
  package: string;
  signType: "RSA";
  paySign: string;
}

export interface ClientOptions {
  /** The API's base URL, e.g. `https://abc123.execute-api.ap-east-1.amazonaws.com`. */
  baseUrl: string;
  /** The API's region, the SigV4 scope's. */
  region: string;
  /**
   * Sent as `X-Tenant-Id` on every request; absent: the caller's one tenant (a caller mapped to
   * several must name one, see docs/reference/http-api.md, Tenancy on the API).
   */
  tenantId?: string;
  /** Static keys or a provider; absent: the AWS SDK's default chain (env, profile, SSO, IMDS, ...). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Attempts per call, the first included, on a 5xx or a network failure (default 3). */
  maxAttempts?: number;
  /** The wait before the second attempt, doubled before each further one (default 200 ms). */
  retryDelayMs?: number;
  /** One attempt's time limit: an attempt that takes longer is aborted and retried (default 10 s). */
  attemptTimeoutMs?: number;
  /** The fetch to send with (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
}

/** A refusal or failure the API answered: its HTTP status and the body's `error.code`. */
export class ApiError extends Error {
  readonly status: number;
  /** The API's error code (`OUT_OF_STOCK`, `NOT_FOUND`, ...); `HTTP_<status>` for a body without one (a gateway's own answer). */
  readonly code: string;
  /** `ILLEGAL_TRANSITION` only: the order's current state. */
  readonly orderStatus: OrderStatus | undefined;
  /** The answer's body as parsed (or its text). */
  readonly body: unknown;
  /** Attempts made, the first included. */
  readonly attempts: number;

  constructor(status: number, body: unknown, attempts: number) {
    const error = errorOf(body);
    const code = error?.code ?? `HTTP_${status}`;
    super(`${status} ${code}: ${error?.message ?? JSON.stringify(body)}`);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.orderStatus = error?.status;
    this.body = body;
    this.attempts = attempts;
  }
}

/** A call that got no answer from the API in any of its attempts (network failures, timeouts). */
export class NetworkError extends Error {
  readonly attempts: number;

  constructor(message: string, cause: unknown, attempts: number) {
    super(message, { cause });
    this.name = "NetworkError";
    this.attempts = attempts;
  }
}

/** A placed order: `created` false when the API answered 200, the order this id already was. */
export interface Placed {
  order: Order;
  created: boolean;
  attempts: number;
}

export interface Prepaid {
  orderId: string;
  prepayId: string;
  appId: string;
  /** Hand these to `wx.requestPayment` in the mini-program. */
  requestPayment: RequestPaymentParams;
}

/** A cancel: `recorded` true for 202 (the close follows), false for 200 (the order was CLOSED). */
export interface Cancelled {
  order: Order;
  recorded: boolean;
}

/** Codes of a 5xx that a retry cannot change: answered at once. */
const FINAL_5XX = new Set(["PAYMENTS_DISABLED", "WECHAT_REJECTED"]);

type Answer<T> = { data?: T; error?: unknown; response: Response };

export class OrderTimeoutClient {
  /** The openapi-fetch client over every route of the document, signed, with the tenant header. */
  readonly raw: Client<paths>;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly attemptTimeoutMs: number;

  constructor(options: ClientOptions) {
    this.maxAttempts = positive("maxAttempts", options.maxAttempts ?? 3);
    this.retryDelayMs = nonNegative("retryDelayMs", options.retryDelayMs ?? 200);
    this.attemptTimeoutMs = positive("attemptTimeoutMs", options.attemptTimeoutMs ?? 10_000);
    const signer = new SignatureV4({
      service: "execute-api",
      region: options.region,
      credentials: options.credentials ?? fromNodeProviderChain(),
      sha256: Sha256,
    });
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: options.tenantId === undefined ? {} : { "X-Tenant-Id": options.tenantId },
      fetch: signingFetch(signer, options.fetch ?? globalThis.fetch),
    });
  }

  /**
   * `POST /orders`. The order id is the idempotency key: the same id with the same content again
   * answers 200 and the existing order, reserving nothing more, so a 5xx, a lost answer or a timeout
   * is retried with the very same body (bounded: `maxAttempts`). A retry whose first attempt did
   * commit comes back as `created: false`. The same id with other content is 409 `ORDER_CONFLICT`.
   */
  async placeOrder(request: PlaceOrderRequest): Promise<Placed> {
    const body = structuredClone(request);
    const { data, status, attempts } = await this.call((signal) =>
      this.raw.POST("/orders", { body, signal }),
    );
    return { order: data, created: status === 201, attempts };
  }

  /** `GET /orders/{id}`: 404 `NOT_FOUND` for an order the tenant does not have. */
  async getOrder(orderId: string): Promise<Order> {
    const { data } = await this.call((signal) =>
      this.raw.GET("/orders/{id}", { params: { path: { id: orderId } }, signal }),
    );
    return data;
  }

  /**
   * `POST /orders/{id}/prepay`: a WeChat Pay JSAPI prepay whose `time_expire` is the order's
   * deadline. A second prepay of the order answers fresh parameters for the same prepay id, so it is
   * retried like the others.
   */
  async prepay(orderId: string, request: PrepayRequest): Promise<Prepaid> {
    const { data } = await this.call((signal) =>
      this.raw.POST("/orders/{id}/prepay", {
        params: { path: { id: orderId } },
        body: request,
        signal,
      }),
    );
    return {
      orderId: data.orderId,
      prepayId: data.prepayId,
      appId: data.appId,
      requestPayment: {
        timeStamp: data.timeStamp,
        nonceStr: data.nonceStr,
        package: data.package,
        signType: data.signType,
        paySign: data.paySign,
      },
    };
  }

  /**
   * `POST /orders/{id}/cancel`: 202 records the cancel (a repeat records nothing more), 200 when the
   * order is already CLOSED, 409 `ORDER_PAID` for a paid one.
   */
  async cancel(orderId: string): Promise<Cancelled> {
    const { data, status } = await this.call((signal) =>
      this.raw.POST("/orders/{id}/cancel", { params: { path: { id: orderId } }, signal }),
    );
    return { order: data, recorded: status === 202 };
  }

  /** `GET /orders/{id}/events`: the order's events from the outbox, oldest first. */
  async events(orderId: string): Promise<OrderEvent[]> {
    const { data } = await this.call((signal) =>
      this.raw.GET("/orders/{id}/events", { params: { path: { id: orderId } }, signal }),
    );
    return data.events;
  }

  /**
   * One call with its retries: on a network failure, a timed-out attempt or a 5xx whose code a retry
   * can change, after `retryDelayMs`, doubling; a 4xx, or the last attempt's answer, is final.
   */
  private async call<T>(
    send: (signal: AbortSignal) => Promise<Answer<T>>,
  ): Promise<{ data: T; status: number; attempts: number }> {
    for (let attempt = 1; ; attempt++) {
      let answer: Answer<T>;
      try {
        answer = await send(AbortSignal.timeout(this.attemptTimeoutMs));
      } catch (e) {
        if (attempt >= this.maxAttempts) {
          throw new NetworkError(
            `no answer after ${attempt} attempt(s): ${e instanceof Error ? e.message : String(e)}`,
            e,
            attempt,
          );
        }
        await sleep(this.retryDelayMs * 2 ** (attempt - 1));
        continue;
      }
      const status = answer.response.status;
      if (answer.response.ok && answer.data !== undefined) {
        return { data: answer.data, status, attempts: attempt };
      }
      const failure = new ApiError(status, answer.error ?? answer.data, attempt);
      if (status < 500 || FINAL_5XX.has(failure.code) || attempt >= this.maxAttempts) {
        throw failure;
      }
      await sleep(this.retryDelayMs * 2 ** (attempt - 1));
    }
  }
}

/**
 * A fetch that signs each request with SigV4 over its method, URL, headers and body; the Host it
 * signs is the URL's, which fetch sends.
 */
function signingFetch(
  signer: SignatureV4,
  send: typeof globalThis.fetch,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const body = request.body === null ? undefined : await request.text();
    const headers: Record<string, string> = { host: url.host };
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const query: Record<string, string | string[]> = {};
    url.searchParams.forEach((value, name) => {
      const seen = query[name];
      query[name] = seen === undefined ? value : ([] as string[]).concat(seen, value);
    });
    const signed = await signer.sign({
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port === "" ? undefined : Number(url.port),
      path: url.pathname,
      query,
      headers,
      body,
    });
    const { host: _host, ...sent } = signed.headers;
    return send(url, {
      method: request.method,
      headers: sent,
      body,
      signal: request.signal,
    });
  };
}

function errorOf(
  body: unknown,
): { code?: string; message?: string; status?: OrderStatus } | undefined {
  if (typeof body === "object" && body !== null && "error" in body) {
    const error = (body as { error: unknown }).error;
    if (typeof error === "object" && error !== null) {
      return error as { code?: string; message?: string; status?: OrderStatus };
    }
  }
  return undefined;
}

function positive(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${n}`);
  }
  return n;
}

function nonNegative(name: string, n: number): number {
  if (!Number.isFinite(n) || n < 0) {
    throw new RangeError(`${name} must be 0 or more, got ${n}`);
  }
  return n;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
