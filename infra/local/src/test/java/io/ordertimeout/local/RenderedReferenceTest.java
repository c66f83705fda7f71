package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rendered references (docs/reference/http-api.generated.md from openapi.yaml,
 * docs/reference/events.md from the event schemas) are what {@link ReferenceMarkdown} makes of the
 * documents today. With {@code -Dotc.docs.render=true} the test writes them instead, and then
 * passes.
 */
class RenderedReferenceTest {

  @Test
  void theCommittedReferencePagesAreAFreshRenderingOfTheDocuments() throws IOException {
    boolean write = Boolean.getBoolean("otc.docs.render");
    List<String> stale = new ArrayList<>();
    for (Map.Entry<Path, String> page : ReferenceMarkdown.pages().entrySet()) {
      Path file = page.getKey();
      if (write) {
        Files.writeString(file, page.getValue());
      }
      if (!Files.exists(file) || !Files.readString(file).equals(page.getValue())) {
        stale.add(ReferenceMarkdown.ROOT.relativize(file).toString());
      }
    }
    assertThat(stale)
        .as(
            "pages that differ from a fresh rendering; write them again with: "
                + ReferenceMarkdown.COMMAND)
        .isEmpty();
  }

  @Test
  void theHttpPageHasEveryOperationWithItsStatusesAndCodes() {
    OpenApi api = OpenApi.read();
    String page = ReferenceMarkdown.httpApi(api);
    for (String key : api.operations().keySet()) {
      assertThat(page).contains("\n### `" + key + "`\n");
    }
    String placing = section(page, "### `POST /orders`");
    assertThat(placing)
        .contains("Request body `PlaceOrderRequest`, required, at most 65,536 bytes")
        .contains("| `items[].quantity` | integer | yes | 1 to 999 |")
        .contains(
            "| `orderId` | `OrderId` (string) | yes | pattern `^[0-9A-Za-z_\\-\\|*]{6,32}$` |")
        .contains("| 200 | [`Order`](#order) |")
        .containsPattern(
            "\\| 409 \\| \\[`Error`\\]\\(#error\\) \\| `ORDER_CONFLICT`, `OUT_OF_STOCK` \\|");
    assertThat(section(page, "### `POST /wechatpay/notify`"))
        .contains("authorization `wechatpaySignature`")
        .contains("| 401 | [`WechatFail`](#wechatfail) | `BAD_SIGNATURE`, `STALE_TIMESTAMP` |");
  }

  @Test
  void theEventsPageHasEveryTypeAndVersionWithItsRequiredFields() {
    String page = ReferenceMarkdown.events(ReferenceMarkdown.EVENTS_DIR);
    assertThat(page).contains("\n## `shipped` v1\n", "\n## `closed` v1\n", "\n## `created` v1\n");
    assertThat(section(page, "## `shipped` v1"))
        .contains("| `trackingNo` | string | yes | pattern `^[0-9A-Za-z_-]{1,64}$` |")
        .contains("| `traceId` | string | no |")
        .contains("No other field appears.");
  }

  private static String section(String page, String heading) {
    int start = page.indexOf(heading + "\n");
    assertThat(start).as(heading).isNotNegative();
    int end = page.indexOf("\n#", start + heading.length());
    return end < 0 ? page.substring(start) : page.substring(start, end);
  }
}
