import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@Suite("tasker encrypt: killed at random points, every body ends plain or sealed")
struct EncryptInterruptionTests {
  static let count = 10_000

  /// Checks every stored note against the original: the same plain text,
  /// or sealed once under `task/<id>/notes` and opening to it.
  ///
  /// - Returns: how many are sealed.
  func check(_ device: TestDevice, against original: [Int64: String], keyring: Keyring) throws -> Int {
    let stored = try device.storedNotes()
    #expect(stored.count == original.count, "no row lost or added")
    var sealed = 0
    for (id, text) in original {
      let now = try #require(stored[id])
      if now == text { continue }
      #expect(SealedValue.isSealed(now), "task \(id) changed but is not sealed")
      let opened = try SealedValue.open(now, using: keyring, context: "task/\(id)/notes")
      #expect(opened == text, "task \(id) opens to something else (sealed twice?)")
      sealed += 1
    }
    return sealed
  }

  @Test func killedAtRandomPointsThenResumedThenIdempotent() throws {
    let device = try TestDevice()
    try device.fillPlain(count: Self.count)
    let original = try device.storedNotes()
    let keyring = try device.vault().noteKeyring()
    #expect(original.count == Self.count)
    #expect(original.values.allSatisfy { !SealedValue.isSealed($0) })

    var generator = SystemRandomNumberGenerator()
    var delays = [Int]()
    var partial = 0
    var sealed = 0
    // On a quiet machine a whole run takes well under 100 ms, so the kills
    // start early. A kill that came before any batch committed makes the next
    // one wait longer; a run that finished before its kill puts the plain
    // notes back and makes the next one come sooner. So the window is found
    // on fast and on loaded machines alike, and most kills land mid-run.
    var latest = 40
    for _ in 0..<16 where partial < 4 {
      let delay = Int.random(in: (latest / 4)...latest, using: &generator)
      delays.append(delay)
      let running = try Binary.tasker.start(["encrypt", "--batch", "50"], environment: device.environment)
      usleep(useconds_t(delay * 1000))
      running.kill()
      _ = try running.finish()
      let now = try check(device, against: original, keyring: keyring)
      #expect(now >= sealed, "a committed batch never goes back (delays \(delays))")
      if now > 0 && now < Self.count { partial += 1 }
      if now == sealed { latest = min(latest * 2, 2_000) }
      if now == Self.count {
        try device.restoreNotes(original)
        latest = max(latest / 2, 8)
        sealed = 0
      } else {
        sealed = now
      }
    }
    #expect(partial > 0, "no kill interrupted a run (delays \(delays) ms)")

    let finished = try device.tasker(["encrypt", "--batch", "50", "--json"])
    #expect(finished.status == 0, "\(finished.stderr)")
    let report = try #require(try finished.json() as? [String: Any])
    #expect(report["sealed"] as? Int == Self.count - sealed)
    #expect(try check(device, against: original, keyring: keyring) == Self.count)

    let before = try device.storedNotes()
    let again = try #require(try device.tasker(["encrypt", "--json"]).json() as? [String: Any])
    #expect(again["sealed"] as? Int == 0)
    #expect(again["already_sealed"] as? Int == Self.count)
    #expect(try device.storedNotes() == before, "a second run changes nothing")
  }
}
