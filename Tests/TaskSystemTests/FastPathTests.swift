import Foundation
import Glibc
import TaskKeyTestSupport
import Testing

@testable import TaskSystem

/// The start-up fast paths of issue 14 give the same answers as before:
/// the tmpfs check asks the kernel (`statfs`), and a whole-file read sized
/// by `fstat` still reads a file that grew or shrank.
@Suite("TaskSystem fast paths")
struct FastPathTests {
  @Test func tmpfsIsToldFromOtherFileSystemsByTheKernel() throws {
    // procfs and a missing path are never a tmpfs.
    #expect(!RuntimeDirectory.isTmpfs("/proc"))
    #expect(!RuntimeDirectory.isTmpfs("/nonexistent-\(getpid())"))
    // A fresh tmpfs mount is one (when the test may mount: as root).
    let base = try TemporaryDirectory()
    if mount("tmpfs", base.url.path, "tmpfs", 0, "size=1m") == 0 {
      defer { umount(base.url.path) }
      #expect(RuntimeDirectory.isTmpfs(base.url.path))
      #expect(RuntimeDirectory.isTmpfs(base.path("inside")) == false)  // missing: statfs fails
    }
  }

  @Test func aWholeFileReadGetsEveryByteWhateverSizeWasExpected() throws {
    let base = try TemporaryDirectory()
    let path = base.path("file")
    let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    for expected in [0, 1, 65_536, 199_999, 200_000, 200_001, 1 << 20] {
      let file = try OpenFile.reading(path)
      #expect(try file.descriptor.readToEnd(limit: 1 << 20, expected: expected) == bytes)
    }
    let file = try OpenFile.reading(path)
    #expect(throws: SystemError.self) { try file.descriptor.readToEnd(limit: 100_000, expected: 100_000) }
    #expect(try OpenFile.reading(path).readAll(limit: 1 << 20) == bytes)
  }
}
