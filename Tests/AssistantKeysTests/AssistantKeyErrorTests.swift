import Foundation
import TaskSystem
import TaskVault
import Testing

@testable import AssistantKeys

@Suite struct AssistantKeyErrorTests {
  static let id = AssistantKeyID("tkid_0123456789abcdef")!

  /// One value of every case (and of every nested reason).
  static let everyCase: [AssistantKeyError] = [
    .malformedKey(.wrongLength(3)), .malformedKey(.missingPrefix), .malformedKey(.invalidCharacter(offset: 9)),
    .malformedKey(.bodyOutOfRange), .badChecksum, .unknownKey, .revoked(id), .expired(id), .vaultLocked,
    .registryDamaged(.authenticationFailed), .registryDamaged(.malformed(line: 3, reason: "bad key line")),
    .registryDamaged(.unsupportedVersion("v2")), .registryDamaged(.tooLarge(byteCount: 20, limit: 10)),
    .registryDamaged(.unreadable(.wrongFileType(path: "/x", expected: "a regular file (it is a symlink)"))),
    .registryDamaged(.unreadable(.failed(call: "read", path: "/x", errno: 5))),
    .registryDamaged(.integrityKeyUnavailable(reason: "missing")), .invalidName("a b"), .invalidGrant("A"),
    .tooManyGrants(count: 17, limit: 16), .invalidDuration(seconds: 0, limit: 10), .nameInUse("a"),
    .noSuchAssistant("a"), .unknownID(id), .registryFull(limit: 10),
    .system(.failed(call: "rename", path: "/x", errno: 28)), .idCollision,
    .crypto(.resourceUnavailable("locked memory")), .vault(.notInitialised(path: "/x")),
  ]

  @Test func everyMessageIsOneLineWithoutKeyMaterial() throws {
    let scanner = try NSRegularExpression(pattern: AssistantKey.scannerPattern)
    for error in Self.everyCase {
      let text = error.description
      #expect(!text.isEmpty)
      #expect(!text.contains("\n"), "\(text)")
      #expect(scanner.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil)
    }
  }

  @Test func verifyOutcomesSayWhatToDoNext() {
    let advice = ["copy it again", "mint", "rotate", "unlock", "start over", "52 characters"]
    for error in Self.everyCase.prefix(10) {
      #expect(advice.contains { error.description.contains($0) }, "\(error.description)")
    }
  }
}
