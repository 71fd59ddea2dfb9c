import Foundation
import TestSupport

/// A throw-away CA, broker certificate (127.0.0.1 / localhost), client certificate and an unrelated CA,
/// generated with the `openssl` command line tool in a temp dir; plus a mosquitto password file.
struct TestPKI {
    let directory: String
    var caCert: String { directory + "/ca.crt" }
    var serverCert: String { directory + "/server.crt" }
    var serverKey: String { directory + "/server.key" }
    var clientCert: String { directory + "/client.crt" }
    var clientKey: String { directory + "/client.key" }
    var otherCACert: String { directory + "/other-ca.crt" }
    var passwordFile: String { directory + "/passwd" }

    static let username = "gateway"
    static let password = "s3cret-Pa55"

    init() throws {
        directory = try TestDirectory.make(prefix: "bb-pki")
        let dir = directory
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let openssl = "/usr/bin/openssl"
        try TestPKI.run(
            openssl,
            ["req", "-x509"] + key + [
                "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.crt", "-days", "2",
                "-subj", "/CN=BeaconBridge test CA",
            ])
        try TestPKI.run(
            openssl,
            ["req", "-x509"] + key + [
                "-keyout", "\(dir)/other-ca.key", "-out", "\(dir)/other-ca.crt",
                "-days", "2", "-subj", "/CN=Unrelated CA",
            ])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: dir + "/san.ext", atomically: true, encoding: .utf8)
        for (name, subject) in [("server", "/CN=localhost"), ("client", "/CN=gateway")] {
            try TestPKI.run(
                openssl,
                ["req"] + key + ["-keyout", "\(dir)/\(name).key", "-out", "\(dir)/\(name).csr", "-subj", subject])
            try TestPKI.run(
                openssl,
                [
                    "x509", "-req", "-in", "\(dir)/\(name).csr", "-CA", "\(dir)/ca.crt", "-CAkey", "\(dir)/ca.key",
                    "-CAcreateserial", "-out", "\(dir)/\(name).crt", "-days", "2", "-extfile", "\(dir)/san.ext",
                ])
        }
        try TestPKI.run("/usr/bin/mosquitto_passwd", ["-b", "-c", "\(dir)/passwd", TestPKI.username, TestPKI.password])
        try (TestPKI.password + "\n").write(toFile: dir + "/password.txt", atomically: true, encoding: .utf8)
    }

    /// Broker configuration lines: TLS with a required client certificate and password authentication.
    var brokerConfig: String {
        """
        cafile \(caCert)
        certfile \(serverCert)
        keyfile \(serverKey)
        require_certificate true
        password_file \(passwordFile)
        """
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let status = try ChildProcess(executable, arguments).wait()
        guard status == 0 else {
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) failed: \(status)")
        }
    }
}
