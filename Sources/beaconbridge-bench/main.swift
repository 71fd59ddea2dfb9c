// `make bench`: prints each figure next to a reference measured in the same run where one exists.
// Each area has its own file; run one with `beaconbridge-bench <area>`.
#if canImport(Glibc)
import Glibc
#endif

let areas: [(String, () -> Void)] = [
    ("decode", DecodeBench.run),
    ("decode-profile", { DecodeBench.run(profileOnly: true) }),
    ("tracker", TrackerBench.run),
    ("resolver", ResolverBench.run),
    ("publish", PublishBench.run),
    ("live", LiveBench.run),
    ("daemon", DaemonBench.run),
    ("status", StatusBench.run),
    ("esphome", ESPHomeBench.run),
]
let wanted = Set(CommandLine.arguments.dropFirst())
// `decode-profile` (a profiling loop, no figures) runs only when named.
for (name, run) in areas where wanted.isEmpty ? name != "decode-profile" : wanted.contains(name) {
    print("== \(name)")
    run()
}
