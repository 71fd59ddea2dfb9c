// Placeholder until its issue lands.
enum DaemonBench {
    static func run() { print("  (not built yet)") }
}
