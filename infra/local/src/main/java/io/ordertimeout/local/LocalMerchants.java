package io.ordertimeout.local;

import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.wechat.EnvironmentMerchantDirectory;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.MerchantDirectory;
import java.net.URI;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local stack's WeChat Pay merchant directory: which tenants have a merchant account, so what
 * the gateway (prepay, close, query) and the webhook ({@code /wechatpay/notify/<tenantId>}) accept.
 * Production reads one secret at init ({@code aws.SecretsMerchantDirectory}); here {@code ./local
 * tenant add} adds a tenant to the running stack, and every lookup reads the current map, so the
 * next prepay and the next notification of that tenant see it without a restart.
 *
 * <p>The simulator has one merchant account (one mchid, one key pair, one platform key), so every
 * tenant gets that account, as a single-merchant secret serves every tenant in production. The
 * tenant's own notify URL still differs ({@link MerchantCredentials#notifyUrlFor(String)}).
 */
final class LocalMerchants implements MerchantDirectory {
  private final WeChatPaySimulator simulator;
  private final Map<String, MerchantCredentials> byTenant = new ConcurrentHashMap<>();
  private volatile String notifyUrl;

  /** The default tenant's account, with a placeholder notify URL until {@link #notifyAt}. */
  LocalMerchants(WeChatPaySimulator simulator) {
    this.simulator = simulator;
    // port 80 placeholder: the stack builds the gateway before its HTTP API has a port
    this.notifyUrl = "http://127.0.0.1" + MerchantCredentials.WEBHOOK_PATH;
    byTenant.put(EnvironmentMerchantDirectory.DEFAULT_TENANT, account());
  }

  /**
   * The HTTP API now listens at {@code api}: every account's notify URL becomes its webhook there.
   */
  synchronized void notifyAt(URI api) {
    this.notifyUrl = api.toString().replaceAll("/+$", "") + MerchantCredentials.WEBHOOK_PATH;
    byTenant.replaceAll((tenant, old) -> account());
  }

  /**
   * Gives the tenant the simulator's account; false when it had one already (nothing changes).
   *
   * @throws IllegalArgumentException for an id that is not 1-32 of {@code [a-z0-9_-]}
   */
  synchronized boolean add(String tenantId) {
    if (!TenantIds.valid(tenantId)) {
      throw new IllegalArgumentException(
          "invalid tenant id '" + tenantId + "': 1 to 32 of [a-z0-9_-]");
    }
    return byTenant.putIfAbsent(tenantId, account()) == null;
  }

  Optional<MerchantCredentials> of(String tenantId) {
    return Optional.ofNullable(tenantId).map(byTenant::get);
  }

  /** Tenant id to account, in id order. */
  Map<String, MerchantCredentials> all() {
    return new TreeMap<>(byTenant);
  }

  @Override
  public MerchantCredentials forTenant(String tenantId) {
    MerchantCredentials credentials = tenantId == null ? null : byTenant.get(tenantId);
    if (credentials == null) {
      throw new IllegalArgumentException(
          "no WeChat Pay merchant for tenant "
              + tenantId
              + " on the local stack (./local tenant add "
              + tenantId
              + "); known tenants "
              + all().keySet());
    }
    return credentials;
  }

  private MerchantCredentials account() {
    return new MerchantCredentials(
        simulator.mchid(),
        simulator.appid(),
        simulator.merchantSerialNumber(),
        simulator.merchantPrivateKeyPem(),
        simulator.apiV3Key(),
        simulator.platformPublicKeyId(),
        simulator.platformPublicKeyPem(),
        notifyUrl);
  }
}
