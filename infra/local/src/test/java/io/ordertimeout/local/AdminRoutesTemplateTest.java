package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.http.AdminRoutes;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The admin function serves exactly the routes template.yaml gives it, every one behind the IAM
 * authorizer, and no other function serves an /admin route: the admin API is never public.
 */
class AdminRoutesTemplateTest {
  private static final SamTemplate TEMPLATE = SamTemplate.read(Main.templatePath());

  @Test
  void theTemplatesAdminRoutesAreTheHandlersAndAllAreIamOnly() {
    SamTemplate.Function admin =
        TEMPLATE.functions().stream()
            .filter(f -> f.logicalId().equals("AdminFunction"))
            .findFirst()
            .orElseThrow();
    List<String> declared = admin.routes().stream().map(SamTemplate.HttpRoute::routeKey).toList();

    assertThat(declared).containsExactlyInAnyOrderElementsOf(AdminRoutes.ROUTES);
    assertThat(admin.routes()).allSatisfy(r -> assertThat(r.auth()).isEqualTo("AWS_IAM"));
    assertThat(TEMPLATE.routes())
        .filteredOn(r -> r.path().startsWith("/admin"))
        .allSatisfy(r -> assertThat(r.auth()).isEqualTo("AWS_IAM"))
        .hasSize(AdminRoutes.ROUTES.size());
  }
}
