import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import TaskSystemTesting

@testable import AssistantKeys

/// A clock that tests move by hand.
final class TestClock: @unchecked Sendable {
  var now = Date(timeIntervalSince1970: 1_800_000_000)

  func advance(seconds: Int64) { now += TimeInterval(seconds) }
}

/// A throwaway registry directory with its integrity key and a test clock.
final class RegistryFixture {
  let home: TemporaryDirectory
  let key: SymmetricKey
  let clock = TestClock()
  let fileSystem = FaultInjectingFileSystem()
  /// Returns an errno to make a file-system step fail; nil lets it run.
  var fault: ((FileStep, String) -> Int32?)? {
    get { fileSystem.fault }
    set { fileSystem.fault = newValue }
  }

  init() throws {
    home = try TemporaryDirectory()
    key = try SymmetricKey.generate()
  }

  /// The registry's directory (created on the first change).
  var directory: String { home.path("device-only") }
  var registryPath: String { directory + "/assistant-keys.registry" }
  var lastUsedPath: String { directory + "/assistant-keys.last-used" }

  /// A new instance, as another process (or the same after a reboot) would open it.
  func open(key: SymmetricKey? = nil) throws -> AssistantKeyRegistry {
    let clock = self.clock
    return try AssistantKeyRegistry(
      directory: directory, integrityKey: key ?? self.key, anchor: nil, clock: { clock.now },
      fileSystem: fileSystem)
  }

  /// The registry file's bytes.
  func registryBytes() throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: registryPath)))
  }

  /// The registry file as text: version 2 is binary, so its non-ASCII
  /// bytes read as U+FFFD; the record bodies (key lines) read as written.
  func registryText() throws -> String {
    String(decoding: try registryBytes(), as: UTF8.self)
  }

  /// Replaces the version-2 file that the writes made by the version-1
  /// encoding of the same keys and generation, under the fixture's key:
  /// a registry as a build before version 2 left it.
  func downgradeToVersion1() throws {
    let contents = try RegistryReading.decode(try registryBytes(), key: key)
    try overwriteRegistry(RegistryFormat.encode(contents, key: key))
  }

  /// Replaces every `original` by `replacement` (same length, so the
  /// binary layout holds) in the registry's bytes.
  func editRegistry(replacing original: String, with replacement: String) throws {
    let bytes = try registryBytes()
    let (from, to) = (Array(original.utf8), Array(replacement.utf8))
    precondition(from.count == to.count)
    var edited = bytes
    var index = 0
    while index + from.count <= edited.count {
      if edited[index..<(index + from.count)].elementsEqual(from) {
        edited.replaceSubrange(index..<(index + from.count), with: to)
        index += from.count
      } else {
        index += 1
      }
    }
    precondition(edited != bytes, "'\(original)' is not in the registry")
    try overwriteRegistry(edited)
  }

  /// Overwrites the registry file in place, as an attacker with write access would.
  func overwriteRegistry(_ text: String) throws {
    try overwriteRegistry(Array(text.utf8))
  }

  func overwriteRegistry(_ bytes: [UInt8]) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: registryPath))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
  }
}

extension AssistantKey {
  /// The key string, for tests only: production code never makes one.
  var testString: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// Runs `body` and returns the AssistantKeyError it threw, or nil.
func assistantError(_ body: () throws -> Void) -> AssistantKeyError? {
  do {
    try body()
    return nil
  } catch let error as AssistantKeyError {
    return error
  } catch {
    return .crypto(.backendFailure(function: "unexpected error type \(type(of: error))"))
  }
}
