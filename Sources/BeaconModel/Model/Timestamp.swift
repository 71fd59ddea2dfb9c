/// Capture time of an advertisement, in seconds since the Unix epoch.
///
/// The core never reads a clock: every report carries its own time (from the HCI reader, a btsnoop record or
/// the simulator), so replay and simulation are deterministic and can run faster than real time.
public typealias Timestamp = Double
