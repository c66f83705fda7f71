package io.ordertimeout.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PlaceOrderRequestsTest {
  private final PlaceOrderRequests requests = new PlaceOrderRequests(900, 3600);

  private PlaceOrderCommand parse(String json) {
    return requests.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  private void assertRefused(String json, String code, String messagePart) {
    assertThatThrownBy(() -> parse(json))
        .as(json)
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.status()).isEqualTo(400);
              assertThat(e.code()).isEqualTo(code);
              assertThat(e.getMessage()).contains(messagePart);
            });
  }

  @Test
  void aFullRequestParsesAndOptionalFieldsTakeTheirDefaults() {
    PlaceOrderCommand full =
        parse(
            "{\"orderId\":\"ord_000001\",\"tenantId\":\"shop-7\",\"userId\":\"u:1\","
                + "\"items\":[{\"skuId\":\"a\",\"quantity\":2},{\"skuId\":\"b\",\"quantity\":1}],"
                + "\"couponId\":\"c1\",\"amountFen\":1999,\"timeoutSeconds\":60}");
    PlaceOrderCommand minimal =
        parse(
            "{\"orderId\":\"ord_000002\",\"userId\":\"u1\",\"items\":[{\"skuId\":\"a\","
                + "\"quantity\":1}],\"amountFen\":1,\"couponId\":null}");

    assertThat(full)
        .isEqualTo(
            new PlaceOrderCommand(
                "ord_000001",
                "shop-7",
                "u:1",
                java.util.List.of(new OrderItem("a", 2), new OrderItem("b", 1)),
                "c1",
                1999,
                60));
    assertThat(minimal.tenantId()).isEqualTo(PlaceOrderRequests.DEFAULT_TENANT);
    assertThat(minimal.couponId()).isNull();
    assertThat(minimal.timeoutSeconds()).isEqualTo(900);
  }

  @Test
  void bodiesThatAreNotOneJsonObjectAreRefused() {
    assertThatThrownBy(() -> requests.parse(new byte[0]))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.code()).isEqualTo("EMPTY_BODY"));
    assertThatThrownBy(() -> requests.parse(null))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.code()).isEqualTo("EMPTY_BODY"));
    byte[] huge = new byte[PlaceOrderRequests.MAX_BODY_BYTES + 1];
    assertThatThrownBy(() -> requests.parse(huge))
        .isInstanceOfSatisfying(
            ApiError.class, e -> assertThat(e.code()).isEqualTo("BODY_TOO_LARGE"));
    assertRefused("{\"orderId\":", "INVALID_JSON", "not valid JSON");
    assertRefused("[1,2]", "INVALID_JSON", "must be a JSON object");
  }

  @Test
  void unknownFieldsAreRefusedAndLongNamesTruncated() {
    String longName = "x".repeat(60);
    assertRefused("{\"" + longName + "\":1}", "UNKNOWN_FIELD", "x".repeat(40) + "...");
    assertRefused(
        "{\"orderId\":\"ord_000001\",\"userId\":\"u1\",\"amountFen\":1,"
            + "\"items\":[{\"skuId\":\"a\",\"quantity\":1,\"price\":5}]}",
        "UNKNOWN_FIELD",
        "items[0].price");
  }

  @Test
  void idsAndNumbersAreCheckedFieldByField() {
    String items = "\"items\":[{\"skuId\":\"a\",\"quantity\":1}]";
    assertRefused("{\"userId\":\"u1\",\"amountFen\":1," + items + "}", "MISSING_FIELD", "orderId");
    assertRefused(
        "{\"orderId\":\"short\",\"userId\":\"u1\",\"amountFen\":1," + items + "}",
        "INVALID_FIELD",
        "orderId");
    assertRefused(
        "{\"orderId\":123456,\"userId\":\"u1\",\"amountFen\":1," + items + "}",
        "INVALID_FIELD",
        "orderId");
    assertRefused(
        "{\"orderId\":\"ord_000001\",\"userId\":\"u1\"," + items + "}",
        "MISSING_FIELD",
        "amountFen");
    assertRefused(
        "{\"orderId\":\"ord_000001\",\"userId\":\"u1\",\"amountFen\":1.5," + items + "}",
        "INVALID_FIELD",
        "amountFen");
    assertRefused(
        "{\"orderId\":\"ord_000001\",\"userId\":\"u1\",\"amountFen\":2147483648," + items + "}",
        "INVALID_FIELD",
        "amountFen");
    assertRefused(
        "{\"orderId\":\"ord_000001\",\"userId\":\"u1\",\"amountFen\":1,\"timeoutSeconds\":3601,"
            + items
            + "}",
        "INVALID_FIELD",
        "timeoutSeconds must be an integer from 1 to 3600");
  }

  @Test
  void itemListsMustHoldOneToFiftyDistinctValidLines() {
    String head = "{\"orderId\":\"ord_000001\",\"userId\":\"u1\",\"amountFen\":1,";
    assertRefused(head + "\"items\":null}", "MISSING_FIELD", "items");
    assertRefused(head + "\"items\":[]}", "INVALID_FIELD", "1 to 50");
    assertRefused(head + "\"items\":{}}", "INVALID_FIELD", "1 to 50");
    StringBuilder many = new StringBuilder(head + "\"items\":[");
    for (int i = 0; i <= PlaceOrderRequests.MAX_ITEMS; i++) {
      many.append(i == 0 ? "" : ",")
          .append("{\"skuId\":\"s")
          .append(i)
          .append("\",\"quantity\":1}");
    }
    assertRefused(many + "]}", "INVALID_FIELD", "1 to 50");
    assertRefused(head + "\"items\":[7]}", "INVALID_FIELD", "items[0] must be an object");
    assertRefused(
        head + "\"items\":[{\"skuId\":\"a\",\"quantity\":1000}]}", "INVALID_FIELD", "quantity");
    assertRefused(
        head + "\"items\":[{\"skuId\":\"a\",\"quantity\":1},{\"skuId\":\"a\",\"quantity\":2}]}",
        "DUPLICATE_SKU",
        "items[1].skuId 'a' appears twice");
  }

  @Test
  void pathIdsFollowWeChatsOutTradeNoRule() {
    assertThat(PlaceOrderRequests.orderIdFromPath("A-b_c|d*9")).isEqualTo("A-b_c|d*9");
    for (String bad : new String[] {null, "abc", "x".repeat(33), "has space1"}) {
      assertThatThrownBy(() -> PlaceOrderRequests.orderIdFromPath(bad))
          .as(String.valueOf(bad))
          .isInstanceOfSatisfying(
              ApiError.class, e -> assertThat(e.code()).isEqualTo("INVALID_ORDER_ID"));
    }
  }
}
