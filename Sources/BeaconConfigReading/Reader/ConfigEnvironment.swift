/// What configuration defaults depend on outside the file, gathered by the caller (the core reads nothing).
public struct ConfigEnvironment: Sendable, Equatable {
    /// The machine's host name; the default gateway id is derived from it.
    public var hostname: String

    public init(hostname: String) { self.hostname = hostname }
}
