import Foundation
import Testing

@testable import TaskCrypto

/// Small secrets share locked regions (`SecretArena`): a released secret's
/// slots are wiped before they are handed out again, neighbours never
/// overlap, large buffers keep their own allocation, and threads can
/// allocate and release at once.
@Suite("Shared locked regions for small secrets")
struct SecretArenaTests {
  /// The address of a buffer's first byte (to tell where it lives).
  func address(_ bytes: SecureBytes) -> UnsafeRawPointer { bytes.withUnsafeBytes { $0.baseAddress! } }

  @Test func releasedSlotsAreWipedBeforeTheyAreHandedOutAgain() throws {
    var pattern: SecureBytes? = try SecureBytes(zeroedCount: 100)
    pattern!.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xa5) }
    let start = address(pattern!)
    #expect(SecretArena.holds(start))
    pattern = nil
    // Other tests run at once and may have been handed the slots since (nil).
    #expect(SecretArena.releasedSlotsAreZero(start, byteCount: 100) != false, "a released secret's bytes remain")
    // Whatever is handed out next is zero.
    for size in [1, 32, 64, 65, 100, 2048] {
      let next = try SecureBytes(zeroedCount: size)
      #expect(next.withUnsafeBytes { $0.allSatisfy { $0 == 0 } }, "\(size)")
    }
  }

  @Test func liveSecretsNeverOverlapAndLargeOnesLiveApart() throws {
    let sizes = [1, 31, 32, 33, 64, 65, 200, 1026, 2048, 5, 77]
    let secrets = try sizes.map { try SecureBytes(zeroedCount: $0) }
    for (index, secret) in secrets.enumerated() {
      secret.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: UInt8(index + 1)) }
    }
    for (index, secret) in secrets.enumerated() {
      #expect(secret.withUnsafeBytes { $0.allSatisfy { $0 == UInt8(index + 1) } }, "secret \(index) was overwritten")
    }
    let ranges = secrets.map { address($0)..<address($0) + $0.count }
    for first in ranges.indices {
      for second in ranges.indices where second > first {
        #expect(!ranges[first].overlaps(ranges[second]))
      }
    }
    let large = try SecureBytes(zeroedCount: SecretArena.largestRequest + 1)
    #expect(!SecretArena.holds(address(large)))
    #expect(large.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
  }

  @Test func threadsAllocateAndReleaseAtOnce() async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
      for task in 0..<8 {
        group.addTask {
          var intact = true
          for round in 0..<500 {
            let size = 1 + (task * 37 + round * 11) % 300
            let value = UInt8(truncatingIfNeeded: task * 31 + round)
            let secret = try SecureBytes(zeroedCount: size)
            secret.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: value) }
            intact = intact && secret.withUnsafeBytes { $0.allSatisfy { $0 == value } }
          }
          return intact
        }
      }
      for try await intact in group { #expect(intact) }
    }
  }
}
