import CommandKit

/// A duration as typed: `90s`, `15m`, `8h`, `30d` or a compound such as
/// `1h30m` (units in falling order, each once). Messages answer in the
/// units the user typed.
struct DurationText: Equatable {
  /// The units, largest first, with their length in seconds.
  static let units: [(letter: Character, seconds: Int64)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

  /// The length in seconds.
  let seconds: Int64
  /// The largest unit typed, in seconds (a limit is shown in it).
  let unit: Int64

  /// Parses `text`, or returns nil when it is not a duration: empty, a
  /// unit missing, repeated or out of order, a leading zero, zero in all,
  /// or more than 10 years.
  init?(_ text: String) {
    var total: Int64 = 0
    var largest: Int64 = 0
    var lastUnit = Int64.max
    var digits = ""
    for character in text {
      if character.isASCII && character.isNumber {
        if digits.isEmpty && character == "0" { return nil }
        digits.append(character)
        guard digits.count <= 9 else { return nil }
        continue
      }
      guard let unit = Self.units.first(where: { $0.letter == character })?.seconds, unit < lastUnit,
        let number = Int64(digits)
      else { return nil }
      total += number * unit
      largest = max(largest, unit)
      lastUnit = unit
      digits = ""
    }
    guard digits.isEmpty, total > 0, total <= 3_650 * 86_400 else { return nil }
    seconds = total
    unit = largest
  }

  /// The duration for the vault and registry APIs.
  var duration: Duration { .seconds(seconds) }

  /// Canonical compound text: `1h30m`, `10m`, `40d`.
  var text: String { Self.format(seconds) }

  /// `seconds` as compound text in units of at least `smallest` seconds
  /// (rounded down), e.g. `format(2_592_000) == "30d"`.
  static func format(_ seconds: Int64, smallest: Int64 = 1) -> String {
    var rest = seconds
    var text = ""
    for (letter, length) in units where length >= smallest && rest >= length {
      text += "\(rest / length)\(letter)"
      rest %= length
    }
    return text.isEmpty ? "0s" : text
  }

  /// Fails when the duration is above `limit` seconds, naming both in the
  /// unit typed: `--overlap 1000h is longer than the limit of 720h`.
  ///
  /// - Throws: a usage error naming the option.
  func check(limit: Int64, _ option: OptionSpec, _ arguments: ParsedArguments) throws {
    guard seconds > limit else { return }
    let letter = Self.units.first { $0.seconds == unit }!.letter
    let shown = limit % unit == 0 ? "\(limit / unit)\(letter)" : Self.format(limit)
    throw arguments.usageError("\(option.long) \(text) is longer than the limit of \(shown)")
  }

  /// The help words for a duration option.
  static let help = "a number and d, h, m or s, alone or combined as 1h30m"
}

/// Reads a duration option.
///
/// - Throws: a usage error naming the option when the text is not a duration.
func durationOption(_ arguments: ParsedArguments, _ option: OptionSpec) throws -> DurationText? {
  guard let text = arguments.value(option) else { return nil }
  guard let duration = DurationText(text) else {
    throw arguments.usageError("invalid \(option.long) '\(text)'; use \(DurationText.help), e.g. 8h or 1h30m")
  }
  return duration
}
