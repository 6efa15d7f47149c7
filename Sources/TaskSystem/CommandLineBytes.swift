import Glibc

/// The command line and environment exactly as the kernel passed them,
/// and their decoding into text that refuses instead of repairing: the
/// process edge both `taskkey` and `tasker` start from.
public enum CommandLineBytes {
  /// This process's arguments without the program name, and its
  /// environment's `NAME=value` entries, as raw bytes.
  public static func ofThisProcess() -> (arguments: [[UInt8]], environment: [[UInt8]]) {
    func bytes(_ pointer: UnsafePointer<CChar>) -> [UInt8] {
      Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)))
    }
    let arguments = (1..<Int(CommandLine.argc)).map { bytes(CommandLine.unsafeArgv[$0]!) }
    var environment = [[UInt8]]()
    var entry = environ
    while let variable = entry.pointee {
      environment.append(bytes(variable))
      entry += 1
    }
    return (arguments, environment)
  }

  /// The first piece of the command line that is not valid UTF-8.
  public enum Refusal: Sendable, Equatable {
    /// Argument `index`, counted from 1 after the program name.
    case argument(Int)
    /// The environment variable of this name.
    case environmentVariable(String)
  }

  /// A command line decoded as UTF-8.
  public struct Decoded: Sendable, Equatable {
    /// Every argument, when none was refused.
    public var arguments: [String]
    /// Every variable whose value is UTF-8 (an entry without `=` is left out).
    public var environment: [String: String]
    /// What was refused first, or nil: a variable among the checked names
    /// before any argument.
    public var refusal: Refusal?
  }

  /// Decodes `arguments` and `environment` (`NAME=value` entries). A
  /// variable whose value is not UTF-8 is left out, and refused when its
  /// name is in `checked`; an argument that is not UTF-8 is refused. Nothing
  /// is repaired into U+FFFD.
  public static func decode(arguments: [[UInt8]], environment: [[UInt8]], checking checked: Set<String>) -> Decoded {
    var decoded = Decoded(arguments: [], environment: [:], refusal: nil)
    for entry in environment {
      guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let name = String(decoding: entry[..<equals], as: UTF8.self)
      if let value = String(validating: entry[(equals + 1)...], as: UTF8.self) {
        decoded.environment[name] = value
      } else if checked.contains(name) {
        decoded.refusal = decoded.refusal ?? .environmentVariable(name)
      }
    }
    for (index, bytes) in arguments.enumerated() {
      if let argument = String(validating: bytes, as: UTF8.self) {
        decoded.arguments.append(argument)
      } else {
        decoded.refusal = decoded.refusal ?? .argument(index + 1)
      }
    }
    return decoded
  }
}
