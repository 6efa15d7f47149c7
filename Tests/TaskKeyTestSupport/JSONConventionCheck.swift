import Foundation

/// The checks of the one JSON convention (docs/json-output.md), shared by
/// the end-to-end tests of `taskkey` and of `tasker`, which run the real
/// binaries: the page's table of each command's fields, what in an output
/// breaks the rules for keys, ids, times and dates, and which objects of a
/// JSON text are not key-sorted.
public enum JSONConventionCheck {
  /// docs/json-output.md's table for `program`: command words → fields.
  public static func documented(_ program: String, repository root: URL) throws -> [[String]: [String]] {
    let text = try String(contentsOf: root.appendingPathComponent("docs/json-output.md"), encoding: .utf8)
    var table = [[String]: [String]]()
    for line in text.split(separator: "\n") where line.hasPrefix("| `\(program) ") {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      let path = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")).split(separator: " ").dropFirst()
      // The fields are the quoted words before a parenthesised condition.
      table[path.map(String.init)] = cells[1].prefix { $0 != "(" }.split(separator: ",")
        .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
    }
    return table
  }

  /// What in `value` breaks the page's rules for keys, ids, times and
  /// dates, at every depth; empty when nothing does.
  public static func breaks(_ value: Any, at path: String = "$") -> [String] {
    if let array = value as? [Any] {
      return array.enumerated().flatMap { breaks($0.element, at: "\(path)[\($0.offset)]") }
    }
    guard let object = value as? [String: Any] else { return [] }
    var found = [String]()
    func matches(_ value: Any, _ pattern: String) -> Bool {
      value is NSNull || (value as? String)?.range(of: pattern, options: .regularExpression) != nil
    }
    for (key, member) in object {
      let place = "\(path).\(key)"
      if key.range(of: #"^[a-z][a-z0-9_]*$"#, options: .regularExpression) == nil {
        found.append("\(place): not snake_case")
      }
      if key == "id" || key.hasSuffix("_id"), !(member is NSNull || member is String) {
        found.append("\(place): an id that is not a string or null")
      }
      let times = ["at", "created", "completed", "updated", "modified", "expires", "last_used"]
      if times.contains(key) || key.hasSuffix("_at") || key.hasSuffix("_until"),
        !matches(member, #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"#)
      {
        found.append("\(place): \(member) is not an RFC 3339 UTC time or null")
      }
      if key == "due", !matches(member, #"^\d{4}-\d{2}-\d{2}$"#) { found.append("\(place): not YYYY-MM-DD or null") }
      found += breaks(member, at: place)
    }
    return found
  }

  /// The key lists of every object in compact JSON text whose keys are not
  /// sorted (JSONSerialization keeps no order, so the text is scanned).
  public static func unsortedObjects(_ bytes: [UInt8]) -> [[String]] {
    var open: [[String]?] = []  // nil for an array
    var unsorted = [[String]]()
    var index = 0
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "{"): open.append([])
      case UInt8(ascii: "["): open.append(nil)
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        if let keys = open.popLast() ?? nil, keys != keys.sorted() { unsorted.append(keys) }
      case UInt8(ascii: "\""):
        var end = index + 1
        while bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
        if end + 1 < bytes.count, bytes[end + 1] == UInt8(ascii: ":"), let last = open.indices.last, open[last] != nil {
          open[last]!.append(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))
        }
        index = end
      default: break
      }
      index += 1
    }
    return unsorted
  }
}
