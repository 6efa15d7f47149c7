import Foundation

/// The committed files in `Vectors/` and the one drift rule every vector
/// generator's test follows: what the generator makes now must equal the
/// committed bytes; `make vectors` (`TASKKEY_WRITE_VECTORS=1`) writes them
/// first, so the diff can be reviewed.
public enum CommittedVectors {
  /// `Vectors/` of the repository.
  public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Vectors")

  /// JSON as every generator writes it: pretty-printed, sorted keys,
  /// unescaped slashes, one final newline.
  public static func json<T: Encodable>(_ value: T) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return [UInt8](try encoder.encode(value)) + [UInt8(ascii: "\n")]
  }

  /// Compares generated files with the committed ones, after writing them
  /// when `TASKKEY_WRITE_VECTORS=1`.
  ///
  /// - Parameter files: each file's path below `Vectors/` and its bytes.
  /// - Returns: the paths whose committed bytes differ or are missing,
  ///   sorted; empty when nothing drifted.
  public static func drifted(_ files: [String: [UInt8]]) throws -> [String] {
    if ProcessInfo.processInfo.environment["TASKKEY_WRITE_VECTORS"] == "1" {
      for (name, bytes) in files {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(
          at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
      }
    }
    return files.keys.sorted().filter { name in
      FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map { [UInt8]($0) }
        != files[name]
    }
  }

  /// `drifted(_:)` for one JSON file made by `json(_:)`.
  public static func drifted<T: Encodable>(json value: T, name: String) throws -> [String] {
    try drifted([name: try json(value)])
  }
}
