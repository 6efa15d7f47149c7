import Foundation
import TaskKeyTestSupport
import Testing

/// Many `taskkey` processes on one registry at once: verifies that record
/// their use in place while mints and a revoke rebuild the files. The
/// registry's lock must keep every file whole and every use recorded.
@Suite("assistant keys: concurrent processes, end to end")
struct AssistantConcurrencyTests {
  struct Minted {
    let key: String
    let id: String
  }

  func mint(_ vault: CLIVault, name: String) throws -> Minted {
    let result = try vault.run(["mint", "--json", "--name", name])
    #expect(result.status == 0, "\(result.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    return Minted(key: try #require(object["key"] as? String), id: try #require(object["id"] as? String))
  }

  @Test func verifiesInParallelWithMintsAndARevokeKeepEveryFileWholeAndEveryUseRecorded() throws {
    let vault = try CLIVault()
    let keys = try (0..<6).map { try mint(vault, name: "agent-\($0)") }
    let doomed = try mint(vault, name: "doomed")
    let lock = NSLock()
    nonisolated(unsafe) var statuses = Array(repeating: [Int32](), count: keys.count + 1)
    // Six processes verify their key three times each while a seventh
    // lane mints two keys and revokes one: every write takes the lock
    // and rebuilds the last-used file, every verify writes one slot.
    DispatchQueue.concurrentPerform(iterations: keys.count + 1) { lane in
      for round in 0..<3 {
        let result: ProcessResult?
        if lane < keys.count {
          result = try? vault.run(["verify"], text: keys[lane].key)
        } else if round < 2 {
          result = try? vault.run(["mint", "--name", "late-\(round)"])
        } else {
          result = try? vault.run(["revoke", doomed.id])
        }
        lock.withLock { statuses[lane].append(result?.status ?? -1) }
      }
    }
    let seen = lock.withLock { statuses }
    for (lane, codes) in seen.enumerated() {
      #expect(codes == [0, 0, 0], "lane \(lane): exit codes \(codes)")
    }

    let listed = try vault.run(["list", "--json"])
    #expect(listed.status == 0, "\(listed.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [String: Any])
    let entries = try #require(object["keys"] as? [[String: Any]])
    #expect(entries.count == keys.count + 3, "six, the doomed one and two late ones")
    for key in keys {
      let entry = try #require(entries.first { $0["id"] as? String == key.id })
      #expect(entry["last_used"] is String, "\(key.id) was verified but its use was not recorded: \(entry)")
    }
    let revoked = try #require(entries.first { $0["id"] as? String == doomed.id })
    #expect(revoked["status"] as? String == "revoked")
    #expect(try vault.run(["verify"], text: doomed.key).status != 0)
    for key in keys { #expect(try vault.run(["verify"], text: key.key).status == 0) }
  }
}
