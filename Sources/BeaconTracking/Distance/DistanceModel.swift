/// How RSSI turns into metres.
public enum DistanceModel: String, Sendable, CaseIterable, Equatable {
    /// Android Beacon Library curve fit (Nexus 5): r = rssi / power; r < 1: r^10, else 0.42093 r^6.9476 + 0.54992.
    case ablCurveFit = "abl"
    /// The original 2013 curve used by most Linux gateways and Home Assistant: 0.89976 r^7.7095 + 0.111.
    case curve2013 = "abl_2013"
    /// Log-distance path loss: d = 10^((power - rssi) / (10 n)).
    case pathLoss = "path_loss"

    /// Coefficients (a, b, c) of the curve-fit models: d = a r^b + c.
    public var curve: (a: Double, b: Double, c: Double)? {
        switch self {
        case .ablCurveFit: (0.42093, 6.9476, 0.54992)
        case .curve2013: (0.89976, 7.7095, 0.111)
        case .pathLoss: nil
        }
    }
}
