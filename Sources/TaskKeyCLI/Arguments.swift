/// A hand-written command-line reader in the shape of swift-argument-parser:
/// `--name value`, `--name=value`, boolean flags, `--` to end options, and
/// positionals. Every token must be consumed; anything left is a usage error.
struct Arguments {
  private var tokens: [String]
  private let usage: String

  init(_ tokens: [String], usage: String) {
    self.tokens = tokens
    self.usage = usage
  }

  func usageError(_ message: String) -> CLIError {
    .usage(message: message, usage: "usage: \(usage)")
  }

  /// Removes a boolean flag, returning whether it was present.
  mutating func flag(_ name: String) throws -> Bool {
    var found = false
    var index = 0
    while index < tokens.count && tokens[index] != "--" {
      if tokens[index] == name {
        tokens.remove(at: index)
        found = true
      } else if tokens[index].hasPrefix(name + "=") {
        throw usageError("\(name) takes no value")
      } else {
        index += 1
      }
    }
    return found
  }

  /// Removes every `name value` or `name=value`, returning the values.
  mutating func options(_ name: String) throws -> [String] {
    var values = [String]()
    var index = 0
    while index < tokens.count && tokens[index] != "--" {
      let token = tokens[index]
      if token == name {
        guard index + 1 < tokens.count, tokens[index + 1] != "--" else {
          throw usageError("missing value for \(name)")
        }
        values.append(tokens[index + 1])
        tokens.removeSubrange(index...(index + 1))
      } else if token.hasPrefix(name + "=") {
        values.append(String(token.dropFirst(name.count + 1)))
        tokens.remove(at: index)
      } else {
        index += 1
      }
    }
    return values
  }

  /// Removes at most one occurrence of an option.
  mutating func option(_ name: String) throws -> String? {
    let values = try options(name)
    guard values.count <= 1 else { throw usageError("\(name) given more than once") }
    return values.first
  }

  /// Returns the remaining positionals; fails on any leftover option.
  mutating func positionals() throws -> [String] {
    var result = [String]()
    var afterSeparator = false
    for token in tokens {
      if afterSeparator {
        result.append(token)
      } else if token == "--" {
        afterSeparator = true
      } else if token.hasPrefix("-") && token != "-" {
        throw usageError("unknown option '\(token)'")
      } else {
        result.append(token)
      }
    }
    tokens = []
    return result
  }

  /// Fails unless no positional is left.
  mutating func finish() throws {
    let rest = try positionals()
    if let first = rest.first { throw usageError("unexpected argument '\(first)'") }
  }
}

/// The path argument that means a standard stream: `--out -` is standard
/// output and an input file `-` is standard input, where the command can
/// stream (`backup create|restore`, `sync export|import`, `retire --input`).
/// A secret file (`keygen --out`, `--key-file`, `--passphrase-file`) is
/// never a stream, so there `-` is refused; no command makes or reads a file
/// named `-` (write `./-` for that).
let standardStreamPath = "-"

/// Refuses `-` for an option whose file must be a private file.
func refuseStandardStream(_ path: String, option: String, _ arguments: Arguments) throws {
  guard path != standardStreamPath else {
    throw arguments.usageError(
      "\(option) - is not accepted: \(option) names a private 0600 file (write ./- for a file named '-')")
  }
}
