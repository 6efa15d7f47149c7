import Foundation
import TaskKeyTestSupport
import Testing

/// The independent implementation's points (issue 13) that are outcomes of
/// the binary, checked through it.
@Suite("Auditors' points through the binary")
struct AuditorGapsTests {
  /// docs/formats/device-only-file.md: steps 1 to 5 of the device-only file
  /// run before the vault file's KDF, so a faulty device-only file is
  /// reported as such even with a wrong passphrase (as vault vectors 15-17).
  @Test func unlockChecksTheDeviceOnlyFileBeforeThePassphrase() throws {
    let vault = try CLIVault(unlock: false)
    #expect(try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]).status == 0)
    #expect(try vault.run(["item", "set", "provider/x", "--device-only"], text: "v").status == 0)
    #expect(try vault.run(["lock"]).status == 0)
    let wrong = vault.home.path("wrong")
    try writePrivate(wrong, "not the passphrase at all\n")
    let device = vault.directory + "/device-only/device.tkv"
    let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: device)))
    func unlock(withDeviceFile bytes: [UInt8]) throws -> Int32 {
      try Data(bytes).write(to: URL(fileURLWithPath: device))
      return try vault.run(["unlock", "--passphrase-file", wrong]).status
    }
    var badChecksum = original
    badChecksum[badChecksum.count - 1] ^= 0x01
    #expect(try unlock(withDeviceFile: badChecksum) == 15, "bad checksum, wrong passphrase")
    var version2 = original
    version2[9] = 2
    #expect(try unlock(withDeviceFile: version2) == 12, "version 2, wrong passphrase")
    #expect(try unlock(withDeviceFile: Array(original.prefix(40))) == 15, "truncated, wrong passphrase")
    let other = try CLIVault()
    #expect(try other.run(["item", "set", "provider/y", "--device-only"], text: "w").status == 0)
    let otherDevice = try [UInt8](Data(contentsOf: URL(fileURLWithPath: other.directory + "/device-only/device.tkv")))
    #expect(try unlock(withDeviceFile: otherDevice) == 15, "another vault's device-only file, wrong passphrase")
    #expect(try unlock(withDeviceFile: original) == 13, "a sound device-only file: the passphrase is wrong")
    #expect(try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]).status == 0)
  }
}
