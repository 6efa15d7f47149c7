/// A command line read against a `CommandSpec`: `--name value`,
/// `--name=value`, `-o value`, flags, `--` to end options, positionals.
/// Only declared options are accepted; an option read by a command must be
/// one its spec declares, so help and parser cannot drift apart.
public struct ParsedArguments {
  /// The spec the line was read against.
  public let spec: CommandSpec
  /// `taskkey item set`, for messages and the usage line.
  public let path: String
  private var values: [String: [String]] = [:]
  /// The positional arguments, in order.
  public private(set) var positionals: [String] = []

  /// Reads `tokens` against `spec`.
  ///
  /// - Throws: `UsageError` for an unknown option (with the closest
  ///   declared one), a missing value, a repeated option, a value outside
  ///   its choices, a missing required option, or too few or too many
  ///   positionals.
  public init(_ tokens: [String], spec: CommandSpec, path: String) throws {
    self.spec = spec
    self.path = path
    let options = spec.allOptions
    var index = 0
    var endOfOptions = false
    while index < tokens.count {
      let token = tokens[index]
      index += 1
      if endOfOptions || token == "-" || !token.hasPrefix("-") {
        positionals.append(token)
        continue
      }
      if token == "--" {
        endOfOptions = true
        continue
      }
      var name = token
      var inline: String?
      if token.hasPrefix("--"), let equals = token.firstIndex(of: "=") {
        name = String(token[..<equals])
        inline = String(token[token.index(after: equals)...])
      }
      guard let option = Self.find(name, in: options) else {
        throw usageError(Self.unknownOptionMessage(name, options: options))
      }
      guard option.placeholder != nil else {
        if inline != nil { throw usageError("\(option.long) takes no value") }
        values[option.long, default: []].append("")
        continue
      }
      let value: String
      if let inline {
        value = inline
      } else {
        guard index < tokens.count, tokens[index] != "--" else {
          throw usageError("missing value for \(option.long)")
        }
        value = tokens[index]
        index += 1
      }
      try check(value, for: option)
      values[option.long, default: []].append(value)
    }
    for option in options {
      let count = values[option.long]?.count ?? 0
      if count > 1 && !option.repeatable { throw usageError("\(option.long) given more than once") }
      if count == 0 && option.required { throw usageError("missing \(option.long) \(option.placeholder ?? "")") }
    }
    try checkPositionals()
  }

  private func check(_ value: String, for option: OptionSpec) throws {
    switch option.kind {
    case .choice(let words) where !words.contains(value):
      throw usageError("unknown \(option.long) '\(value)'; use \(Self.list(words))")
    case .number where Int32(value).map({ $0 < 0 }) ?? true:
      throw usageError("\(option.long) takes a whole number such as 3")
    case .recordID where Self.recordID(value) == nil, .liveID where Self.recordID(value) == nil:
      throw usageError("\(option.long) takes a record id, a positive whole number such as 42, not '\(value)'")
    default:
      break
    }
  }

  /// The id `text` spells: a positive decimal `Int64` without a sign or
  /// leading zeros; nil otherwise.
  public static func recordID(_ text: String) -> Int64? {
    guard let id = Int64(text), id > 0, String(id) == text else { return nil }
    return id
  }

  private func checkPositionals() throws {
    if let refusal = spec.positionalRefusal, !positionals.isEmpty { throw usageError(refusal) }
    let arguments = spec.arguments
    let required = arguments.filter { !$0.optional }.count
    if positionals.count < required {
      throw usageError("missing \(arguments[positionals.count].name)")
    }
    if positionals.count > arguments.count && arguments.last?.repeating != true {
      throw usageError("unexpected argument '\(positionals[arguments.count])'")
    }
    for (argument, value) in zip(arguments, positionals) {
      if case .choice(let words) = argument.kind, !words.contains(value) {
        throw usageError("unknown \(argument.name) '\(value)'; use \(Self.list(words))")
      }
      if argument.kind.isRecordID, Self.recordID(value) == nil {
        throw usageError("\(argument.name) must be a positive whole number, not '\(value)'")
      }
    }
  }

  private static func find(_ name: String, in options: [OptionSpec]) -> OptionSpec? {
    if name.hasPrefix("--") { return options.first { $0.long == name } }
    guard name.count == 2, let letter = name.last else { return nil }
    return options.first { $0.short == letter }
  }

  private static func unknownOptionMessage(_ name: String, options: [OptionSpec]) -> String {
    let guess = closestWord(to: name, among: options.map(\.long))
    return "unknown option '\(name)'" + (guess.map { "; did you mean '\($0)'?" } ?? "")
  }

  /// "a, b or c".
  public static func list(_ words: [String]) -> String {
    words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
  }

  /// A usage error that names this command's usage line.
  public func usageError(_ message: String) -> UsageError {
    UsageError(message: message, usage: "usage: " + HelpText.usageLine(spec, path: path))
  }

  private func declared(_ option: OptionSpec) -> String {
    // An option not in the spec would never reach the parser: a programming
    // error that every command's tests would hit at once.
    precondition(
      spec.allOptions.contains { $0.long == option.long }, "\(path) reads \(option.long) without declaring it")
    return option.long
  }

  /// Whether a flag was given.
  public func flag(_ option: OptionSpec) -> Bool {
    values[declared(option)] != nil
  }

  /// The value of an option given at most once.
  public func value(_ option: OptionSpec) -> String? {
    values[declared(option)]?.first
  }

  /// Every value of a repeatable option, in order.
  public func values(_ option: OptionSpec) -> [String] {
    values[declared(option)] ?? []
  }

  /// The value of a `.recordID` option, if given (the parser checked it).
  public func recordID(_ option: OptionSpec) -> Int64? {
    value(option).flatMap(Self.recordID)
  }

  /// The positional at `index` as a record id, if given and declared
  /// `.recordID` (the parser checked it).
  public func recordID(at index: Int) -> Int64? {
    argument(index).flatMap(Self.recordID)
  }

  /// The positional at `index`, if given.
  public func argument(_ index: Int) -> String? {
    index < positionals.count ? positionals[index] : nil
  }
}

/// The declared word nearest to `word` within two edits (case ignored),
/// else the one declared word that `word` begins (a cut-short `--prio`
/// for `--priority`, at least three letters past any dashes), for "did you
/// mean" hints; nil when none is that close.
public func closestWord(to word: String, among candidates: [String]) -> String? {
  let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
  if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, min(2, word.count / 3)) { return best.0 }
  let letters = word.drop { $0 == "-" }.count
  let started = candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) }
  return letters >= 3 && started.count == 1 ? started[0] : nil
}

/// Edit distance between two strings, counting an insertion, a deletion,
/// a substitution or a swap of two neighbours as one (`statsu` → `status`).
public func editDistance(_ left: String, _ right: String) -> Int {
  let a = Array(left)
  let b = Array(right)
  guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
  var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
  for i in 0...a.count { table[i][0] = i }
  for j in 0...b.count { table[0][j] = j }
  for i in 1...a.count {
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
      }
    }
  }
  return table[a.count][b.count]
}

extension ValueKind {
  /// Whether a value of this kind must be a record id.
  var isRecordID: Bool {
    switch self {
    case .recordID, .liveID: return true
    case .text, .file, .directory, .number, .duration, .choice, .live: return false
    }
  }
}
