package io.ordertimeout.embedded.wechat;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The primitives WeChat Pay APIv3 uses: SHA256withRSA signatures, AEAD_AES_256_GCM, PEM, nonces.
 */
final class WeChatCrypto {

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String ALPHANUMERIC =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private static final int GCM_TAG_BITS = 128;

  private WeChatCrypto() {}

  static KeyPair newRsaKeyPair() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048, RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("RSA-2048 key generation is unavailable", e);
    }
  }

  static String sign(PrivateKey key, String message) {
    try {
      Signature signer = Signature.getInstance("SHA256withRSA");
      signer.initSign(key);
      signer.update(message.getBytes(StandardCharsets.UTF_8));
      return Base64.getEncoder().encodeToString(signer.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("signing failed", e);
    }
  }

  static boolean verify(PublicKey key, String message, String base64Signature) {
    try {
      Signature verifier = Signature.getInstance("SHA256withRSA");
      verifier.initVerify(key);
      verifier.update(message.getBytes(StandardCharsets.UTF_8));
      return verifier.verify(Base64.getDecoder().decode(base64Signature));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return false; // garbage signature or bad base64: simply not a valid signature
    }
  }

  /** AEAD_AES_256_GCM with the APIv3 key, as in WeChat's notification resource; base64 out. */
  static String encrypt(String apiV3Key, String associatedData, String nonce, String plaintext) {
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(
          Cipher.ENCRYPT_MODE,
          new SecretKeySpec(apiV3Key.getBytes(StandardCharsets.UTF_8), "AES"),
          new GCMParameterSpec(GCM_TAG_BITS, nonce.getBytes(StandardCharsets.UTF_8)));
      cipher.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
      byte[] sealed = cipher.doFinal(plaintext.getBytes(StandardCharsets.UTF_8));
      return Base64.getEncoder().encodeToString(sealed);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM encryption failed", e);
    }
  }

  static String pem(String type, byte[] der) {
    String body =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }

  static String nonce(int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append(ALPHANUMERIC.charAt(RANDOM.nextInt(ALPHANUMERIC.length())));
    }
    return sb.toString();
  }

  static String digits(int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) ('0' + RANDOM.nextInt(10)));
    }
    return sb.toString();
  }

  static String upperHex(int length) {
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append("0123456789ABCDEF".charAt(RANDOM.nextInt(16)));
    }
    return sb.toString();
  }
}
