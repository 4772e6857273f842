/**
 * The reasons a receiver refuses a webhook delivery, one tagged error each, so a receiver can
 * log exactly what went wrong. None of them carries a secret or the expected signature.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** A required header is absent (or empty). @since 0.1.0 */
export class MissingHeader extends Schema.TaggedError<MissingHeader>("@waybill/signing/MissingHeader")(
  "MissingHeader",
  { header: Schema.String }
) {
  override get message(): string {
    return `Header ${this.header} is missing`
  }
}

/**
 * A header is present but not in the expected form (sent twice, not digits, not hex, another scheme …).
 * @since 0.1.0
 */
export class MalformedHeader extends Schema.TaggedError<MalformedHeader>("@waybill/signing/MalformedHeader")(
  "MalformedHeader",
  { header: Schema.String, reason: Schema.String }
) {
  override get message(): string {
    return `Header ${this.header} is malformed: ${this.reason}`
  }
}

/** `X-Signature-Algorithm` names an algorithm other than `hmac-sha256`. @since 0.1.0 */
export class UnsupportedAlgorithm extends Schema.TaggedError<UnsupportedAlgorithm>(
  "@waybill/signing/UnsupportedAlgorithm"
)("UnsupportedAlgorithm", { algorithm: Schema.String }) {
  override get message(): string {
    return `Signature algorithm ${JSON.stringify(this.algorithm)} is not supported (expected hmac-sha256)`
  }
}

/** The signature is valid but its timestamp is older than the window: a replay, or a clock ahead. @since 0.1.0 */
export class TimestampTooOld extends Schema.TaggedError<TimestampTooOld>("@waybill/signing/TimestampTooOld")(
  "TimestampTooOld",
  { timestamp: Schema.Number, now: Schema.Number, toleranceSeconds: Schema.Number }
) {
  override get message(): string {
    return `Signature timestamp ${this.timestamp} is ${this.now - this.timestamp} s old (tolerance ${this.toleranceSeconds} s)`
  }
}

/**
 * The signature is valid but its timestamp is ahead of the window: a receiver clock behind the sender's.
 * @since 0.1.0
 */
export class TimestampTooNew extends Schema.TaggedError<TimestampTooNew>("@waybill/signing/TimestampTooNew")(
  "TimestampTooNew",
  { timestamp: Schema.Number, now: Schema.Number, toleranceSeconds: Schema.Number }
) {
  override get message(): string {
    return `Signature timestamp ${this.timestamp} is ${this.timestamp - this.now} s in the future (tolerance ${this.toleranceSeconds} s)`
  }
}

/** The signature does not match: a wrong secret, or a body or timestamp changed (a body parser too). @since 0.1.0 */
export class SignatureMismatch extends Schema.TaggedError<SignatureMismatch>("@waybill/signing/SignatureMismatch")(
  "SignatureMismatch",
  {}
) {
  override get message(): string {
    return "Signature does not match the body, timestamp and secret"
  }
}

/** Basic or Bearer credentials were well-formed but are not the configured ones. @since 0.1.0 */
export class CredentialsMismatch extends Schema.TaggedError<CredentialsMismatch>(
  "@waybill/signing/CredentialsMismatch"
)("CredentialsMismatch", { scheme: Schema.Literal("basic", "bearer") }) {
  override get message(): string {
    return `${this.scheme === "basic" ? "Basic" : "Bearer"} credentials do not match the configured ones`
  }
}

/** The request body is larger than the receiver accepts. @since 0.1.0 */
export class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>("@waybill/signing/BodyTooLarge")("BodyTooLarge", {
  maxBytes: Schema.Number
}) {
  override get message(): string {
    return `Request body exceeds ${this.maxBytes} bytes`
  }
}

/** The request body could not be read (already consumed, connection aborted ...). @since 0.1.0 */
export class BodyUnreadable extends Schema.TaggedError<BodyUnreadable>("@waybill/signing/BodyUnreadable")(
  "BodyUnreadable",
  { reason: Schema.String }
) {
  override get message(): string {
    return `Request body could not be read: ${this.reason}`
  }
}

/** Why an HMAC signature was refused. @since 0.1.0 */
export type SignatureError =
  | MissingHeader
  | MalformedHeader
  | UnsupportedAlgorithm
  | TimestampTooOld
  | TimestampTooNew
  | SignatureMismatch

/** Why Basic or Bearer credentials were refused. @since 0.1.0 */
export type CredentialsError = MissingHeader | MalformedHeader | CredentialsMismatch

/** Why a request body could not be taken. @since 0.1.0 */
export type BodyError = BodyTooLarge | BodyUnreadable

/** Every reason a receiver refuses a delivery. @since 0.1.0 */
export type VerificationError = SignatureError | CredentialsError | BodyError

/**
 * The status to refuse a delivery with: 413 for an oversized body, 400 for an unreadable one, 401 for
 * credentials and signatures (the service retries any non-2xx alike; the difference is for humans).
 * @since 0.1.0
 */
export const httpStatus = (error: VerificationError): 400 | 401 | 413 => {
  switch (error._tag) {
    case "BodyTooLarge":
      return 413
    case "BodyUnreadable":
      return 400
    default:
      return 401
  }
}
