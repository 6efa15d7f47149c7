/// A small command-line reader in the shape of swift-argument-parser:
/// `--name value`, `--name=value`, boolean flags, `--` to end options, and
/// positionals. Every token must be consumed; anything left is a usage error.
struct Arguments {
  private var tokens: [String]
  let usage: String

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

  /// Removes at most one `name value` or `name=value`, returning the value.
  mutating func option(_ name: String) throws -> String? {
    var values = [String]()
    var index = 0
    while index < tokens.count && tokens[index] != "--" {
      let token = tokens[index]
      if token == name {
        guard index + 1 < tokens.count, tokens[index + 1] != "--" else { throw usageError("missing value for \(name)") }
        values.append(tokens[index + 1])
        tokens.removeSubrange(index...(index + 1))
      } else if token.hasPrefix(name + "=") {
        values.append(String(token.dropFirst(name.count + 1)))
        tokens.remove(at: index)
      } else {
        index += 1
      }
    }
    guard values.count <= 1 else { throw usageError("\(name) given more than once") }
    return values.first
  }

  /// An option parsed by `parse`, whose errors become usage errors.
  mutating func option<Value>(_ name: String, _ parse: (String) throws -> Value) throws -> Value? {
    guard let text = try option(name) else { return nil }
    do {
      return try parse(text)
    } catch let error as CLIError {
      throw error
    } catch {
      throw usageError("\(name): \(error)")
    }
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

  /// Exactly `count` positionals, or a usage error naming what is missing.
  mutating func positionals(exactly names: [String]) throws -> [String] {
    let words = try positionals()
    if words.count < names.count { throw usageError("missing \(names[words.count])") }
    if words.count > names.count { throw usageError("unexpected argument '\(words[names.count])'") }
    return words
  }

  /// A record id: a positive decimal integer.
  func id(_ text: String, name: String = "ID") throws -> Int64 {
    guard let id = Int64(text), id > 0, String(id) == text else {
      throw usageError("\(name) must be a positive whole number, not '\(text)'")
    }
    return id
  }
}
