// Placeholder until its issue lands.
enum TrackerBench {
    static func run() { print("  (not built yet)") }
}
