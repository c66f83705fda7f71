package io.ordertimeout.wechat;

/**
 * A verified, decrypted notification that came to a service provider's URL, with the tenant it is
 * for: the tenant configured as the sub-merchant its resource names.
 *
 * @param payment its {@link PaymentNotification#mchid()} is the sub_mchid (the mchid of the
 *     tenant's trade bindings), its {@link PaymentNotification#appid()} the payer's appid
 */
public record ProviderNotification(String tenantId, PaymentNotification payment) {}
