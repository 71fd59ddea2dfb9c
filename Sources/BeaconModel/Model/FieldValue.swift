/// A value carried by a beacon beside its identifiers: telemetry (battery, temperature), data fields of a
/// layout, the Eddystone URL, and so on. Encoded to JSON as the natural JSON type.
public enum FieldValue: Sendable, Equatable, Hashable {
    case int(Int64)
    case double(Double)
    case string(String)
    case bool(Bool)
    case ints([Int64])
}
