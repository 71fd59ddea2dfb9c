import BeaconConfig
import BeaconConfigReading

/// Checks the tokens `http` names (when the status page is on): each file or variable must exist, be readable and
/// hold a token (not empty). Problems name the key path and never contain the token. An absent systemd credentials
/// file is skipped (it exists only while the service runs). The daemon reads the tokens again when it starts.
enum HTTPTokenLoader {
    static func issues(in settings: HTTPSettings, credentialsDirectory: String?, environment: (String) -> String?)
        -> [ConfigIssue]
    {
        guard settings.enabled else { return [] }
        var issues: [ConfigIssue] = []
        for (file, env, name) in [
            (settings.tokenFile, settings.tokenEnv, "token"),
            (settings.actionTokenFile, settings.actionTokenEnv, "action_token"),
        ] {
            let key: String
            let outcome: SecretText.Outcome
            if let env {
                key = "http.\(name)_env"
                outcome = SecretText.fromEnvironment(env, environment: environment)
            } else if let file {
                key = "http.\(name)_file"
                outcome = SecretText.fromFile(file, credentialsDirectory: credentialsDirectory)
            } else {
                continue
            }
            switch outcome {
            case .skipped: break
            case .problem(let message): issues.append(ConfigIssue(path: key, message: message))
            case .text(let text, let origin):
                if text.allSatisfy({ $0 == "\n" || $0 == "\r" }) {
                    issues.append(ConfigIssue(path: key, message: "\(origin) is empty"))
                }
            }
        }
        return issues
    }
}
