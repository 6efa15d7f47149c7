import AssistantKeys

/// Every way the assistant gate can fail. Messages say what happened and
/// what to do; none carries a key.
public enum GateError: Error, Equatable, Sendable {
  /// Quiet hours are not `HH:MM-HH:MM` with two different valid times.
  case invalidQuietHours(String)
  /// A daily budget is not a whole number from 0 to the limit.
  case invalidBudget(String)
  /// The HTTP listen address is not `[IPv4:]PORT`.
  case invalidListenAddress(String)
  /// The HTTP server could not start (the port is taken or not allowed).
  case httpStartFailed(address: String)
  /// `--http` was asked for without `TASKER_ASSISTANT_KEY`-style keys:
  /// HTTP never runs in trusted mode.
  case trustedModeOverHTTP
  /// The assistant key in the environment was refused.
  case keyRefused(AssistantKeyError)

  /// The message for people.
  public var message: String {
    switch self {
    case .invalidQuietHours(let text):
      return "invalid quiet hours '\(text.prefix(32))': use HH:MM-HH:MM with two different times, e.g. 22:00-07:00"
    case .invalidBudget(let text):
      return "invalid budget '\(text.prefix(32))': use a whole number of actions per day from 0 to 100000"
    case .invalidListenAddress(let text):
      return "invalid listen address '\(text.prefix(64))': use PORT or IPv4:PORT, e.g. 8765 or 127.0.0.1:8765"
    case .httpStartFailed(let address):
      return "could not listen on \(address): the port may be in use or not allowed"
    case .trustedModeOverHTTP:
      return "HTTP never runs in trusted mode; every request must carry an assistant key (Authorization: Bearer tk_…)"
    case .keyRefused(let error):
      return "assistant key refused: \(error)"
    }
  }
}
