// `make bench`: prints each figure next to a reference measured in the same run where one exists.
// Each area has its own file; run one with `beaconbridge-bench <area>`.
#if canImport(Glibc)
import Glibc
#endif

let areas: [(String, () -> Void)] = [
    ("decode", DecodeBench.run),
    ("tracker", TrackerBench.run),
    ("resolver", ResolverBench.run),
    ("publish", PublishBench.run),
    ("live", LiveBench.run),
    ("daemon", DaemonBench.run),
    ("esphome", ESPHomeBench.run),
]
let wanted = Set(CommandLine.arguments.dropFirst())
for (name, run) in areas where wanted.isEmpty || wanted.contains(name) {
    print("== \(name)")
    run()
}
