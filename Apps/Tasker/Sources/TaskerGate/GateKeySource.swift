import TaskSystem

/// Where `tasker mcp` over stdio takes the assistant key from: the
/// variable `TASKER_ASSISTANT_KEY`, or the file `TASKER_ASSISTANT_KEY_FILE`
/// names (so a host's JSON can name a file instead of holding the key).
///
/// The file must be a regular file owned by the user with no group or
/// other permission bits (`chmod 600`); it holds the key, optionally
/// followed by one line ending. Both variables set is refused rather than
/// one silently winning.
public enum GateKeySource {
  /// The variable that holds the key itself.
  public static let keyVariable = "TASKER_ASSISTANT_KEY"
  /// The variable that names a file holding the key.
  public static let fileVariable = "TASKER_ASSISTANT_KEY_FILE"
  /// The most bytes a key file may hold; a key is far shorter.
  public static let maximumFileSize = 4096

  /// The key the environment gives, or nil for trusted mode (neither
  /// variable set).
  ///
  /// - Parameter environment: the process environment.
  /// - Returns: the key's text as given, or nil.
  /// - Throws: `GateError.keySourcesConflict` when both variables are set,
  ///   `.keyFileRefused` when the file is not a regular file, not
  ///   owned by the user, readable by others, too large or not one line of
  ///   UTF-8, `.keyFileMissing` when nothing is there.
  public static func key(in environment: [String: String]) throws -> String? {
    let direct = environment[keyVariable]
    guard let path = environment[fileVariable] else { return direct }
    guard direct == nil else { throw GateError.keySourcesConflict }
    guard !path.isEmpty else { throw GateError.keyFileRefused(path: path, reason: "the variable is empty") }
    let bytes: [UInt8]
    do {
      guard let read = try OpenFile.readOwnerOnly(path, limit: maximumFileSize) else {
        throw GateError.keyFileMissing(path: path)
      }
      bytes = read
    } catch let error as SystemError {
      throw GateError.keyFileRefused(path: path, reason: error.description + (error.hint.map { "; \($0)" } ?? ""))
    }
    var text = bytes
    if text.last == UInt8(ascii: "\n") { text.removeLast() }
    if text.last == UInt8(ascii: "\r") { text.removeLast() }
    guard let key = String(validating: text, as: UTF8.self), !key.isEmpty,
      !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    else {
      throw GateError.keyFileRefused(path: path, reason: "it must hold the key alone, on one line")
    }
    return key
  }
}
