import Testing

@testable import TaskCrypto

/// Full HKDF-SHA-512 (Extract, then the Expand TaskKey uses) against Python's
/// `cryptography` (HKDF(SHA512)), an independent implementation.
@Suite("HKDF-SHA-512 Extract and Expand")
struct HKDFExtractTests {
  func derive(ikm: [UInt8], salt: [UInt8], info: String, count: Int) throws -> String {
    try HKDFSHA512.deriveBytes(inputKeyMaterial: ikm, salt: salt, info: Array(info.utf8), outputByteCount: count)
      .withUnsafeBytes { Hex.encode(Array($0)) }
  }

  @Test func extractThenExpandMatchesAnIndependentImplementation() throws {
    #expect(
      try derive(ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0..<13), info: "TaskKey test", count: 100)
        == "7aea6511ffac29ffff32ba59e910d3b922972419343334bfaea7984cc35131171e0a540b33942fefaf112f18e28f3863"
        + "b6cdaccb697b522eb963643672da5229dbbe6b70412abc98e60bac4456dcafa802549fe14ea0a3b19a941a13ee67c5d2"
        + "2c3f3d38")
  }

  @Test func anEmptySaltIsSixtyFourZeroBytes() throws {
    let empty = try derive(ikm: [UInt8](repeating: 0x0b, count: 22), salt: [], info: "", count: 42)
    #expect(empty == "f5fa02b18298a72a8c23898a8703472c6eb179dc204c03425c970e3b164bf90fff22d04836d0e2343bac")
    #expect(
      empty
        == (try derive(
          ikm: [UInt8](repeating: 0x0b, count: 22), salt: [UInt8](repeating: 0, count: 64), info: "", count: 42)))
  }

  @Test func anOutputAboveTheLimitIsRefusedBeforeAnyWork() {
    #expect(throws: TaskCryptoError.tooLarge(byteCount: 255 * 64 + 1, limit: 255 * 64)) {
      try HKDFSHA512.deriveBytes(
        inputKeyMaterial: [UInt8](), salt: [UInt8](), info: [UInt8](), outputByteCount: 255 * 64 + 1)
    }
  }
}
