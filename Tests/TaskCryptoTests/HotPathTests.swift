import Foundation
import Testing

@testable import TaskCrypto

/// The fast paths must not trade safety for speed: nonces from the
/// per-thread buffer are unique across fork and threads, cached cipher
/// contexts are per key, safe under concurrency and freed on retire, and the
/// in-place text codec gives the same bytes as the plain one.
@Suite("Hot path safety")
struct HotPathTests {
  @Test func aForkedChildNeverReusesTheParentsBufferedNonceBytes() throws {
    var parent = [UInt8](repeating: 0, count: 256)
    var child = [UInt8](repeating: 0, count: 256)
    let status = parent.withUnsafeMutableBytes { parentBytes in
      child.withUnsafeMutableBytes { childBytes in
        SecureRandom.forkProbe(parent: parentBytes, child: childBytes)
      }
    }
    #expect(status)
    // Without fork safety the child would hand out exactly the bytes the
    // parent hands out next. 256 random bytes agree by chance with
    // probability 2^-2048.
    #expect(parent != child)
    #expect(parent != [UInt8](repeating: 0, count: 256))
    #expect(child != [UInt8](repeating: 0, count: 256))
  }

  @Test func nonceBytesAreWipedFromTheBufferAsTheyAreTaken() throws {
    var nonce = [UInt8](repeating: 0, count: 12)
    for _ in 0..<1000 {
      try nonce.withUnsafeMutableBytes { try SecureRandom.nonce(into: $0) }
    }
    #expect(SecureRandom.bufferedNonceByteCount > 0)
    #expect(SecureRandom.consumedNonceBytesAreWiped)
  }

  @Test func nonceBytesAreDistinctAcrossThreads() throws {
    let perThread = 2000
    let threads = 8
    let collected = NSLock()
    var all = Set<[UInt8]>()
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      var mine = [[UInt8]]()
      for _ in 0..<perThread { mine.append(try! SecureRandom.nonceBytes()) }
      collected.lock()
      all.formUnion(mine)
      collected.unlock()
    }
    #expect(all.count == threads * perThread)
  }

  @Test func oneKeySealsAndOpensFromManyThreadsAtOnce() throws {
    let keyring = try Keyring.generate()
    let failures = NSLock()
    var failed = 0
    var texts = Set<String>()
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      var local = [String]()
      for index in 0..<500 {
        let body = "thread \(thread) value \(index) " + String(repeating: "x", count: index % 300)
        let context = "note/\(thread)/\(index)"
        guard let sealed = try? SealedValue.seal(body, using: keyring, context: context),
          (try? SealedValue.open(sealed, using: keyring, context: context)) == body,
          (try? SealedValue.open(sealed, using: keyring, context: context + "x")) == nil
        else {
          failures.lock()
          failed += 1
          failures.unlock()
          continue
        }
        local.append(sealed)
      }
      failures.lock()
      texts.formUnion(local)
      failures.unlock()
    }
    #expect(failed == 0)
    #expect(texts.count == 8 * 500)
    #expect(keyring.primary.key.contexts.cachedCount <= 2 * CipherContexts.capacity)
  }

  @Test func retiringAKeyFreesItsCachedContextsAndTheKeyStillWorksUncached() throws {
    var keyring = try Keyring.generate()
    let old = keyring.primary
    let sealed = try SealedValue.seal("before rotation", using: keyring, context: "c")
    #expect(try SealedValue.open(sealed, using: keyring, context: "c") == "before rotation")
    #expect(old.key.contexts.cachedCount == 2)
    try keyring.rotate()
    try keyring.retire(old.id)
    #expect(old.key.contexts.cachedCount == 0)
    // A copy that still holds the key opens without caching a context again.
    let holder = Keyring(primary: old)
    #expect(try SealedValue.open(sealed, using: holder, context: "c") == "before rotation")
    #expect(old.key.contexts.cachedCount == 0)
  }

  @Test func aFailedOpenDoesNotPoisonTheCachedContext() throws {
    let keyring = try Keyring.generate()
    let sealed = try SealedValue.seal("value", using: keyring, context: "right")
    #expect(throws: TaskCryptoError.authenticationFailed) {
      try SealedValue.open(sealed, using: keyring, context: "wrong")
    }
    #expect(try SealedValue.open(sealed, using: keyring, context: "right") == "value")
  }

  @Test func inPlaceTextEncodingMatchesTheSeparateEncoderForEveryLength() throws {
    let keyring = try Keyring.generate()
    let key = keyring.primary
    let nonce = [UInt8](repeating: 7, count: 12)
    for length in 0..<200 {
      let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
      let text = try SealedValue.seal(bytes: plaintext, using: key, context: "ctx", nonce: nonce)
      let box = try AES.GCM.seal(
        plaintext, using: key.key, nonce: nonce, authenticating: Array("tc1.\(key.id.hex):ctx".utf8))
      #expect(text == "tc1.\(key.id.hex):" + Base64.encode(box.combined))
      #expect(try SealedValue.openBytes(text, using: keyring, context: "ctx") == plaintext)
    }
  }

  @Test func base64RoundTripsEveryLengthAndRefusesEveryBadCharacterPosition() throws {
    for length in 0..<100 {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
      let text = Base64.encode(bytes)
      #expect(Base64.decode(text) == bytes)
      var characters = Array(text.utf8)
      for position in characters.indices where characters[position] != UInt8(ascii: "=") {
        let saved = characters[position]
        characters[position] = UInt8(ascii: "-")
        #expect(Base64.decode(String(decoding: characters, as: UTF8.self)) == nil)
        characters[position] = saved
      }
    }
  }
}
