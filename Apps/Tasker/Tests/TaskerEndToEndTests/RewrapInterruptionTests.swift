import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@Suite("tasker rewrap: killed at random points, every body opens, under the old key or the new, and a rerun finishes")
struct RewrapInterruptionTests {
  static let count = 5_000

  /// Checks that every stored note opens to its original text and is
  /// sealed under `old` or `new`.
  ///
  /// - Returns: how many are under `new`.
  func check(_ device: TestDevice, against original: [Int64: String], keyring: Keyring, new: KeyID) throws -> Int {
    let stored = try device.storedNotes()
    #expect(stored.count == original.count, "no row lost or added")
    var moved = 0
    for (id, text) in original {
      let now = try #require(stored[id])
      #expect(try SealedValue.open(now, using: keyring, context: "task/\(id)/notes") == text, "task \(id)")
      if try SealedValue.keyID(of: now) == new { moved += 1 }
    }
    return moved
  }

  @Test func killedAtRandomPointsThenResumed() throws {
    let device = try TestDevice()
    try device.fillPlain(count: Self.count)
    let original = try device.storedNotes()
    #expect(try device.tasker(["encrypt"]).status == 0)
    let sealedUnderOld = try device.storedNotes()
    let old = try device.vault().noteKeyring().primaryID
    #expect(try device.taskkey(["rotate"]).status == 0)
    let keyring = try device.vault().noteKeyring()
    let new = keyring.primaryID
    #expect(new != old)

    var generator = SystemRandomNumberGenerator()
    var delays = [Int]()
    var partial = 0
    var moved = 0
    // The window is found as in EncryptInterruptionTests: a kill before any
    // commit waits longer next time, a finished run is put back and the
    // next kill comes sooner.
    var latest = 40
    for _ in 0..<16 where partial < 3 {
      let delay = Int.random(in: (latest / 4)...latest, using: &generator)
      delays.append(delay)
      let running = try Binary.tasker.start(["rewrap", "--batch", "50"], environment: device.environment)
      usleep(useconds_t(delay * 1000))
      running.kill()
      _ = try running.finish()
      let now = try check(device, against: original, keyring: keyring, new: new)
      #expect(now >= moved, "a committed batch never goes back (delays \(delays))")
      if now > 0 && now < Self.count { partial += 1 }
      if now == moved { latest = min(latest * 2, 2_000) }
      if now == Self.count {
        try device.restoreNotes(sealedUnderOld)
        latest = max(latest / 2, 8)
        moved = 0
      } else {
        moved = now
      }
    }
    #expect(partial > 0, "no kill interrupted a run (delays \(delays) ms)")

    let finished = try #require(try device.tasker(["rewrap", "--batch", "50", "--json"]).json() as? [String: Any])
    #expect(finished["rewrapped"] as? Int == Self.count - moved)
    #expect(finished["current"] as? Int == moved)
    #expect(try check(device, against: original, keyring: keyring, new: new) == Self.count)
    #expect(try device.tasker(["keys", "--check", old.hex]).status == 0)
  }
}
