import Foundation
import Testing

@testable import TaskKeyCLI
@testable import TaskKeyVectors

/// The deterministic generator of `Vectors/passphrase-bytes-v1.json`: how a
/// passphrase file becomes the bytes Argon2id reads, each outcome written by
/// hand from docs/formats/vault-file.md ("Passphrase bytes"). Fails when the
/// committed file drifts; `make vectors` rewrites it.
@Suite("Passphrase-bytes vectors")
struct PassphraseVectorGenerationTests {
  static func file() -> PassphraseVectorFile {
    var tests = [PassphraseVector]()
    func add(_ comment: String, _ input: [UInt8], _ kdfInput: [UInt8]? = nil, error: String? = nil) {
      tests.append(
        PassphraseVector(
          id: tests.count + 1, comment: comment, input: VectorVerdict.hex(input),
          result: error == nil ? "valid" : "invalid", kdfInput: kdfInput.map(VectorVerdict.hex), error: error))
    }
    func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
    let phrase = utf8("correct horse battery")
    add("one LF ends the line; it is not part of the passphrase", phrase + [0x0a], phrase)
    add("CR LF (a file written on another system) gives the same bytes", phrase + [0x0d, 0x0a], phrase)
    add("no line end at all", phrase, phrase)
    add("a CR at the end of input is a line end too", phrase + [0x0d], phrase)
    add("only the first line counts", phrase + [0x0a] + utf8("second line\n"), phrase)
    add("a CR inside the line is kept", utf8("pass\rword\n"), utf8("pass\rword"))
    add("two CRs before the LF: one is dropped, one kept", phrase + [0x0d, 0x0d, 0x0a], phrase + [0x0d])
    add("leading and trailing spaces and tabs are kept", utf8(" \tspaced out \n"), utf8(" \tspaced out "))
    add("case is kept (no folding)", utf8("Correct Horse\n"), utf8("Correct Horse"))
    add("é as U+00E9 (already NFC) is kept", [0x63, 0x61, 0x66, 0xc3, 0xa9, 0x0a], [0x63, 0x61, 0x66, 0xc3, 0xa9])
    add(
      "é as e and U+0301 (decomposed, as some keyboards type it) becomes U+00E9",
      [0x63, 0x61, 0x66, 0x65, 0xcc, 0x81, 0x0a], [0x63, 0x61, 0x66, 0xc3, 0xa9])
    add(
      "Hangul jamo U+1112 U+1161 U+11AB compose to U+D55C",
      [0xe1, 0x84, 0x92, 0xe1, 0x85, 0xa1, 0xe1, 0x86, 0xab, 0x0a], [0xed, 0x95, 0x9c])
    add("the Angstrom sign U+212B becomes U+00C5 (a canonical singleton)", [0xe2, 0x84, 0xab, 0x0a], [0xc3, 0x85])
    add("fullwidth A (U+FF21) is kept: no compatibility folding (NFKC)", [0xef, 0xbc, 0xa1, 0x0a], [0xef, 0xbc, 0xa1])
    add("the ligature U+FB01 is kept: no compatibility folding", [0xef, 0xac, 0x81, 0x0a], [0xef, 0xac, 0x81])
    add(
      "bytes that are not UTF-8 are used as they are", [0xff, 0xfe, 0x70, 0x61, 0x73, 0x73, 0x0a],
      [0xff, 0xfe, 0x70, 0x61, 0x73, 0x73])
    add(
      "not UTF-8 as a whole (a lone 0xff): the decomposed é is not normalised",
      [0x65, 0xcc, 0x81, 0xff, 0x0a], [0x65, 0xcc, 0x81, 0xff])
    add(
      "1024 bytes (the limit) and an LF", [UInt8](repeating: 0x61, count: 1024) + [0x0a],
      [UInt8](repeating: 0x61, count: 1024))
    add("an empty file", [], error: "empty_passphrase")
    add("an empty first line", [0x0a] + phrase, error: "empty_passphrase")
    add("CR LF alone", [0x0d, 0x0a], error: "empty_passphrase")
    add("1025 bytes", [UInt8](repeating: 0x61, count: 1025) + [0x0a], error: "passphrase_too_long")
    add(
      "U+0958 x 341 (1023 bytes) decomposes in NFC to 2046 bytes: over the limit",
      Array(repeating: [0xe0, 0xa5, 0x98], count: 341).flatMap { $0 } + [0x0a], error: "passphrase_too_long")
    // The limit counts the line without its line end (issue 22, item 14).
    let bytes = { (count: Int) in [UInt8](repeating: 0x61, count: count) }
    add("1024 bytes (the limit) and CR LF: the CR is part of the line end", bytes(1024) + [0x0d, 0x0a], bytes(1024))
    add("1024 bytes (the limit) and a CR at the end of input", bytes(1024) + [0x0d], bytes(1024))
    add("1023 bytes and an LF", bytes(1023) + [0x0a], bytes(1023))
    add("1023 bytes and CR LF", bytes(1023) + [0x0d, 0x0a], bytes(1023))
    add("1025 bytes and CR LF", bytes(1025) + [0x0d, 0x0a], error: "passphrase_too_long")
    add("1024 bytes, a kept CR and CR LF: 1025 bytes", bytes(1024) + [0x0d, 0x0d, 0x0a], error: "passphrase_too_long")
    return PassphraseVectorFile(
      description:
        "How a passphrase becomes the bytes Argon2id reads (docs/formats/vault-file.md, 'Passphrase bytes'), "
        + "for the vault, sync bundles and backups alike. Write 'input' to a 0600 file, read it as "
        + "--passphrase-file does (the first line, one CR before the LF or at the end dropped), then put valid "
        + "non-ASCII UTF-8 in NFC: valid cases give 'kdf_input', invalid ones 'error'.",
      tests: tests)
  }

  @Test func passphraseVectorsMatchTheCommittedFile() throws {
    try VectorGenerationTests().compare(Self.file(), name: "passphrase-bytes-v1.json")
  }

  @Test func everyCaseGivesItsOutcomeAndAChangedOutcomeFails() throws {
    let data = try JSONEncoder().encode(Self.file())
    var report = VectorReport(path: "passphrase-bytes-v1.json")
    try PassphraseVectorChecker.check(data, path: "passphrase-bytes-v1.json", readers: .taskkey, into: &report)
    #expect(report.failures.isEmpty, "\(report.failures)")
    #expect(report.passed == Self.file().tests.count)
    var broken = Self.file()
    broken.tests[1].kdfInput = broken.tests[1].kdfInput.map { $0 + "0d" }
    broken.tests[20].error = "passphrase_too_long"
    var brokenReport = VectorReport(path: "passphrase-bytes-v1.json")
    try PassphraseVectorChecker.check(
      try JSONEncoder().encode(broken), path: "x", readers: .taskkey, into: &brokenReport)
    #expect(brokenReport.failed == 2)
  }
}
