import BeaconModel
import BeaconRooms
import BeaconSimulation

/// `beaconbridge simulate --scenario ROOMS.json --capture 'DIR/{gateway}.btsnoop'`: one btsnoop capture per
/// gateway of a multi-gateway scenario (what that gateway's adapter hears of the simulated world), for replaying
/// several gateways side by side against one broker (docs/rooms.md); prints the ground truth on stdout, one
/// `room_truth` line per stay of each person (capture times), and one `capture` line per file on stderr.
enum SimulateRoomsCapture {
    static let placeholder = "{gateway}"

    /// nil on success, else the exit code after printing why.
    static func write(_ scenario: RoomScenario, pattern: String) -> Int32? {
        guard pattern.includes(placeholder) else {
            Output.stderr(
                "beaconbridge simulate: --capture of a rooms scenario needs \(placeholder) in the path (one file per gateway)"
            )
            return ExitCode.usage
        }
        // The integration fixture's world: without the people's spatial bias (as without the gateway terms).
        var scenario = scenario
        scenario.spatialBias = SpatialBiasRadio(.off)
        let simulator = RoomSimulator(scenario)
        for (index, gateway) in scenario.plan.gateways.enumerated() {
            let path = pattern.replacingText(placeholder, with: gateway.id)
            do throws(SyntheticCaptureFile.Failure) {
                let file = try SyntheticCaptureFile(path: path)
                for observation in simulator.observations(gateway: index) { try file.append(observation) }
                try file.finish()
                Output.stderr(
                    "capture: \(path): gateway \(gateway.id) (room \(gateway.room)): \(file.events) advertising report events"
                        + (file.skipped > 0
                            ? "; \(file.skipped) observations skipped (formats without a synthetic payload)" : ""))
            } catch {
                Output.stderr("beaconbridge simulate: cannot write the capture \(path): \(error)")
                return error.isCreation ? ExitCode.cantCreate : ExitCode.ioError
            }
        }
        for person in scenario.people {
            for stay in simulator.truth(of: person) { Output.stdout(SimulateRooms.truth(stay, of: person, scenario)) }
        }
        return nil
    }
}
