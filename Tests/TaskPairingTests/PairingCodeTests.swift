import Foundation
import TaskCrypto
import Testing

@testable import TaskPairing

/// The code: the word list is the one pairing.md names (by its SHA-256),
/// every reading rule holds, a typing mistake is caught before anything is
/// sent, and the password is the word numbers, never the spelling.
@Suite("Pairing code")
struct PairingCodeTests {
  @Test func theWordListIsTheOneTheFormatNames() {
    let text = PairingWords.all.joined(separator: " ")
    #expect(
      SHA256.hash(data: Array(text.utf8)).hex == "2d446cee9ce11910e4bcaf7ec518452dad08eb081963a3e9ff578113fd63f539")
    #expect(PairingWords.all.count == 1295)
    #expect(Set(PairingWords.all).count == 1295)
    #expect(PairingWords.all == PairingWords.all.sorted())
    #expect(PairingWords.all.allSatisfy { (3...5).contains($0.count) && $0.allSatisfy { ("a"..."z").contains($0) } })
  }

  @Test func aCodeReadsBackWhateverTheSpellingAndItsPasswordIsTheWordNumbers() throws {
    let code = PairingCode(indices: [0, 1, 1293, 1294])
    #expect(code.spoken == "acid acorn zone zoom")
    for typed in ["acid acorn zone zoom", "ACID-acorn\tzone  zoom\n", " Acid - Acorn - Zone - Zoom "] {
      #expect(try PairingCode(reading: typed) == code)
    }
    let password = try code.passwordBytes()
    password.withUnsafeBytes { #expect(Array($0) == [0, 0, 0, 1, 0x05, 0x0D, 0x05, 0x0E]) }
    #expect(!"\(code)".contains("acid"))
  }

  @Test(arguments: [
    ("acid acorn zone", "4 words; 3 were given"), ("acid acorn zone zoom acre", "5 were given"), ("", "0 were given"),
    ("acid acorn zone zoo", "'zoo' is not a word"), ("acid acorn zone zoomm", "did you mean 'zoom'?"),
    ("acid acorn zone yo-yo", "5 were given"), ("acid acorn zone zoöm", "'zom' is not a word"),
    ("acid acorn zone zo\u{1b}[2Jom", "'zo[2jom' is not a word"),
  ])
  func aCodeThatDoesNotReadIsRefusedSayingWhy(typed: String, expected: String) {
    #expect {
      try PairingCode(reading: typed)
    } throws: { error in
      guard case .codeNotRead(let reason) = error as? PairingError else { return false }
      return reason.contains(expected)
    }
  }

  @Test func freshCodesUseTheWholeListEvenly() {
    var counts = [Int](repeating: 0, count: PairingWords.all.count)
    for _ in 0..<5000 {
      for index in PairingCode.generate().indices { counts[Int(index)] += 1 }
    }
    // 20,000 draws over 1,295 words: about 15.4 each; every word below 50 and most seen.
    #expect(counts.allSatisfy { $0 < 50 })
    #expect(counts.filter { $0 == 0 }.count < 20)
    #expect(counts[1294] + counts[1293] + counts[0] > 0)
  }
}

extension PairingCodeTests {
  /// The word list an independent reader uses (Vectors/pairing-words-v1.txt)
  /// is the one this build speaks, word for word.
  @Test func theVectorsWordFileIsTheSameList() throws {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Vectors/pairing-words-v1.txt")
    let text = try String(contentsOf: file, encoding: .utf8)
    let words = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    #expect(words == PairingWords.all)
  }
}
