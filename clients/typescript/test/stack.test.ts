// The client against a running stack (./local up, or a deployed API): ORDER_TIMEOUT_API_URL is its base URL,
// ORDER_TIMEOUT_API_REGION (or AWS_REGION) its region, and the credentials come from the AWS SDK's default
// chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, ...). ORDER_TIMEOUT_TENANT_ID names the
// tenant (none: the caller's one tenant), ORDER_TIMEOUT_TEST_SKU a SKU with stock (default sku-0001, which
// the local stack seeds), ORDER_TIMEOUT_TEST_RUN the prefix of the order ids (default: random). Without
// ORDER_TIMEOUT_API_URL these tests are skipped.
import assert from "node:assert/strict";
import { createServer, request as forward, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { ApiError, OrderTimeoutClient, type Order, type PlaceOrderRequest } from "../src/index.js";

const api = process.env.ORDER_TIMEOUT_API_URL;
const region = process.env.ORDER_TIMEOUT_API_REGION ?? process.env.AWS_REGION ?? "ap-east-1";
const tenantId = process.env.ORDER_TIMEOUT_TENANT_ID;
const sku = process.env.ORDER_TIMEOUT_TEST_SKU ?? "sku-0001";
const run = process.env.ORDER_TIMEOUT_TEST_RUN ?? `ts${Date.now().toString(36)}`;

function client(baseUrl: string): OrderTimeoutClient {
  return new OrderTimeoutClient({ baseUrl, region, tenantId, retryDelayMs: 50 });
}

function order(suffix: string): PlaceOrderRequest {
  return {
    orderId: `${run}${suffix}`,
    userId: "user-ts",
    items: [{ skuId: sku, quantity: 2 }],
    amountFen: 1280,
    timeoutSeconds: 600,
  };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) {
      assert.fail(`${what}: not within 30 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function refusal(call: Promise<unknown>): Promise<ApiError> {
  return call.then(
    () => assert.fail("the call was not refused"),
    (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      return e;
    },
  );
}

describe("against the stack at ORDER_TIMEOUT_API_URL", { skip: api === undefined && "ORDER_TIMEOUT_API_URL is not set" }, () => {
  const otc = client(api ?? "http://unset");

  test("placing again with the same order id answers the same order and reserves nothing more", async () => {
    const placed = await otc.placeOrder(order("same"));
    assert.equal(placed.created, true);
    assert.equal(placed.attempts, 1);
    assert.equal(placed.order.status, "UNPAID");
    assert.deepEqual(placed.order.items, [{ skuId: sku, quantity: 2 }]);

    const again = await otc.placeOrder(order("same"));
    assert.equal(again.created, false);
    assert.deepEqual(again.order, placed.order);

    const types = (await otc.events(placed.order.orderId)).map((e) => e.type);
    assert.deepEqual(types, ["created"]);
  });

  test("the same order id with other content is 409 ORDER_CONFLICT", async () => {
    await otc.placeOrder(order("conf"));
    const e = await refusal(otc.placeOrder({ ...order("conf"), amountFen: 999 }));
    assert.equal(e.status, 409);
    assert.equal(e.code, "ORDER_CONFLICT");
    assert.equal(e.attempts, 1);
  });

  describe("behind an edge that loses the first answer to POST /orders", () => {
    let edge: Server;
    let lost = 0;
    before(async () => {
      const target = new URL(api ?? "http://unset");
      edge = createServer((req, res) => {
        const upstream = forward(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            const chunks: Buffer[] = [];
            answer.on("data", (c: Buffer) => chunks.push(c));
            answer.on("end", () => {
              if (req.method === "POST" && req.url === "/orders" && lost === 0) {
                lost++;
                req.socket.destroy(); // the order is placed; its answer never reaches the client
                return;
              }
              res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
            });
          },
        );
        req.pipe(upstream);
      });
      await new Promise<void>((resolve) => edge.listen(0, "127.0.0.1", resolve));
    });
    after(() => edge.close());

    test("the retry with the same order id gets the order placed by the lost attempt", async () => {
      const flaky = client(`http://127.0.0.1:${(edge.address() as AddressInfo).port}`);
      const placed = await flaky.placeOrder(order("lost"));
      assert.equal(lost, 1);
      assert.equal(placed.attempts, 2);
      assert.equal(placed.created, false); // the first attempt created it
      assert.equal(placed.order.status, "UNPAID");
      const types = (await otc.events(placed.order.orderId)).map((e) => e.type);
      assert.deepEqual(types, ["created"]);
    });
  });

  test("prepay answers what wx.requestPayment takes, and the same prepay id when repeated", async () => {
    const { order: placed } = await otc.placeOrder(order("pay"));
    const body = { openId: "oUpF8uMuAJO_ts", description: "tea 500 g" };
    const prepaid = await otc.prepay(placed.orderId, body);
    assert.equal(prepaid.orderId, placed.orderId);
    assert.deepEqual(Object.keys(prepaid.requestPayment).sort(), [
      "nonceStr",
      "package",
      "paySign",
      "signType",
      "timeStamp",
    ]);
    assert.equal(prepaid.requestPayment.package, `prepay_id=${prepaid.prepayId}`);
    assert.equal(prepaid.requestPayment.signType, "RSA");
    assert.match(prepaid.requestPayment.timeStamp, /^\d{10}$/);
    assert.ok(prepaid.requestPayment.paySign.length > 0);
    assert.equal((await otc.getOrder(placed.orderId)).prepaid, true);

    // the same prepay again (a retry): WeChat keeps the trade, the parameters are signed afresh
    const again = await otc.prepay(placed.orderId, body);
    assert.equal(again.prepayId, prepaid.prepayId);
  });

  test("cancel records once, the order closes USER_CANCEL, and its events tell it", async () => {
    const { order: placed } = await otc.placeOrder(order("cncl"));
    const first = await otc.cancel(placed.orderId);
    assert.equal(first.recorded, true);
    assert.equal(first.order.cancel, "REQUESTED");
    assert.equal((await otc.cancel(placed.orderId)).recorded, true); // 202 again, nothing more recorded

    let closed: Order | undefined;
    await until(`order ${placed.orderId} CLOSED`, async () => {
      closed = await otc.getOrder(placed.orderId);
      return closed.status === "CLOSED";
    });
    assert.equal(closed?.closeReason, "USER_CANCEL");
    const after = await otc.cancel(placed.orderId);
    assert.equal(after.recorded, false); // 200: already CLOSED
    assert.equal(after.order.status, "CLOSED");

    const events = await otc.events(placed.orderId);
    assert.deepEqual(
      events.map((e) => e.type),
      ["created", "cancel_requested", "closed"],
    );
    const seqs = events.map((e) => e.seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    for (const e of events) {
      assert.equal(e.orderId, placed.orderId);
      assert.equal(e.v, 1);
    }
  });

  test("bad requests are refused with the API's error code, at once", async () => {
    const badId = await refusal(otc.getOrder("ab"));
    assert.equal(badId.status, 400);
    assert.equal(badId.code, "INVALID_ORDER_ID");
    assert.equal(badId.attempts, 1);

    const quantity = await refusal(
      otc.placeOrder({ ...order("qty"), items: [{ skuId: sku, quantity: 1000 }] }),
    );
    assert.equal(quantity.status, 400);
    assert.equal(quantity.code, "INVALID_FIELD");

    const unknownSku = await refusal(otc.placeOrder({ ...order("usku"), items: [{ skuId: "sku-none-ts", quantity: 1 }] }));
    assert.equal(unknownSku.code, "UNKNOWN_SKU");

    const missing = await refusal(otc.getOrder(`${run}none`));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, "NOT_FOUND");

    const openId = await refusal(otc.prepay(`${run}same`, { openId: "o u" }));
    assert.equal(openId.code, "INVALID_OPEN_ID");
  });
});
