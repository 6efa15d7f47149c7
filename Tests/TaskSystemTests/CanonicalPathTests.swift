import Foundation
import Testing

@testable import TaskSystem

/// `FileStatus.canonicalPath`: one spelling per file, which Tasker uses to
/// name a database's protection record in the vault.
@Suite("Canonical paths: symlinks, '.' and '..' resolved; a missing path is an error")
struct CanonicalPathTests {
  @Test func everySpellingOfOneFileGivesOnePath() throws {
    let root = try FileStatus.canonicalPath(NSTemporaryDirectory()) + "/canonical-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: root + "/a", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(FileManager.default.createFile(atPath: root + "/a/t.db", contents: Data()))
    try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/a")
    let expected = root + "/a/t.db"
    for spelling in [expected, root + "/a/./t.db", root + "/a/../a/t.db", root + "/link/t.db", root + "//a/t.db"] {
      #expect(try FileStatus.canonicalPath(spelling) == expected, "\(spelling)")
    }
  }

  @Test func aMissingPathIsNotFound() {
    let error = #expect(throws: SystemError.self) {
      try FileStatus.canonicalPath("/nonexistent-\(UInt64.random(in: 0...UInt64.max))")
    }
    #expect(error?.isNotFound == true)
  }
}
