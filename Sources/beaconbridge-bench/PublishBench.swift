// Placeholder until its issue lands.
enum PublishBench {
    static func run() { print("  (not built yet)") }
}
