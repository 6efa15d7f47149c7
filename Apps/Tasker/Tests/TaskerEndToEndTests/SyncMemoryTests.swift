import Foundation
import TaskerTestSupport
import Testing

/// Sync reads the database a page at a time: a first sync, a fold and the
/// conflict listing of 3x10^4 tasks stay under the 64 MiB ceiling (a fold
/// that decoded every kept state at once took 101 MiB for 10^4 tasks).
@Suite("Memory: sync, its fold and the conflict listing read the database a page at a time")
struct SyncMemoryTests {
  @Test func aFirstSyncAFoldAndTheConflictListingStayUnder64MiB() throws {
    let folder = try TemporaryDirectory()
    let device = try TestDevice(passphrase: "device a")
    try device.fillPlain(count: 30_000, noteBytes: 1024)
    try device.syncSetUp(folder.path, name: "a")
    let memory = MemoryTests()
    var peaks: [String: Int] = [:]
    for arguments in [["sync", "now"], ["sync", "compact"], ["conflicts"]] {
      peaks[arguments.joined(separator: " ")] = try memory.peakKiB(device, arguments)
    }
    let report = "30,000 tasks with 1 KiB notes: peak RSS KiB \(peaks.sorted { $0.key < $1.key })"
    print(report)
    for (command, kib) in peaks { #expect(kib < MemoryTests.ceilingKiB, "\(command): \(report)") }
    // The fold ran and wrote every record again: its floor is past the first sync's objects.
    let floor = try device.sqlite("SELECT value FROM sync_values WHERE name = 'floor';").stdoutText
    let objects = try device.sqlite("SELECT value FROM sync_values WHERE name = 'next_seq';").stdoutText
    let (folded, next) = (
      Int(floor.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0,
      Int(objects.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    )
    #expect(folded > 30 && next > folded + 30, "floor \(floor), next_seq \(objects)")
  }
}
