/// What the mDNS announcement (`AvahiPublisher`) reports; the daemon logs each one.
public enum MDNSNotice: Sendable, Equatable {
    /// avahi-daemon confirmed the service: `avahi-publish-service` printed "Established under name ...".
    /// `name` is the instance name avahi registered (another after a name collision).
    case announced(name: String)
    /// The child ended (or reported a failure and was ended) before or after confirming. `reason` is its last
    /// line of output, else its exit status; `attempt` counts the failures in a row; it is started again
    /// after `retryIn` seconds.
    case failed(reason: String, attempt: Int, retryIn: Int)
    /// Nothing is announced: the tool is not on PATH, or it or its thread cannot be started. Not retried.
    case unavailable(reason: String)
}
