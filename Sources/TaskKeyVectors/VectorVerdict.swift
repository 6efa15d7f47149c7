import CommandKit
import FoundationEssentials
import TaskCrypto

/// The helpers every checker shares: one verdict rule for cases that expect
/// a value or a named error, one loop for cases that name a binary file, and
/// strict hex.
enum VectorVerdict {
  /// The verdict on one case that expects either a value (`result` is
  /// `valid`, or another success word such as `plain`) or the error named
  /// `expectedError` (`result` is `invalid`).
  ///
  /// - Parameters:
  ///   - name: how the case is named in a failure line.
  ///   - result: the case's `result`.
  ///   - expectedError: the case's `error`, for invalid cases.
  ///   - outcome: what this build did.
  ///   - code: the outcome name of an error, or nil when it has none.
  ///   - check: for a success, nil when the value is the expected one, else
  ///     what is wrong with it.
  /// - Returns: nil when the case passed, else one failure line.
  static func verdict<Value>(
    _ name: String, result: String, expectedError: String?, outcome: Result<Value, any Error>,
    code: (any Error) -> String? = { ($0 as? TaskCryptoError)?.code }, check: (Value) -> String?
  ) -> String? {
    switch (result, outcome) {
    case ("invalid", .success):
      return "\(name): expected \(expectedError ?? "?"), but it succeeded"
    case ("invalid", .failure(let error)):
      guard let got = code(error) else { return "\(name): expected \(expectedError ?? "?"), got \(error)" }
      return got == expectedError ? nil : "\(name): expected \(expectedError ?? "?"), got \(got)"
    case (_, .success(let value)):
      return check(value).map { "\(name): \($0)" }
    case (_, .failure(let error)):
      return "\(name): expected \(result == "valid" ? "success" : result), got \(error)"
    }
  }

  /// Runs cases that each name a file in `directory` (the vault and backup
  /// vectors): reads the file, asks `outcome` for the outcome word from the
  /// closed set, and records whether it is the case's `expect`.
  ///
  /// - Parameter outcome: opens the case's bytes; it may read further files
  ///   from `directory`, and throws `VectorCheckError.caseFileUnreadable`
  ///   when one is missing.
  static func checkFileCases<Case>(
    _ cases: [Case], in directory: URL, into report: inout VectorReport, id: (Case) -> Int,
    file: (Case) -> String, expect: (Case) -> String, outcome: (Case, [UInt8]) throws -> String
  ) {
    for test in cases {
      let name = file(test)
      guard let bytes = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
        report.record("case \(id(test)): cannot read \(name)")
        continue
      }
      do {
        let got = try outcome(test, [UInt8](bytes))
        report.record(got == expect(test) ? nil : "case \(id(test)) (\(name)): expected \(expect(test)), got \(got)")
      } catch {
        report.record("case \(id(test)): \(error)")
      }
    }
  }

  /// The directory of the binary files a vector file names in `files`,
  /// beside the JSON file at `path`.
  static func directory(_ files: String, besideFileAt path: String) -> URL {
    URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(files)
  }

  /// Runs `body` with a new, empty, owner-only (0700) directory for the
  /// cases that must be read from a file (key files, passphrase files),
  /// and removes it afterwards.
  static func withScratchDirectory<T>(_ label: String, _ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("taskkey-\(label)-vectors-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
  }

  /// Strict lowercase hex, or nil (TaskCrypto's one hex codec).
  static func hex(_ text: String) -> [UInt8]? {
    Hex.decode(text)
  }

  /// Lowercase hex of `bytes`.
  static func hex(_ bytes: [UInt8]) -> String {
    Hex.encode(bytes)
  }
}
