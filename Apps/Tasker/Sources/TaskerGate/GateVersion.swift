/// The version of Tasker: what `tasker --version` prints and what the gate
/// reports as `serverInfo.version`, one constant so they cannot differ.
public enum GateVersion {
  /// `0.2.0`.
  public static let current = "0.2.0"
}
