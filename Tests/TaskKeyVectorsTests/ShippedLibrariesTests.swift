import Foundation
import TaskKeyTestSupport
import XCTest

/// Test-only code stays out of the shipped libraries (issue 21, item 6):
/// no vector checker, no decoder for vectors, no benchmark SPI, and no
/// test seam in the public API of any library product (TaskSystem,
/// TaskCrypto, TaskVault, AssistantKeys, BackupRules, TaskAttachments,
/// CommandKit, ExitCodeMap). The checkers live in
/// `Sources/TaskKeyVectors`; a library reaches them only through
/// documented `package` seams (ARCHITECTURE.md, "Package seams").
final class ShippedLibrariesTests: XCTestCase {
  /// Every library product of the package.
  static let libraries = [
    "TaskSystem", "TaskCrypto", "TaskVault", "AssistantKeys", "BackupRules", "TaskAttachments", "CommandKit",
    "ExitCodeMap",
  ]

  /// `Sources/` of the repository.
  static let sources = CommittedVectors.directory.deletingLastPathComponent().appendingPathComponent("Sources")

  /// The one public seam allowed: TaskSystem's fault-injecting file system,
  /// which the Tasker app's own tests use across the package boundary
  /// (`package` would hide it from them).
  static let allowedPublicSeams: Set<String> = []

  /// The Swift files of `library`, as paths below its directory.
  static func swiftFiles(_ library: String) throws -> [String] {
    try FileManager.default.subpathsOfDirectory(atPath: sources.appendingPathComponent(library).path)
      .filter { $0.hasSuffix(".swift") }.sorted()
  }

  /// Each library's Swift files as (path below Sources/, lines).
  func sourceFiles() throws -> [(String, [Substring])] {
    try Self.libraries.flatMap { library in
      let directory = Self.sources.appendingPathComponent(library)
      let names = try Self.swiftFiles(library)
      XCTAssertFalse(names.isEmpty, "no sources found for \(library)")
      return try names.sorted().map { name in
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        return ("\(library)/\(name)", text.split(separator: "\n", omittingEmptySubsequences: false))
      }
    }
  }

  /// A declaration's name, when `line` declares one (after attributes and
  /// modifiers), else nil.
  static func declaredName(_ line: Substring) -> (keyword: String, name: String)? {
    let words = line.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ":" || $0 == "<" || $0 == "{" })
    let keywords: Set<Substring> = [
      "enum", "struct", "class", "protocol", "extension", "func", "typealias", "var", "let",
    ]
    guard let index = words.firstIndex(where: { keywords.contains($0) }), index + 1 < words.count else { return nil }
    let modifiers = words[..<index]
    let allowed: Set<Substring> = [
      "public", "package", "internal", "private", "fileprivate", "final", "static", "mutating", "convenience",
      "override", "nonisolated", "@inlinable", "@inline(__always)", "@usableFromInline", "indirect",
    ]
    guard modifiers.allSatisfy({ allowed.contains($0) || $0.hasPrefix("@") }) else { return nil }
    return (String(words[index]), String(words[index + 1]))
  }

  func testNoCheckerDecoderOrBenchmarkSPIInTheLibrarySources() throws {
    var found = [String]()
    for (path, lines) in try sourceFiles() {
      for (number, line) in lines.enumerated() {
        let trimmed = line.drop { $0 == " " }
        if trimmed.hasPrefix("//") { continue }
        if trimmed.contains("@_spi(") { found.append("\(path):\(number + 1): an SPI: \(trimmed)") }
        if trimmed.hasPrefix("import CZlib") { found.append("\(path):\(number + 1): imports zlib") }
        if let (keyword, name) = Self.declaredName(trimmed), name.contains("Vector") || name.contains("Inflate") {
          found.append("\(path):\(number + 1): declares \(keyword) \(name)")
        }
      }
    }
    XCTAssertEqual(found, [])
  }

  func testNoTestSeamIsPublicAndEveryPackageSeamIsDocumented() throws {
    var found = [String]()
    for (path, lines) in try sourceFiles() {
      for (number, line) in lines.enumerated() {
        let trimmed = line.drop { $0 == " " }
        guard let (_, name) = Self.declaredName(trimmed) else { continue }
        var doc = [Substring]()
        var above = number - 1
        while above >= 0, lines[above].drop(while: { $0 == " " }).hasPrefix("///") {
          doc.append(lines[above])
          above -= 1
        }
        let docText = doc.joined(separator: " ").lowercased()
        if trimmed.hasPrefix("public "),
          docText.contains("test seam") || docText.contains("benchmark fixture") || docText.contains("for tests only"),
          !Self.allowedPublicSeams.contains("\(path): \(name)")
        {
          found.append("\(path):\(number + 1): public test seam \(name)")
        }
        if trimmed.hasPrefix("package "), doc.isEmpty {
          found.append("\(path):\(number + 1): package seam \(name) without a doc comment")
        }
      }
    }
    XCTAssertEqual(found, [])
  }

  /// The same, on what the compiler built: no defined symbol of a library
  /// names a vector checker or a DEFLATE decoder, and no library object
  /// refers to zlib. SwiftPM puts `<Target>.build/<file name>.swift.o`
  /// beside the test bundle; only the objects of today's sources are read
  /// (a build directory keeps the objects of files since removed).
  func testNoCheckerOrZlibSymbolInTheLibraryObjects() throws {
    let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    var found = [String]()
    for library in Self.libraries {
      let directory = products.appendingPathComponent("\(library).build")
      let objects = try Self.swiftFiles(library).map {
        directory.appendingPathComponent(URL(fileURLWithPath: $0).lastPathComponent + ".o").path
      }
      let missing = objects.filter { !FileManager.default.fileExists(atPath: $0) }
      XCTAssertEqual(missing, [], "objects not built")
      let symbols = try Self.nm(objects)
      for line in symbols.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard let symbol = fields.last, fields.count >= 2 else { continue }
        let kind = fields[fields.count - 2]
        let checker = ["Vectors", "VectorCheck", "Inflate"].contains { symbol.contains($0) }
        let zlib = kind == "U" && ["inflate", "inflateInit_", "inflateEnd", "zlibVersion"].contains(String(symbol))
        if (kind != "U" && checker) || zlib { found.append("\(library): \(line)") }
      }
    }
    XCTAssertEqual(found, [])
  }

  /// `nm`'s listing of `objects`.
  static func nm(_ objects: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
    process.arguments = ["--no-sort"] + objects
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0, "nm failed")
    return String(decoding: data, as: UTF8.self)
  }
}
