import CommandKit

/// One line of JSON lines, read by CommandKit's strict reader
/// (`JSONDocument`: one object, UTF-8, no repeated member name at any
/// depth, bounded depth), with the top-level members asked for and the byte
/// ranges of their values, so a new value can be put in place while every
/// other byte of the line stays as it came.
struct JSONLine {
  /// A top-level member's value.
  enum Member: Equatable {
    /// The object has no member of that name.
    case missing
    /// The member is `null`.
    case null
    /// The member is a string: its decoded value, and the byte range of the
    /// whole string token (quotes included) in the line.
    case string(String, token: Range<Int>)
    /// The member is a number, boolean, object or array.
    case other
  }

  /// Reads `line` and returns the members named `names`, in that order.
  ///
  /// - Throws: `JSONLine.Malformed` naming the defect.
  static func members(of line: UnsafeRawBufferPointer, named names: [String]) throws -> [Member] {
    // A line that does not open an object is named so before any parsing.
    let first = line.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0d && $0 != 0x0a }
    guard first == UInt8(ascii: "{") else { throw Malformed(reason: "not a JSON object") }
    let document: JSONDocument
    do {
      document = try JSONDocument(parsing: line)
    } catch let error as JSONError {
      throw Malformed(reason: error.reason)
    }
    guard case .object(let members) = document.value else { throw Malformed(reason: "not a JSON object") }
    return names.map { name in
      switch members[name] {
      case nil: return .missing
      case .null?: return .null
      case .string(let text)?: return .string(text, token: document.memberRanges[name]!)
      case .bool?, .integer?, .number?, .array?, .object?: return .other
      }
    }
  }

  /// Appends the JSON string token for `text` (CommandKit's one escaper).
  static func encode(_ text: String, into output: inout [UInt8]) {
    JSONValue.append(string: text, to: &output)
  }

  /// Why a line is not a JSON object this reader accepts.
  struct Malformed: Error, Equatable {
    /// What is wrong, without repeating the line.
    let reason: String
  }
}
