package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.functions.orders.OrderApiHandler;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The order function serves exactly the routes template.yaml gives it (the order's life after
 * payment and coupons included), every one behind the IAM authorizer: the mall backend's API is
 * never public, and no other function serves an /orders or /coupons route.
 */
class OrderRoutesTemplateTest {
  private static final SamTemplate TEMPLATE = SamTemplate.read(Main.templatePath());

  @Test
  void theTemplatesOrderRoutesAreTheHandlersAndAllAreIamOnly() {
    SamTemplate.Function orders =
        TEMPLATE.functions().stream()
            .filter(f -> f.logicalId().equals("OrderCreatedFunction"))
            .findFirst()
            .orElseThrow();
    List<String> declared = orders.routes().stream().map(SamTemplate.HttpRoute::routeKey).toList();

    assertThat(declared).containsExactlyInAnyOrderElementsOf(OrderApiHandler.ROUTE_KEYS);
    assertThat(declared)
        .contains(
            "POST /orders/{id}/ship",
            "POST /orders/{id}/receipt",
            "POST /orders/{id}/receipt/extend",
            "POST /orders/{id}/after-sale",
            "POST /orders/{id}/after-sale/resolve",
            "POST /coupons",
            "GET /coupons/{id}");
    assertThat(orders.routes()).allSatisfy(r -> assertThat(r.auth()).isEqualTo("AWS_IAM"));
    assertThat(TEMPLATE.routes())
        .filteredOn(r -> r.path().startsWith("/orders") || r.path().startsWith("/coupons"))
        .hasSize(OrderApiHandler.ROUTE_KEYS.size());
  }
}
