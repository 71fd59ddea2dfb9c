// Placeholder until its issue lands; replaced by the real command.
enum ScanCommand {
    static func run(_ arguments: [String]) -> Int32 {
        Output.stderr("beaconbridge: this command is not built yet")
        return ExitCode.software
    }
}
