package io.ordertimeout.architecture;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Dependencies in shared's main code run one way: wiring -> entry points -> config -> use cases ->
 * adapters -> kernel (domain types, metrics port, JSON, the loop). Within a layer packages may use
 * each other (compensation uses close and payment) as long as no cycle forms. Entry points may also
 * reach adapters directly (the sweep holds shard leases, the HTTP parser builds a WeChat payment
 * view): a relaxed layering, because routing those through a use case would only forward calls.
 */
class ArchitectureTest {
  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    // only shared's own classes: infra/embedded is on the test classpath under io.ordertimeout too
    main =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(ArchitectureTest::isSharedMainClass)
            .importPackages("io.ordertimeout");
  }

  private static boolean isSharedMainClass(Location location) {
    return location.contains("/shared/target/classes/");
  }

  @Test
  void packagesAreFreeOfCycles() {
    slices().matching("io.ordertimeout.(*)..").should().beFreeOfCycles().check(main);
  }

  @Test
  void layersDependOnlyDownwards() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("Wiring")
        .definedBy("io.ordertimeout.wiring..")
        .layer("Entry")
        .definedBy(
            "io.ordertimeout.http..",
            "io.ordertimeout.sweep..",
            "io.ordertimeout.consume..",
            "io.ordertimeout.aws..")
        .layer("Config")
        .definedBy("io.ordertimeout.config..")
        .layer("UseCase")
        .definedBy(
            "io.ordertimeout.place..",
            "io.ordertimeout.payment..",
            "io.ordertimeout.close..",
            "io.ordertimeout.cancel..",
            "io.ordertimeout.lifecycle..",
            "io.ordertimeout.compensation..",
            "io.ordertimeout.admin..")
        .layer("Adapter")
        .definedBy(
            "io.ordertimeout.wechat..",
            "io.ordertimeout.redis..",
            "io.ordertimeout.mysql..",
            "io.ordertimeout.stream..")
        .layer("Kernel")
        .definedBy(
            "io.ordertimeout.domain..",
            "io.ordertimeout.metrics..",
            "io.ordertimeout.util..",
            "io.ordertimeout.loop..")
        .whereLayer("Wiring")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("Entry")
        .mayOnlyBeAccessedByLayers("Wiring")
        .whereLayer("Config")
        .mayOnlyBeAccessedByLayers("Wiring", "Entry")
        .whereLayer("UseCase")
        .mayOnlyBeAccessedByLayers("Wiring", "Entry")
        .whereLayer("Adapter")
        .mayOnlyBeAccessedByLayers("Wiring", "Entry", "Config", "UseCase")
        .check(main);
  }
}
