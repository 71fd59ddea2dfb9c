import BeaconModel
import BeaconRooms

/// The classifier's ablation rows (analysis, not rules; docs/rooms.md, "Session 28"): the arbiter with the
/// classifier on and the training's book, with one term of what it sees swapped for its true value at a time, so
/// that the gap between the `trained` row and `oracle-fp` (the same book matched against perfect evidence) can be
/// split term by term. Each row adds one more true term to the one before:
/// - `fp+configured`: the configured receiver offsets instead of self-calibration's (the book moved to them, as
///   `oracle-fp` has it);
/// - `fp+offset`: and each beacon's device offset told (its measured power and attenuation against the
///   trainer's) instead of learned;
/// - `fp+true-levels`: and fed once a second the links' true levels (`RoomOracle`: no fading, no channel draw, no
///   loss; posture, blocking and the slow shadowing stay);
/// - `fp+fixed-levels`: and fed the long-run levels instead (`oracle-fixed`'s: no temporal radio, no posture):
///   `oracle-fp`'s evidence, so what is left against it is the classifier's model (likelihood, filter, dwell).
extension RoomScenarioRun {
    /// The names of the rows, in order.
    public static let ablationNames = ["fp+configured", "fp+offset", "fp+true-levels", "fp+fixed-levels"]

    public func classifierAblations(in world: World) -> [RoomSummary.Rule] {
        var settings = scenario.arbiter
        settings.classifier.enabled = true
        let book = Self.configuredBook(world.training, scenario)
        func arbiter(pinned: [String: Double]) -> RoomArbiter {
            var arbiter = RoomArbiter(settings: settings)
            arbiter.setFingerprints(book)
            arbiter.pinnedOffsets = pinned
            return arbiter
        }
        let told = Self.trueOffsets(scenario, longRun: false)
        return [
            score(arbiter(pinned: [:]), name: Self.ablationNames[0], stream: world.sightings, in: world),
            score(arbiter(pinned: told), name: Self.ablationNames[1], stream: world.sightings, in: world),
            score(
                arbiter(pinned: told), name: Self.ablationNames[2], stream: world.oracle.sightings(fixed: false),
                in: world),
            score(
                arbiter(pinned: Self.trueOffsets(scenario, longRun: true)), name: Self.ablationNames[3],
                stream: world.oracle.sightings(fixed: true), in: world),
        ]
    }

    /// The training's book with its means moved from self-calibration's offsets (those it was recorded with) to
    /// the configured ones, as `RoomFingerprintOracle` moves them.
    static func configuredBook(_ training: RoomTrainingRun, _ scenario: RoomScenario) -> FingerprintBook {
        var book = FingerprintBook()
        for room in scenario.plan.rooms {
            guard var fingerprint = training.book[room.name] else { continue }
            for (gateway, level) in fingerprint.levels {
                var moved = level
                moved.mean += (training.offsets[gateway] ?? 0) - (scenario.arbiter.receiverOffsets[gateway] ?? 0)
                fingerprint.levels[gateway] = moved
            }
            book.set(fingerprint)
        }
        return book
    }

    /// Each beacon's level against the trainer's (a device like the first beacon, `RoomTrainingRun`): the
    /// difference of measured power less that of attenuation; `longRun` for the long-run levels, which leave
    /// every attenuation out (`RoomOracle.level(.fixed…)`), so the trainer's counts instead.
    static func trueOffsets(_ scenario: RoomScenario, longRun: Bool) -> [String: Double] {
        let trainer = scenario.people.first
        var offsets: [String: Double] = [:]
        for person in scenario.people {
            let model = scenario.distanceModel
            let power =
                model.meanRSSI(atDistance: 1, measuredPower: person.measuredPower)
                - model.meanRSSI(atDistance: 1, measuredPower: trainer?.measuredPower)
            offsets[person.beaconID] =
                longRun ? power + (trainer?.attenuation ?? 0) : power - person.attenuation + (trainer?.attenuation ?? 0)
        }
        return offsets
    }
}
