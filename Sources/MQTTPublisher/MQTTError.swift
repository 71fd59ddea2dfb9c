import BeaconDelivery
import CMosquitto

#if canImport(Glibc)
import Glibc
import BeaconModel
#endif

/// A libmosquitto failure: the operation, the `MOSQ_ERR_*` code with `mosquitto_strerror`'s text, the
/// broker's CONNACK reason when it refused us, and the last error libmosquitto logged (TLS details).
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was attempted, e.g. `connect to 127.0.0.1:8883`.
    public var operation: String
    /// `MOSQ_ERR_*` code (0 when the problem is not libmosquitto's, e.g. a password file).
    public var code: Int32
    /// CONNACK return code (MQTT 3.1.1) or reason code (MQTT 5) when the broker refused the connection.
    public var refusal: Int32?
    public var message: String

    public init(operation: String, code: Int32, refusal: Int32? = nil, message: String) {
        self.operation = operation
        self.code = code
        self.refusal = refusal
        self.message = message
    }

    /// Builds the error for a libmosquitto return code. The corresponding C function is `mosquitto_strerror`.
    /// `MOSQ_ERR_ERRNO` with errno 0 (the peer closed the connection, or sent bytes that are not MQTT) would
    /// read "Success (Success)": it is said in words instead.
    init(operation: String, code: Int32, detail: String? = nil) {
        if code == MQTTError.errno, Glibc.errno == 0 || detail == "Success" {
            self.init(
                operation: operation, code: code,
                message:
                    "the connection was closed without a system error (the peer hung up or answered something that is not MQTT)"
            )
            return
        }
        var text = String(cString: mosquitto_strerror(code))
        if code == MQTTError.errno, let detail = detail, !detail.isEmpty {
            text += " (\(detail))"
        } else if let detail, !detail.isEmpty {
            text += ": \(detail)"
        }
        self.init(operation: operation, code: code, message: text)
    }

    /// Said when a plain (non-TLS) connection broke before the broker's CONNACK.
    static let plainClientHint = "the broker closed the connection right after CONNECT: is it a TLS port? set mqtt.tls"

    /// The broker refused the connection (bad credentials, not authorised, ...).
    public var isRefused: Bool { refusal != nil }
    /// A TLS failure (handshake, certificate verification).
    public var isTLS: Bool {
        code == Int32(MOSQ_ERR_TLS.rawValue) || message.includes("SSL") || message.includes("certificate")
    }

    /// A `mosquitto_publish` failure that sending the same message again cannot cure: larger than the broker's
    /// maximum packet size or the protocol's payload limit, a topic that is not valid UTF-8 or otherwise
    /// invalid, a QoS the broker does not support.
    public var isPermanentPublishRefusal: Bool {
        [
            MOSQ_ERR_OVERSIZE_PACKET, MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_MALFORMED_UTF8, MOSQ_ERR_INVAL,
            MOSQ_ERR_QOS_NOT_SUPPORTED,
        ].contains { Int32($0.rawValue) == code }
    }

    public var description: String { failure.description }

    /// The same failure in the delivery seam's sink-neutral terms (`MessageTransport`).
    public var failure: TransportFailure {
        TransportFailure(
            transport: "MQTT", operation: operation, code: code, refusal: refusal, message: message,
            permanent: isPermanentPublishRefusal, isTLS: isTLS)
    }

    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)
    static let errno = Int32(MOSQ_ERR_ERRNO.rawValue)
}
