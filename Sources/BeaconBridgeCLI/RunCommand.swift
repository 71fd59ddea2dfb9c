/// `beaconbridge run [--config FILE] [--log-level L] [--record FILE]`: the daemon.
enum RunCommand {
    static func run(_ arguments: [String]) -> Int32 {
        start(arguments, replay: false)
    }

    static func start(_ arguments: [String], replay: Bool) -> Int32 {
        switch DaemonOptions.parse(arguments, replay: replay, environment: ProcessEnvironment.current()) {
        case let .failure(error) where error.message.isEmpty:
            Output.stdout(CommandLineTool.usage)
            return ExitCode.ok
        case let .failure(error):
            Output.stderr("beaconbridge \(replay ? "replay" : "run"): \(error.message)\n\n\(CommandLineTool.usage)")
            return ExitCode.usage
        case let .success(options):
            return AsyncMain.block { await Daemon.start(options) }
        }
    }
}
