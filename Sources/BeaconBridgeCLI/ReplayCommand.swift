/// `beaconbridge replay FILE [--config FILE] [--speed X]`: feeds a btsnoop capture through the whole pipeline
/// to the configured broker, with time taken from the capture (as fast as possible by default).
enum ReplayCommand {
    static func run(_ arguments: [String]) -> Int32 {
        RunCommand.start(arguments, replay: true)
    }
}
