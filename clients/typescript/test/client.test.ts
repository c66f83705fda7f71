// The wrapper's own behaviour against a local HTTP server that records what arrives: the SigV4
// header's form and what it signs, the tenant header, and the bounds of the retries.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { ApiError, NetworkError, OrderTimeoutClient } from "../src/index.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const seen: Seen[] = [];
let answer: (s: Seen) => { status: number; body: string } | "drop" = () => ({ status: 200, body: "{}" });
let server: Server;
let baseUrl: string;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s: Seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(s);
      const a = answer(s);
      if (a === "drop") {
        req.socket.destroy();
        return;
      }
      res.writeHead(a.status, { "content-type": "application/json" }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => server.close());

function client(tenantId?: string): OrderTimeoutClient {
  return new OrderTimeoutClient({
    baseUrl,
    region: "ap-east-1",
    tenantId,
    credentials: { accessKeyId: "AKIDCLIENTTEST000000", secretAccessKey: "client-test-secret" },
    retryDelayMs: 1,
  });
}

const order = {
  orderId: "tsunit000001",
  userId: "user-0001",
  items: [{ skuId: "sku-0001", quantity: 1 }],
  amountFen: 100,
};

test("every request carries a SigV4 Authorization for execute-api that signs the tenant header", async () => {
  seen.length = 0;
  answer = () => ({ status: 404, body: '{"error":{"code":"NOT_FOUND","message":"no order"}}' });
  await assert.rejects(client("shop-a").getOrder("tsunit000001"), ApiError);
  assert.equal(seen.length, 1);
  const h = seen[0]!.headers;
  assert.equal(h["x-tenant-id"], "shop-a");
  assert.match(h["x-amz-date"] as string, /^\d{8}T\d{6}Z$/);
  assert.match(
    h.authorization as string,
    /^AWS4-HMAC-SHA256 Credential=AKIDCLIENTTEST000000\/\d{8}\/ap-east-1\/execute-api\/aws4_request, SignedHeaders=[a-z0-9;-]*host;[a-z0-9;-]*x-tenant-id[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
  );
});

test("a client without a tenant sends no X-Tenant-Id", async () => {
  seen.length = 0;
  answer = () => ({ status: 404, body: '{"error":{"code":"NOT_FOUND","message":"no order"}}' });
  await assert.rejects(client().getOrder("tsunit000001"), ApiError);
  assert.equal(seen[0]!.headers["x-tenant-id"], undefined);
});

test("a 5xx is retried with the same body up to maxAttempts, then thrown with its code", async () => {
  seen.length = 0;
  answer = () => ({ status: 503, body: '{"error":{"code":"UNAVAILABLE","message":"db down"}}' });
  const e = await client().placeOrder(order).then(
    () => assert.fail("no error"),
    (err: unknown) => err,
  );
  assert.ok(e instanceof ApiError);
  assert.equal(e.status, 503);
  assert.equal(e.code, "UNAVAILABLE");
  assert.equal(e.attempts, 3);
  assert.equal(seen.length, 3);
  assert.deepEqual(new Set(seen.map((s) => s.body)), new Set([JSON.stringify(order)]));
});

test("a 4xx is answered at once, never retried", async () => {
  seen.length = 0;
  answer = () => ({ status: 409, body: '{"error":{"code":"OUT_OF_STOCK","message":"sku-0001"}}' });
  await assert.rejects(client().placeOrder(order), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, "OUT_OF_STOCK");
    assert.equal(e.attempts, 1);
    return true;
  });
  assert.equal(seen.length, 1);
});

test("a dropped connection is retried and then succeeds", async () => {
  seen.length = 0;
  answer = (s) =>
    seen.indexOf(s) === 0
      ? "drop"
      : { status: 200, body: JSON.stringify({ ...order, status: "UNPAID" }) };
  const placed = await client().placeOrder(order);
  assert.equal(placed.created, false);
  assert.equal(placed.attempts, 2);
  assert.equal(seen.length, 2);
  assert.equal(seen[0]!.body, seen[1]!.body);
});

test("no answer in any attempt is a NetworkError naming the attempts", async () => {
  seen.length = 0;
  answer = () => "drop";
  await assert.rejects(client().getOrder("tsunit000001"), (e: unknown) => {
    assert.ok(e instanceof NetworkError);
    assert.equal(e.attempts, 3);
    return true;
  });
});

test("a gateway's own 5xx without an error code is HTTP_<status>", async () => {
  seen.length = 0;
  answer = () => ({ status: 502, body: '{"message":"Internal Server Error"}' });
  await assert.rejects(client().getOrder("tsunit000001"), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, "HTTP_502");
    return true;
  });
});

test("PAYMENTS_DISABLED is final: no retry", async () => {
  seen.length = 0;
  answer = () => ({ status: 503, body: '{"error":{"code":"PAYMENTS_DISABLED","message":"no merchant"}}' });
  await assert.rejects(client().prepay("tsunit000001", { openId: "o1" }), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, "PAYMENTS_DISABLED");
    return true;
  });
  assert.equal(seen.length, 1);
});
